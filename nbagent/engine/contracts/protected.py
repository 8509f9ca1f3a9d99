"""Files that configure or record nbagent, which a tool never writes without asking (except in ``bypass``).

Why: a write to one of them is not an "edit" of the user's project but a change to nbagent itself.
``.mcp.json`` starts commands in the next session (with the user's environment); ``AGENTS.md`` and
``.nbagent/`` enter the next system prompt; the task folder is the session's record (history,
costs, the budget); the kernel's config (IPython profile and startup files, Jupyter config,
kernelspecs) runs code in the user's kernel at its next start; ``.git/`` (config, hooks) runs
commands at the user's next git command. So ``accept_edits``, the ``allow``
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
_PROTECTED_LOWER = {name.lower(): why for name, why in {**_PROTECTED_NAMES, **_STARTUP_NAMES}.items()}


def resolve_tool_path(raw: str, cwd: Path) -> Path:
    """The absolute real path of a tool's path argument: ``~`` expanded, relative to ``cwd``,
    ``..`` and symlinks resolved. Raises ``ValueError`` (NUL) or ``OSError``/``RuntimeError``."""
    if "\x00" in raw:
        raise ValueError(f"Path {raw!r} contains a NUL character.")
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = Path(cwd) / path
    return path.resolve()


def _lexical(raw: str, cwd: Path) -> Path:
    """The path as written (``~`` and ``..`` applied, symlinks not followed): a write through a
    symlink named ``AGENTS.md`` changes what nbagent reads as ``AGENTS.md``."""
    return Path(os.path.normpath(os.path.join(Path(cwd).absolute(), os.path.expanduser(raw))))


def kernel_config_roots() -> list[tuple[Path, str]]:
    """Folders whose files configure the kernel (IPython profiles and startup, Jupyter config,
    kernelspecs), from the same environment variables Jupyter and IPython use."""
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
    ]
    return [(Path(p).expanduser().resolve(), why) for p, why in roots]


def _under(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def _reason_for(path: Path, task_dir: Path | None, roots: Iterable[tuple[Path, str]]) -> str | None:
    name = path.name.lower()  # case-insensitive file systems (macOS, Windows) open AGENTS.md as agents.md
    why = _PROTECTED_LOWER.get(name)
    if why is None and _JUPYTER_CONFIG.match(name):
        why = "configures Jupyter"
    if why is None and name.endswith(".pth"):
        why = "is a .pth file (Python runs its import lines at every start)"
    if why is not None:
        return f"`{path.name}` {why}"
    parts = [part.lower() for part in path.parts]
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


def protected_reason(raw: object, cwd: Path | None, task_dir: Path | None = None) -> str | None:
    """Why writing the tool path ``raw`` always asks (None: it is not a protected file).

    Both the path as written and its real path are checked, so neither ``sub/../AGENTS.md``,
    ``~/.ipython/...`` nor a symlink to (or named as) a protected file gets past.
    """
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        return None
    base = cwd if cwd is not None else Path.cwd()
    try:
        real = resolve_tool_path(raw, base)
        candidates = [real, _lexical(raw, base)]
        task = Path(task_dir).expanduser().resolve() if task_dir is not None else None
    except (OSError, RuntimeError, ValueError):
        return f"`{raw}` cannot be resolved, so it cannot be shown not to configure nbagent"
    roots = kernel_config_roots()
    for path in candidates:
        why = _reason_for(path, task, roots)
        if why is not None:
            return f"{why}: writes to it always ask"
    return None


def written_path(tool: object, tool_input: Mapping[str, object] | None) -> object:
    """The ``path`` a tool that may write would write (None for a read-only tool or no path)."""
    if getattr(tool, "read_only", False) or not isinstance(tool_input, Mapping):
        return None
    return tool_input.get("path")


__all__ = ["MCP_CONFIG", "RULES_FILES", "NBAGENT_DIR", "IGNORE_FILE", "resolve_tool_path", "protected_reason",
           "kernel_config_roots", "written_path"]
