"""``%agent mcp [trust]``: the working folder's ``.mcp.json``, as written, and whether you trust it.

A project's servers start only once you trust its ``.mcp.json`` (:mod:`nbagent.tools.mcp.trust`):
this command shows what each server would run or connect to, so that you read it before you say so.
"""

from __future__ import annotations

import json
import re
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments

from .mcp_env_view import masked, shown_args, shown_env, shown_in_place

if TYPE_CHECKING:
    from .magics_api import MagicsApi

SHOWN_FIELDS = ("type", "command", "args", "cwd", "url", "disabled")
"""What each server is shown with whole. ``env`` and ``headers`` are shown by :func:`~.mcp_env_view.shown_env`."""


def _entries(path: Path) -> list[str]:
    """:func:`_entries_of` the file as it is now."""
    from ..engine.disk.safe_open import read_capped
    from ..tools.mcp.config import MAX_MCP_JSON_BYTES

    return _entries_of(read_capped(path, MAX_MCP_JSON_BYTES + 1), path)


def _entries_of(raw: bytes | None, path: Path) -> list[str]:
    """One line per server, as the file writes it (``${VAR}`` not expanded; ``env`` and ``headers``
    with the variables their values read, :func:`~.mcp_env_view.masked`), escaped to ASCII so that no character
    the page would hide (a right-to-left mark, a form feed) goes unseen; or what is wrong with it."""
    from ..tools.mcp.config import McpConfigError, mcp_servers_object

    try:
        servers = mcp_servers_object(raw, path)
    except McpConfigError as exc:
        return [f"  (nothing would start, and every %%agent cell would fail once trusted: {exc})"]
    lines = []
    for name, entry in servers.items():
        shown = {k: entry[k] for k in SHOWN_FIELDS if k in entry} if isinstance(entry, dict) else entry
        if isinstance(entry, dict):  # a token written out in an argument or the URL (the view is saved)
            shown.update({k: f(entry[k]) for k, f in (("args", shown_args), ("url", _url_text))  # type: ignore[attr-defined]
                          if k in entry})
        if isinstance(entry, dict) and isinstance(entry.get("env"), dict):
            shown["env"] = {k: shown_env(str(k), v) for k, v in sorted(entry["env"].items())}  # type: ignore[index]
        if isinstance(entry, dict) and isinstance(entry.get("headers"), dict):
            shown["headers"] = {k: masked(v) for k, v in sorted(entry["headers"].items())}  # type: ignore[index]
        lines.append(f"  {json.dumps(name)}: {json.dumps(shown)}")
        lines += [f"    (note: {note})" for note in _folder_programs(entry, path.parent)]
    return lines or ["  (no servers)"]


def _url_text(url: object) -> object:
    return shown_in_place(url) if isinstance(url, str) else url


_PYTHON = re.compile(r"(?i)python[0-9.]*(?:\.exe)?|py(?:\.exe)?")
_IMPORTED = re.compile(r"(?:^|[;\n]|\s)(?:from|import)\s+([A-Za-z_][A-Za-z0-9_]*)")


def _python_modules(args: list[str]) -> list[str]:
    """The top-level modules a Python command line runs from the folder it starts in, if there:
    ``-m MOD``, ``-mMOD`` and what ``-c CODE`` imports (both put that folder first on ``sys.path``;
    ``-mMOD`` and ``-c`` went unnoted: review of pass 24)."""
    found: list[str] = []
    for i, arg in enumerate(args):
        if arg in ("-m", "-c") and i + 1 < len(args):
            nxt = args[i + 1]
            found += [nxt.split(".")[0]] if arg == "-m" else _IMPORTED.findall(nxt)
        elif arg.startswith("-m") and len(arg) > 2:
            found.append(arg[2:].split(".")[0])
        elif not arg.startswith("-"):
            break  # the script or module's own arguments follow
    return [m for m in dict.fromkeys(found) if m]


def _exists(path: Path, *, folder: bool = False) -> bool:
    """Whether ``path`` is there (a folder, with ``folder``); a name the system refuses (too long, a
    NUL in it: a received file's) is not, where ``%agent mcp`` failed with ``OSError`` (review of pass 24)."""
    try:
        return path.is_dir() if folder else path.exists()
    except (OSError, ValueError):
        return False


