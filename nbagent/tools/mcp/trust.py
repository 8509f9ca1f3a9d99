"""Which projects' ``.mcp.json`` files the user trusts: a received folder runs no command of its own.

A ``.mcp.json`` names commands to start and URLs to connect to. It comes with the folder (a
repository, a course's zip, a shared drive), so nbagent starts its servers only once the user has
read them and said so: ``%agent mcp trust`` in a notebook, :func:`trust_mcp_json` in code. What is
trusted is the file as it was then (its SHA-256, by its real path), with the project's files its
command lines name (``"args": ["server.py"]``): a file changed since, or a script it runs, asks again.

The approvals live beside the replay key in the user's Jupyter data dir
(``$NBAGENT_MCP_TRUST_FILE`` overrides it), each signed with that key, so a file planted there by
anyone else (or by the model's tools) approves nothing.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from nbagent.engine.disk.persist import atomic_write_json
from nbagent.engine.disk.safe_open import read_capped
from nbagent.engine.disk.user_key import key_file, sign, signed_by_user

from ...engine.disk.json_depth import loads_within
from .config import MAX_MCP_JSON_BYTES, MCP_JSON, McpConfigError

TRUST_FILE_ENV = "NBAGENT_MCP_TRUST_FILE"
UNTRUSTED_MCP_JSON = ("{path} names MCP servers (commands to run, URLs to connect to); none was started: nbagent "
                      "starts a project's servers only once you trust its .mcp.json as it is (and the project's files "
                      "its commands run). Read them, then run "
                      "%agent mcp trust (in code: nbagent.tools.mcp.trust_mcp_json(folder)) and start a new session.")
_PURPOSE = "nbagent .mcp.json trusted"  # signed with each entry: a signature made for anything else never fits


def trust_file() -> Path:
    """Where approvals are kept: ``$NBAGENT_MCP_TRUST_FILE``, else beside the replay key."""
    return Path(os.environ.get(TRUST_FILE_ENV) or key_file().parent / "mcp_trust.json")


def _where(cwd_or_file: Path) -> Path:
    """The file, named by its folder's real path. The file itself is not resolved: a received
    folder's ``.mcp.json`` that links to a project's trusted one is not that project (its relative
    ``command`` would run the received folder's files)."""
    path = Path(cwd_or_file)
    path = path / MCP_JSON if path.is_dir() else path
    return path.parent.resolve() / path.name


def linked_outside(path: Path) -> Path | None:
    """Where ``path`` (a folder's ``.mcp.json``) leads when it is a link out of its folder, else
    None. Such a file is not the project's: a received folder's ``.mcp.json ->
    ~/.cursor/mcp.json`` would show the user's own servers (their tokens in arguments and URLs)
    in a notebook, and trusting it would run the received folder's scripts under their names."""
    if not path.is_symlink():
        return None
    try:
        target = path.resolve()
    except (OSError, RuntimeError):  # a loop of links leads nowhere in the folder
        return path
    return None if target.is_relative_to(path.parent.resolve()) else target


def _digest(path: Path) -> str | None:
    raw = read_capped(path, MAX_MCP_JSON_BYTES + 1)
    return _digest_of(path, raw) if raw is not None and len(raw) <= MAX_MCP_JSON_BYTES else None


def _digest_of(path: Path, raw: bytes) -> str:
    """The SHA-256 of the file's bytes and of each project file its servers' command lines name:
    trusting ``python server.py`` trusted ``server.py`` as it was (a ``git pull`` that changed it
    ran new code under the old approval)."""
    digest = hashlib.sha256(raw)
    for name, file_digest in _named_files(path.parent, raw):
        digest.update(f"\0{name}\0{file_digest}".encode())
    return digest.hexdigest()


def _named_files(folder: Path, raw: bytes) -> list[tuple[str, str]]:
    """(as written, digest) of each file of code a server's ``command`` or ``args`` names relative
    to its folder (the server's ``cwd`` where it has one), in the file's order, at most
    :data:`_MAX_NAMED` of them. Data files it names (``--db-path test.db``, which the server itself
    writes) are left out: trust would be asked again after every session."""
    try:
        servers = loads_within(raw.decode("utf-8")).get("mcpServers")
    except (ValueError, AttributeError):  # not JSON (nested past the bound too), or not an object
        return []
    found: dict[str, str] = {}
    for entry in servers.values() if isinstance(servers, dict) else ():
        if not isinstance(entry, dict):
            continue
        cwd = entry.get("cwd")
        base = folder / cwd if isinstance(cwd, str) else folder
        args = entry.get("args")
        words = [entry.get("command"), *(args if isinstance(args, list) else ())]
        for word in [*words, *_module_files(words)]:
            # An absolute path is a program of the machine's (``/usr/bin/python3``), not the folder's.
            if isinstance(word, str) and 0 < len(word) <= 1024 and "${" not in word and word not in found \
                    and not Path(word).is_absolute() and len(found) < _MAX_NAMED and _is_code(base / word):
                found[word] = _file_digest(base / word)
    return list(found.items())


def _module_files(words: list[object]) -> list[str]:
    """The project files ``python -m srv`` (``-m srv.main``) runs from its folder: ``srv.py``, or the
    package's ``__main__.py`` and ``__init__.py``. The command line names a module, not a file, so
    trusting it trusted no code: a ``git pull`` that changed ``srv.py`` ran under the old approval."""
    files: list[str] = []
    for flag, module in zip(words, words[1:], strict=False):
        if flag == "-m" and isinstance(module, str) and module.replace(".", "").replace("_", "").isalnum():
            path = module.replace(".", "/")
            files += [f"{path}.py", f"{path}/__main__.py", f"{path}/__init__.py"]
            if "/" in path:  # a submodule runs its top package's __init__ first
                files.append(f"{path.split('/')[0]}/__init__.py")
    return files


_CODE_SUFFIXES = frozenset({".py", ".pyz", ".js", ".mjs", ".cjs", ".ts", ".sh", ".bash", ".rb", ".pl", ".php",
                            ".jar", ".lua", ".r", ".ps1", ".bat", ".cmd"})
_MAX_NAMED = 32
"""Files hashed per ``.mcp.json``: a received file naming thousands cannot stall a check."""
_MAX_HASHED = 8 * 1024 * 1024


def _is_code(path: Path) -> bool:
    """A regular file a command line runs as code: a script by its suffix, or any executable file."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):  # a name too long for the system, a loop of links, a NUL: not a file
        return False
    return stat.S_ISREG(mode) and (path.suffix.lower() in _CODE_SUFFIXES or bool(mode & 0o111))


def _file_digest(path: Path) -> str:
    """The file's SHA-256; for one over 8 MB its size and modification time (not read at each check)."""
    data = read_capped(path, _MAX_HASHED + 1)
    if data is None:
        return "unreadable"
    if len(data) <= _MAX_HASHED:
        return hashlib.sha256(data).hexdigest()
    try:
        info = path.stat()
    except OSError:
        return "unreadable"
    return f"{info.st_size} bytes, modified {info.st_mtime_ns}"


def _entries() -> dict[str, object]:
    raw = read_capped(trust_file(), 4 * MAX_MCP_JSON_BYTES)
    if raw is None:
        return {}
    try:
        data = loads_within(raw.decode("utf-8"))
    except ValueError:  # not JSON, or nested past the bound
        return {}
    return data if isinstance(data, dict) else {}


def _trusted_bytes(path: Path) -> bytes | None:
    """The file's bytes, read once, when they are the ones the user trusted at this path."""
    if linked_outside(path) is not None:  # never trusted; an approval from before this check neither
        return None
    raw = read_capped(path, MAX_MCP_JSON_BYTES + 1)
    if raw is None or len(raw) > MAX_MCP_JSON_BYTES:
        return None
    entry = _entries().get(str(path))
    if not isinstance(entry, dict):  # never trusted here: nothing to hash (a received file is not read further)
        return None
    digest = _digest_of(path, raw)
    trusted = entry.get("sha256") == digest and signed_by_user(entry.get("signature"), _PURPOSE, str(path), digest)
    return raw if trusted else None


def is_trusted(cwd_or_file: Path) -> bool:
    """Whether the ``.mcp.json`` (of a folder, or the file) is trusted as it is now."""
    return _trusted_bytes(_where(cwd_or_file)) is not None


def trusted_mcp_json(cwd: Path) -> bytes | None:
    """The folder's ``.mcp.json`` as the bytes that were checked, when it is trusted as it is now
    (None: no file, or not trusted). Parse these, never the file again: a file swapped between a
    check and a second read would start servers nobody trusted."""
    path = Path(cwd) / MCP_JSON
    return _trusted_bytes(_where(path)) if path.is_file() else None


@dataclass(frozen=True)
class ProjectMcpJson:
    """A folder's ``.mcp.json`` as one trust check saw it: the bytes to parse where it is trusted
    as it is, else the file that is there untrusted (both None: no file)."""

    trusted: bytes | None = None
    untrusted: Path | None = None

    def notice(self) -> str:
        """What the first prompt says of an untrusted file (where a missing tool would puzzle)."""
        return UNTRUSTED_MCP_JSON.format(path=self.untrusted)


def project_mcp_json(cwd: Path) -> ProjectMcpJson:
    """The folder's ``.mcp.json``, checked once for both what starts and what the first prompt
    says (each check reads the file and hashes the scripts its commands name)."""
    path = Path(cwd) / MCP_JSON
    if not path.is_file():
        return ProjectMcpJson()
    trusted = _trusted_bytes(_where(path))
    return ProjectMcpJson(trusted=trusted, untrusted=path if trusted is None else None)


def untrusted_mcp_json(cwd: Path) -> Path | None:
    """The folder's ``.mcp.json`` when there is one and it is not trusted as it is now."""
    path = Path(cwd) / MCP_JSON
    return path if path.is_file() and not is_trusted(path) else None


def trust_mcp_json(cwd_or_file: str | os.PathLike[str]) -> Path:
    """Trust the ``.mcp.json`` of a folder (or the file) as it is now: new sessions and Agents
    with that working folder start its servers. Returns the file. Raises
    :class:`~nbagent.tools.mcp.config.McpConfigError` when there is no readable file, or when
    this user's signing key is unusable (then nothing could be trusted)."""
    path = _where(Path(cwd_or_file))
    if (target := linked_outside(path)) is not None:
        raise McpConfigError(f"{path} links to {target}, outside its folder: not trusted (copy the file into the "
                             "folder, read it, then trust it)")
    digest = _digest(path)
    if digest is None:
        raise McpConfigError(f"{path}: no readable .mcp.json (a regular file within {MAX_MCP_JSON_BYTES:,} bytes)")
    signature = sign(_PURPOSE, str(path), digest)
    if signature is None:
        raise McpConfigError(f"cannot trust {path}: nbagent's signing key {key_file()} is unusable")
    entries = _entries()
    entries[str(path)] = {"sha256": digest, "signature": signature}
    target = trust_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(target, entries)
    return path


__all__ = ["TRUST_FILE_ENV", "ProjectMcpJson", "is_trusted", "linked_outside", "project_mcp_json", "trust_file", "trust_mcp_json",
           "trusted_mcp_json", "untrusted_mcp_json"]
