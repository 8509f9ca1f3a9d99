"""Files that configure or record nbagent, which a tool never writes without asking (except in ``bypass``).

Why: a write to one of them is not an "edit" of the user's project but a change to nbagent itself.
``.mcp.json`` starts commands in the next session (with the user's environment); ``AGENTS.md`` and
``.nbagent/`` enter the next system prompt; the task folder is the session's record (history,
costs, the budget); the kernel's config (IPython profile and startup files, Jupyter config,
kernelspecs) runs code in the user's kernel at its next start; ``.git/`` (config, hooks) runs
commands at the user's next git command. Beyond these names, only an ordinary file of the project
is an "edit" (:func:`_place_reason`): a hidden file or folder (``~/.gitconfig``, ``.githooks/``), a
Python environment (``bin/``, ``share/jupyter/`` with the JavaScript JupyterLab loads), Jupyter's
folders, an executable file and a notebook (``.ipynb``: its cells are edited through the live
document, with undo and the cell guard) all act later or behind the user's back. So ``accept_edits``, the ``allow``
list, an "Allow always" answer and a ``pre_tool_use`` hook's Allow do not cover writes to them: the
user is asked every time, with the reason (:func:`protected_reason`); with no one to ask the
write is denied. Only ``permission_mode="bypass"`` writes them without asking.

This module is also the one place a tool's path argument is resolved (:func:`resolve_tool_path`):
the permission check, the hooks and the tool all see the same resolved path.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Iterable, Mapping

MCP_CONFIG = ".mcp.json"
RULES_FILES = ("AGENTS.md",)
"""The rules files nbagent reads from the working directory (``prompt.read_rules``)."""
NBAGENT_DIR = ".nbagent"
"""Rules (``.nbagent/rules/*.md``) and any later configuration of nbagent in a project."""
IGNORE_FILE = ".nbagentignore"
GIT_DIR = ".git"
"""A repository's own folder (config, hooks): what is written there runs at the next git command."""

# By name, wherever they are: a sub-folder of cwd becomes the working directory of a later Agent,
# and Jupyter/IPython read these from the directory they start in.
_PROTECTED_NAMES = {
    MCP_CONFIG: "configures nbagent's MCP servers (commands it starts)",
    IGNORE_FILE: "configures nbagent",
    **{name: "holds rules nbagent sends in its system prompt" for name in RULES_FILES},
    "ipython_config.py": "configures the IPython kernel",
    "ipython_kernel_config.py": "configures the IPython kernel",
}
_JUPYTER_CONFIG = re.compile(r"^jupyter(_\w+)?_config\.(py|json)$")
# Files that run code when a shell, Python or a login starts, or that hold trust (issue 33): what
# they have in common is that writing them acts later, outside this session and its prompts.
_STARTUP_NAMES = {
    **{name: "runs code when a shell starts" for name in (
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
        ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc", ".mkshrc", ".inputrc", ".envrc")},
    "sitecustomize.py": "runs code when Python starts",
    "usercustomize.py": "runs code when Python starts",
}
def name_key(name: str) -> str:
    """A path component as a case-insensitive file system finds it: Unicode case folding (``ſ`` is
    ``s`` on APFS and NTFS), and without what Windows drops or reads as a stream of the file:
    trailing dots and spaces (``AGENTS.md.`` opens ``AGENTS.md``) and ``:stream`` (``AGENTS.md::$DATA``
    is its content). Over-cautious elsewhere, never less cautious."""
    if name in (".", ".."):
        return name
    return name.split(":", 1)[0].rstrip(". ").casefold()


_PROTECTED_LOWER = {name_key(name): why for name, why in {**_PROTECTED_NAMES, **_STARTUP_NAMES}.items()}


def resolve_tool_path(raw: str, cwd: Path) -> Path:
    """The absolute real path of a tool's path argument: ``~`` expanded, relative to ``cwd``,
    ``..`` and symlinks resolved. Raises ``ValueError`` (NUL) or ``OSError``/``RuntimeError``."""
    if "\x00" in raw:
        raise ValueError(f"Path {raw!r} contains a NUL character.")
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = Path(cwd) / path
    return path.resolve()


def lexical_path(raw: str, cwd: Path) -> Path:
    """The path as written (``~`` and ``..`` applied, symlinks not followed): a write through a
    symlink named ``AGENTS.md`` changes what nbagent reads as ``AGENTS.md``."""
    return Path(os.path.normpath(os.path.join(Path(cwd).absolute(), os.path.expanduser(raw))))


def _jupyter_roots() -> list[tuple[str, str]]:
    """Every folder ``jupyter --paths`` lists: config, data (kernelspecs, the extensions JupyterLab
    loads into the page with the server token in reach, nbextensions) and runtime (secrets)."""
    try:
        from jupyter_core import paths
    except ImportError:  # an environment without Jupyter: the folders below, found by hand, remain
        return []
    return [*((p, "is Jupyter's config") for p in paths.jupyter_config_path()),
            *((p, "is a Jupyter data folder (kernelspecs, extensions the page loads)") for p in paths.jupyter_path()),
            (paths.jupyter_runtime_dir(), "is Jupyter's runtime folder (server tokens, kernel keys)")]


def kernel_config_roots() -> list[tuple[Path, str]]:
    """Folders whose files configure the kernel, Jupyter or the user's session (IPython profiles and
    startup, every folder ``jupyter --paths`` lists, kernelspecs, site-packages, ``~/.ssh``, the
    user's application config), from the same environment variables Jupyter and IPython use."""
    home = Path.home()
    data = os.environ.get("JUPYTER_DATA_DIR") or (
        str(home / "Library" / "Jupyter") if sys.platform == "darwin"
        else os.path.join(os.environ.get("XDG_DATA_HOME") or str(home / ".local" / "share"), "jupyter"))
    import site

    sites = [*site.getsitepackages(), site.getusersitepackages()] if hasattr(site, "getsitepackages") else []
    roots = [
        (str(home / ".ssh"), "holds SSH keys and who may log in"),
        (str(home / NBAGENT_DIR), "configures nbagent for you (endpoints, trusted hosts)"),
        (str(home / ".config" / "fish"), "runs code when a shell starts"),
        (data, "is Jupyter's data (kernelspecs, runtime secrets, nbagent's signing key)"),
        *(((key, "is nbagent's signing key"),) if (key := os.environ.get("NBAGENT_REPLAY_KEY_FILE")) else ()),
        *((p, "is Python's site-packages (its .pth files run code when Python starts)") for p in sites),
        (os.environ.get("IPYTHONDIR") or str(home / ".ipython"), "is IPython's config (profiles, startup files)"),
        (os.environ.get("JUPYTER_CONFIG_DIR") or str(home / ".jupyter"), "is Jupyter's config"),
        (os.path.join(data, "kernels"), "holds kernelspecs (how kernels start)"),
        (os.path.join(sys.prefix, "share", "jupyter", "kernels"), "holds kernelspecs (how kernels start)"),
        (os.path.join(sys.prefix, "etc", "jupyter"), "is Jupyter's config"),
        (os.path.join(sys.prefix, "etc", "ipython"), "is IPython's config"),
        *_jupyter_roots(),
        # The user's configuration outside dot-folders: macOS (not all of ~/Library: iCloud Drive
        # projects live in it), Windows, a moved XDG folder.
        *((str(home / "Library" / name), "holds your applications' configuration")
          for name in ("LaunchAgents", "Preferences", "Application Support")),
        (str(home / "AppData"), "holds your applications' configuration"),
        *((xdg, "holds your applications' configuration")
          for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME") if (xdg := os.environ.get(var))),
    ]
    return [(Path(p).expanduser().resolve(), why) for p, why in roots]


def _under(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def _reason_for(path: Path, task_dir: Path | None, roots: Iterable[tuple[Path, str]]) -> str | None:
    name = name_key(path.name)  # case-insensitive file systems (macOS, Windows) open AGENTS.md as agents.md,
    # and AGENTſ.md too: they fold case as Unicode does (ſ is s, the Kelvin sign K is k), which .lower() does not
    why = _PROTECTED_LOWER.get(name)
    if why is None and _JUPYTER_CONFIG.match(name):
        why = "configures Jupyter"
    if why is None and name.endswith(".pth"):
        why = "is a .pth file (Python runs its import lines at every start)"
    if why is None and name.endswith(".ipynb"):
        # The open notebook's cells change through notebook_edit (undo, the cell guard); its file
        # is what JupyterLab loads next (reopen, revert, nbconvert), whoever wrote it.
        why = ("is a notebook file: writing it replaces cells without JupyterLab's undo or the cell guard "
               "(notebook_edit keeps both)")
    if why is not None:
        return f"`{path.name}` {why}"
    parts = [name_key(part) for part in path.parts]
    if NBAGENT_DIR in parts:
        return f"`{path}` is inside `{NBAGENT_DIR}/`, which configures nbagent"
    if GIT_DIR in parts:  # core.fsmonitor, core.pager, hooks/*: run by the user's next git command
        return f"`{path}` is inside `{GIT_DIR}/`, whose config and hooks run commands when git runs"
    if task_dir is not None and _under(path, task_dir):
        return f"`{path}` is inside this session's task folder, which records the session"
    for root, root_why in roots:
        if _under(path, root):
            return f"`{path}` is inside `{root}`, which {root_why}"
    return None


def _hidden_part(path: Path, cwd: Path) -> str | None:
    """The first dot-name of ``path`` below cwd (else below home, else from the root)."""
    home = Path.home()
    base = next((b for b in (cwd, home, home.resolve()) if _under(path, b)), None)
    rel = path.relative_to(base).parts if base is not None else path.parts[1:]
    return next((part for part in rel if part.startswith(".") and part not in (".", "..")), None)


def _environment(path: Path, cwd: Path) -> Path | None:
    """The Python environment ``path`` is in: the running one, or a folder with ``pyvenv.cfg`` or
    ``conda-meta/`` (a project's ``.venv``, ``conda create -p ./env``). An environment that holds
    cwd itself counts only by its own folders (``bin``, ``lib``, ``share``, ...)."""
    prefixes = dict.fromkeys(Path(p).resolve() for p in (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix))
    for root in prefixes:
        if _under(path, root) and (not _under(cwd, root) or _in_env_folder(path, root)):
            return root
    for parent in path.parents:
        if _under(cwd, parent):
            break
        if (parent / "pyvenv.cfg").is_file() or (parent / "conda-meta").is_dir():
            return parent
    return None


_ENV_FOLDERS = {"bin", "scripts", "lib", "lib64", "share", "etc", "include", "libexec", "conda-meta"}


def _in_env_folder(path: Path, root: Path) -> bool:
    rel = path.relative_to(root).parts
    return bool(rel) and name_key(rel[0]) in _ENV_FOLDERS


def _executable(path: Path) -> bool:
    try:
        return path.is_file() and bool(path.stat().st_mode & 0o111)
    except OSError:
        return False


def _place_reason(path: Path, cwd: Path) -> str | None:
    """Why ``path`` is not an ordinary file of the project, by where it is or what it is (None: it is).

    A name list cannot be complete (``~/.bash_aliases``, ``core.hooksPath=.githooks``, systemd
    units, a labextension's JavaScript), so the rule is by kind: dot-files configure tools that act
    later, an environment's files run when Python or Jupyter starts, an executable runs when called.
    """
    hidden = _hidden_part(path, cwd)
    if hidden is not None:
        where = "is a dot-file" if hidden == path.name else f"is inside the hidden folder `{hidden}/`"
        return f"`{path}` {where}, and dot-files configure tools that act later (git, shells, editors)"
    env = _environment(path, cwd)
    if env is not None:
        return f"`{path}` is inside the Python environment `{env}`, whose files run when Python or Jupyter starts"
    if _executable(path):
        return f"`{path}` is executable: it runs when something calls it (a git hook, a script)"
    return None


def protected_reason(raw: object, cwd: Path | None, task_dir: Path | None = None) -> str | None:
    """Why writing the tool path ``raw`` always asks (None: it is an ordinary file of the project).

    Both the path as written and its real path are checked, so neither ``sub/../AGENTS.md``,
    ``~/.ipython/...`` nor a symlink to (or named as) a protected file gets past.
    """
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        return None
    base = cwd if cwd is not None else Path.cwd()
    try:
        # Each with cwd as it was resolved: a symlinked cwd (macOS /tmp) must not hide a dot-folder.
        candidates = [(resolve_tool_path(raw, base), base.resolve()), (lexical_path(raw, base), Path(base).absolute())]
        task = Path(task_dir).expanduser().resolve() if task_dir is not None else None
    except (OSError, RuntimeError, ValueError):
        return f"`{raw}` cannot be resolved, so it cannot be shown not to configure nbagent"
    roots = kernel_config_roots()
    for path, where in candidates:
        try:
            why = _reason_for(path, task, roots) or _place_reason(path, where)
        except (OSError, ValueError):  # a name too long for the system: the write fails anyway, and asks first
            return f"`{raw[:80]}…` cannot be checked ({path.name[:40]}…): writes to it always ask"
        if why is not None:
            return f"{why}: writes to it always ask"
    return None


def written_path(tool: object, tool_input: Mapping[str, object] | None) -> object:
    """The ``path`` a tool that may write would write (None for a read-only tool or no path)."""
    if getattr(tool, "read_only", False) or not isinstance(tool_input, Mapping):
        return None
    return tool_input.get("path")


_WRITE_ARGUMENT = re.compile(r"(?i)(?:.*_)?(?:path|paths|file|files|filename|filenames|filepath|filepaths"
                             r"|destination|dest|target)")
"""The arguments that name what a tool that may write writes: ``path``, and an MCP server's own
names (the filesystem server's ``move_file(source, destination)``, ``file_path``, ``target``). Not
``source``: notebook_edit's is a cell's text."""
MAX_WRITTEN_CHECKED = 64


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def argument_paths(tool_input: Mapping[str, object], argument: re.Pattern[str]) -> list[object]:
    """The values of ``tool_input``'s arguments whose names ``argument`` matches, in snake case
    (a JavaScript server's ``destinationPath`` is ``destination_path``): lists taken item by item,
    and one level into objects (``files=[{"path": …}]``)."""
    paths: list[object] = []
    for key, value in tool_input.items():
        named = isinstance(key, str) and argument.fullmatch(_CAMEL.sub("_", key)) is not None
        for item in value[:MAX_WRITTEN_CHECKED + 1] if isinstance(value, list) else [value]:
            if isinstance(item, Mapping):  # one level only: its own lists and objects are not followed
                paths += argument_paths({k: v for k, v in item.items() if not isinstance(v, (list, Mapping))},
                                        argument)
            elif named:
                paths.append(item)
    return paths


def written_paths(tool: object, tool_input: Mapping[str, object] | None) -> list[object] | None:
    """Every path a tool that may write is given under :data:`_WRITE_ARGUMENT` (see
    :func:`argument_paths`); None when there are more than :data:`MAX_WRITTEN_CHECKED` (too many
    to check: the call asks)."""
    if getattr(tool, "read_only", False) or not isinstance(tool_input, Mapping):
        return []
    paths = argument_paths(tool_input, _WRITE_ARGUMENT)
    return paths if len(paths) <= MAX_WRITTEN_CHECKED else None


__all__ = ["MCP_CONFIG", "RULES_FILES", "NBAGENT_DIR", "IGNORE_FILE", "argument_paths",
           "resolve_tool_path", "lexical_path", "protected_reason",
           "kernel_config_roots", "name_key", "written_path", "written_paths"]