def _folder_programs(entry: object, folder: Path) -> list[str]:
    """What a command that reads as an installed server would take from the folder it starts in
    (its ``cwd``, else the project's): ``python -m MOD`` puts that folder first on ``sys.path``, so a
    received ``MOD.py`` (or ``MOD/``) runs instead of the installed module; ``npx`` prefers the
    folder's ``node_modules`` (attacker pass 24). Said in the view; the file is still the user's to trust."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return []
    args = [a for a in entry.get("args") or () if isinstance(a, str)] if isinstance(entry.get("args"), list) else []
    cwd = entry.get("cwd")
    where = folder / cwd if isinstance(cwd, str) and "${" not in cwd else folder
    program = Path(entry["command"]).name
    notes = []
    for module in _python_modules(args) if _PYTHON.fullmatch(program) else ():
        if _exists(where / f"{module}.py") or _exists(where / module, folder=True):
            notes.append(f"{where.name}/ holds {module!r}: `{program}` starts there and runs that folder's "
                         "module, not an installed one")
    if program in ("npx", "npx.cmd") and _exists(where / "node_modules", folder=True):
        notes.append(f"{where.name}/ holds node_modules/: npx runs a package found there before the registry's")
    if program in ("uv", "uv.exe") and _uv_runs(args) and (
            _exists(where / "pyproject.toml") or _exists(where / ".venv", folder=True)):
        notes.append(f"{where.name}/ holds a Python project (pyproject.toml or .venv/): uv run uses the project there, "
                     "its .venv and the dependencies pyproject.toml names, which the approval does not cover")
    return notes


def _uv_runs(args: list[str]) -> bool:
    """Whether ``uv ARGS`` is ``uv [options] run …`` (``uv run`` syncs and runs in the project it finds,
    from the folder it starts in: its interpreter, site-packages and dependencies)."""
    for arg in args:
        if not arg.startswith("-"):
            return arg == "run"
    return False


def _problem(path: Path, magics: "MagicsApi | None" = None) -> str | None:
    """What is wrong with the file as a ``.mcp.json`` (not valid JSON, and where; no ``mcpServers``
    object; a server that would carry a configured secret, :func:`_carried_secret`), or None."""
    from ..engine.disk.safe_open import read_capped
    from ..tools.mcp.config import MAX_MCP_JSON_BYTES, McpConfigError, mcp_servers_object

    try:
        mcp_servers_object(read_capped(path, MAX_MCP_JSON_BYTES + 1), path)
    except McpConfigError as exc:
        return str(exc)
    return _carried_secret(path, magics)


def _carried_secret(path: Path, magics: "MagicsApi | None") -> str | None:
    """Why a new session would refuse the file's servers, as it does (a server whose ``env`` or
    headers would carry the API key, a ``secret_env`` variable, or the gateway key one of your
    endpoint profiles reads): trusted, it would fail every ``%%agent`` cell. None otherwise (and
    for a file that cannot be parsed: :func:`_entries_of` says so)."""
    from ..engine.disk.safe_open import read_capped
    from ..engine.loop.sanitize import secret_values
    from ..tools.mcp.config import MAX_MCP_JSON_BYTES, McpConfigError, load_mcp_json, refuse_secrets
    from .new_session import configured_secret_env

    sess = getattr(magics, "current", None)
    names = (*configured_secret_env(magics), *(sess.agent.config.secret_env if sess is not None else ()))
    try:
        servers = load_mcp_json(path.parent, read_capped(path, MAX_MCP_JSON_BYTES + 1))
    except McpConfigError:
        return None
    try:
        refuse_secrets(servers, tuple(secret_values(names)))
    except McpConfigError as exc:
        return str(exc)
    return None


def _printed(magics: "MagicsApi | None", lines: list[str]) -> None:
    """Print ``lines`` with the secrets redacted as the model's text is: the file is shown as it
    is written, and a key written out in it (refused when parsed) would go into the notebook."""
    from ..engine.credentials.env_secrets import credential_env_values
    from ..engine.loop.sanitize import Sanitizer, secret_values
    from .new_session import configured_secret_env

    sess = getattr(magics, "current", None)
    sanitizer = sess.agent.engine.sanitizer() if sess is not None else \
        Sanitizer(secret_values(configured_secret_env(magics), credential_env_values()))
    print(sanitizer.redact("\n".join(lines)))


@magic_arguments(name="agent mcp")
@argument("action", nargs="?", choices=("trust",), metavar="trust",
          help="Trust this folder's .mcp.json as it is now: new sessions start its servers.")
def mcp(magics: "MagicsApi", args: Namespace) -> None:
    """Show the servers of the working folder's .mcp.json and whether you trust it (a received
    folder's servers never start until you do); ``trust`` trusts the file as it is now."""
    from ..tools.mcp.config import MCP_JSON
    from ..tools.mcp.trust import is_trusted, linked_outside, trust_mcp_json, trusted_mcp_json

    path = Path.cwd() / MCP_JSON
    if not path.is_file():
        print(f"nbagent: no {MCP_JSON} in {Path.cwd()}.")
        return
    if (target := linked_outside(path)) is not None:  # not this folder's file: its lines are not shown
        message = (f"{path} links to {target}, outside this folder: not this project's file, so its servers are "
                   "not shown and never start here. Copy the file into the folder to read and trust it.")
        if args.action == "trust":
            raise UsageError(f"not trusted: {message}")
        _printed(magics, [f"nbagent: {message}"])
        return
    if args.action == "trust":
        problem = _problem(path, magics)
        if problem is not None:  # trusted, it would fail every %%agent cell of every new session
            raise UsageError(f"not trusted: {problem}. Fix the file, then %agent mcp trust.")
        trust_mcp_json(path)
        running = magics.current is not None
        # What was trusted, from the bytes the approval holds: the file may have changed since the
        # user last ran %agent mcp (or they trusted it straight from the notice, without reading).
        trusted = trusted_mcp_json(Path.cwd())
        shown = _entries_of(trusted, path) if trusted is not None else ["  (changed again since: not trusted as it is now)"]
        _printed(magics, [f"nbagent: trusted {path} as it is now: new sessions start its servers"
                          + ("; %agent reset starts one now:" if running else ":"), *shown])
        return
    state = "trusted (as it is now): new sessions start its servers" if is_trusted(path) else \
        "not trusted: its servers do not start (read them, then %agent mcp trust)"
    refused = _carried_secret(path, magics)
    fails = "fails" if is_trusted(path) else "would fail once trusted"  # trusted before the key's profile was added
    flagged = [f"  (refused: every %%agent cell {fails}: {refused})"] if refused is not None else []
    _printed(magics, [f"nbagent: {path}: {state}", *_entries(path), *flagged])


__all__ = ["mcp"]
