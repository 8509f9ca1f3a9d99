"""MCP server configuration: the common ``mcpServers`` JSON, validated into frozen records.

Two shapes per server, as in Claude Code's and Cursor's ``.mcp.json``::

    {"mcpServers": {
        "files": {"command": "python", "args": ["server.py"], "env": {"TOKEN": "${TOKEN}"}},
        "docs":  {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer ${KEY}"}}
    }}

Servers come from ``Agent(mcp_servers=...)`` (either the inner
mapping or the whole ``{"mcpServers": ...}`` object) and from ``.mcp.json`` in the working
directory; a server configured explicitly replaces one of the same name in ``.mcp.json``.
``${VAR}`` and ``${VAR:-default}`` in strings are replaced from the environment, so secrets need
not be written into the file. Any mistake raises :class:`McpConfigError` naming the server, the
field and where it was configured. This module does not import ``mcp`` (importing it costs about
a second); :func:`~.build.build_mcp_manager` does, and only when there is a server to run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Mapping, Union

from nbagent.engine.contracts.config import DEFAULT_TOOL_WAIT_S as DEFAULT_WAIT_TIMEOUT
from nbagent.engine.contracts.errors import NbAgentError
from nbagent.engine.contracts.protected import MCP_CONFIG
from nbagent.engine.contracts.tool_api import MCP_TOOL_PREFIX
from nbagent.engine.credentials.embedded_secrets import looks_like_token
from nbagent.engine.disk.json_depth import NestedTooDeepError, loads_within
from nbagent.engine.disk.safe_open import read_capped

MCP_JSON = MCP_CONFIG  # one name: the permission gate protects this file

_HTTP_TYPES = {"http", "streamable-http", "streamable_http", "streamableHttp"}
VAR_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
"""``${VAR}`` or ``${VAR:-default}`` in a string of a server entry (read from the environment)."""
_NAME_BAD = re.compile(r"[^A-Za-z0-9_-]")
_MAX_TOOL_NAME = 64  # the Messages API's limit on tool names
MAX_MCP_JSON_BYTES = 1_000_000
"""The largest ``.mcp.json`` read (server entries, not data)."""


class McpConfigError(NbAgentError):
    """The MCP server configuration is invalid; the message names the server, field and source."""


@dataclass(frozen=True)
class StdioServer:
    """A server started as a subprocess and spoken to over its stdin/stdout."""

    name: str
    command: str = field(repr=False)
    """As expanded (``${VAR}`` read), like ``args``: not in repr, whose ``written`` shows the command
    line as configured (a traceback in ``%xmode Verbose`` prints the records it passes)."""
    args: tuple[str, ...] = field(default=(), repr=False)
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), repr=False)
    """Extra environment variables (merged over the SDK's small safe default set). Not in repr:
    they often hold tokens."""
    cwd: Path | None = None
    """Working directory of the process (None: the agent's cwd)."""
    source: str = ""
    """Where this server was configured (for error messages and ``%agent status``)."""
    written: str = ""
    """The command line as the configuration writes it (``${VAR}`` not expanded): what status lines show."""
    expanded: tuple[str, ...] = field(default=(), repr=False)
    """The values ``${VAR}`` brought in from the environment: redacted wherever the server is described."""
    credentials: tuple[str, ...] = field(default=(), repr=False)
    """Those of them that are credentials (:func:`_credentials`): secrets for the model too."""

    transport = "stdio"

    def describe(self) -> str:
        """The command line as written, for status lines (never the environment, nor a ``${VAR}``'s value)."""
        return self.written or " ".join([self.command, *self.args])


@dataclass(frozen=True)
class HttpServer:
    """A server reached over streamable HTTP at ``url``."""

    name: str
    url: str = field(repr=False)
    """As expanded: not in repr (``written`` is), as for a stdio server's command line."""
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), repr=False)
    """Sent with every request (typically ``Authorization``); not in repr."""
    source: str = ""
    written: str = ""
    """The URL as the configuration writes it (``${VAR}`` not expanded): what status lines show."""
    expanded: tuple[str, ...] = field(default=(), repr=False)
    """The values ``${VAR}`` brought in from the environment: redacted wherever the server is described."""
    credentials: tuple[str, ...] = field(default=(), repr=False)
    """Those of them that are credentials (:func:`_credentials`): secrets for the model too."""

    transport = "http"

    def describe(self) -> str:
        """The URL as written, for status lines (never the headers, nor a ``${VAR}``'s value)."""
        return self.written or self.url


ServerConfig = Union[StdioServer, HttpServer]


def mcp_tool_name(server: str, tool: str) -> str:
    """The name the model sees: ``mcp__SERVER__TOOL``, reduced to the API's ``[A-Za-z0-9_-]{1,64}``.

    Characters the API rejects become ``_``; a name that is still too long keeps its start and gets
    a short hash of the full name, so two long names stay distinct.
    """
    name = f"{MCP_TOOL_PREFIX}{_NAME_BAD.sub('_', server)}__{_NAME_BAD.sub('_', tool)}"
    if len(name) <= _MAX_TOOL_NAME:
        return name
    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: _MAX_TOOL_NAME - 9]}_{digest}"


# ----- parsing --------------------------------------------------------------------------------

def _error(name: str, source: str, field_name: str, problem: str) -> McpConfigError:
    return McpConfigError(f"MCP server {name!r} (in {source}): field {field_name!r} {problem}")


def _expand(value: str, name: str, source: str, field_name: str) -> str:
    def sub(m: re.Match[str]) -> str:
        var, default = m.group(1), m.group(2)
        if var in os.environ:
            return os.environ[var]
        if default is not None:
            return default
        raise _error(name, source, field_name, f"uses ${{{var}}}, which is not set in the environment "
                                               f"(write ${{{var}:-default}} to give a default)")
    return VAR_REFERENCE.sub(sub, value)


def _from_environment(entry: Mapping[str, object]) -> tuple[str, ...]:
    """The values the entry's ``${VAR}`` references take from the environment (not defaults): a
    token kept out of the file this way must not come back in a status line or an error (a URL's
    ``?key=${DOCS_KEY}``, an argument ``--token ${GH_TOKEN}`` echoed by the server's stderr)."""
    strings: list[object] = [entry.get("command"), entry.get("url"), entry.get("cwd")]
    args = entry.get("args")
    strings += list(args) if isinstance(args, (list, tuple)) else []
    for key in ("env", "headers"):
        value = entry.get(key)
        strings += list(value.values()) if isinstance(value, Mapping) else []
    found = {os.environ[m.group(1)] for text in strings if isinstance(text, str)
             for m in VAR_REFERENCE.finditer(text) if m.group(1) in os.environ}
    return tuple(sorted(found))


_CREDENTIAL_NAME = re.compile(r"key|token|secret|passw|pwd|auth|cred|cookie|session", re.IGNORECASE)


def credential_named(name: str) -> bool:
    """Whether an ``env`` entry's or a variable's name reads like a credential's (``GH_TOKEN``, ``DB_PWD``)."""
    return _CREDENTIAL_NAME.search(name) is not None


def _credentials(entry: Mapping[str, object]) -> tuple[str, ...]:
    """The environment values that are credentials: every ``${VAR}`` of a header (that is where a
    server's auth goes), and of an ``env`` entry, the URL, the command or an argument whose own
    name or variable's name reads like one (``"TOKEN": "${FILES_TOKEN}"``, ``--token ${GH_TOKEN}``)
    or whose value is shaped like one (:func:`looks_like_token`).
    A server echoing one in a tool result must not hand it to the model; a ``${HOME}`` in
    ``PYTHONPATH`` is no credential, and redacting it would hide every path."""
    pairs: list[tuple[str, object]] = [("", entry.get(key)) for key in ("url", "command")]
    args = entry.get("args")
    pairs += [("", a) for a in args] if isinstance(args, (list, tuple)) else []
    for key in ("headers", "env"):
        value = entry.get(key)
        if isinstance(value, Mapping):
            pairs += [("auth" if key == "headers" else str(k), v) for k, v in value.items()]
    found = {os.environ[m.group(1)] for name, text in pairs if isinstance(text, str)
             for m in VAR_REFERENCE.finditer(text)
             if m.group(1) in os.environ and (_CREDENTIAL_NAME.search(name) or _CREDENTIAL_NAME.search(m.group(1))
                                              or looks_like_token(os.environ[m.group(1)]))}
    return tuple(sorted(found))


def _string(entry: Mapping[str, object], key: str, name: str, source: str, required: bool = True) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        got = "missing" if value is None else f"got {type(value).__name__} {value!r}"
        raise _error(name, source, key, f"must be a non-empty string ({got})")
    return _expand(value, name, source, key)


def _string_list(entry: Mapping[str, object], key: str, name: str, source: str) -> tuple[str, ...]:
    value = entry.get(key, [])
    if not isinstance(value, (list, tuple)):
        raise _error(name, source, key, f"must be a list of strings, got {type(value).__name__}")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise _error(name, source, f"{key}[{i}]", f"must be a string, got {type(item).__name__} {item!r}")
        out.append(_expand(item, name, source, f"{key}[{i}]"))
    return tuple(out)


def _string_map(entry: Mapping[str, object], key: str, name: str, source: str) -> Mapping[str, str]:
    value = entry.get(key) or {}
    if not isinstance(value, Mapping):
        raise _error(name, source, key, f"must be an object of strings, got {type(value).__name__}")
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise _error(name, source, f"{key}.{k}", f"must be a string, got {type(v).__name__} {v!r} "
                                                     f"(quote numbers and booleans)")
        out[k] = _expand(v, name, source, f"{key}.{k}")
    return MappingProxyType(out)


def parse_server(name: object, entry: object, source: str) -> ServerConfig | None:
    """One server entry as a record (None when it says ``"disabled": true``)."""
    if not isinstance(name, str) or not name.strip():
        raise McpConfigError(f"MCP server names must be non-empty strings (in {source}): got {name!r}")
    if isinstance(entry, (StdioServer, HttpServer)):
        return entry
    if not isinstance(entry, Mapping):
        raise McpConfigError(f"MCP server {name!r} (in {source}): expected an object with 'command' or 'url', "
                             f"got {type(entry).__name__}")
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        # "disabled": "true" reads as disabled in the trust view; starting it anyway would run a
        # command the user was told is off.
        raise _error(name, source, "disabled", f"must be true or false, got {type(disabled).__name__} {disabled!r}")
    if disabled:
        return None
    kind = entry.get("type")
    if kind is not None and kind != "stdio" and kind not in _HTTP_TYPES:
        hint = " (the SSE transport is not supported: use the server's streamable HTTP endpoint)" if kind == "sse" else ""
        raise _error(name, source, "type", f"must be 'stdio' or 'http', got {kind!r}{hint}")
    has_command, has_url = "command" in entry, "url" in entry
    if has_command and has_url:
        raise McpConfigError(f"MCP server {name!r} (in {source}): give either 'command' (stdio) or 'url' "
                             f"(streamable HTTP), not both")
    if kind in _HTTP_TYPES or (has_url and kind is None):
        url = _string(entry, "url", name, source)
        assert url is not None
        if not re.match(r"https?://[^/\s]+", url):
            raise _error(name, source, "url", f"must be an http:// or https:// URL, got {url!r}")
        return HttpServer(name=name, url=url, headers=_string_map(entry, "headers", name, source), source=source,
                          written=str(entry["url"]), expanded=_from_environment(entry),
                          credentials=_credentials(entry))
    if not has_command:
        raise McpConfigError(f"MCP server {name!r} (in {source}): needs 'command' (a program to start) or "
                             f"'url' (a streamable HTTP endpoint)")
    command = _string(entry, "command", name, source)
    assert command is not None
    cwd = _string(entry, "cwd", name, source, required=False)
    args = _string_list(entry, "args", name, source)
    raw_args = entry.get("args") or ()
    written = " ".join([str(entry["command"]), *(str(a) for a in raw_args if isinstance(raw_args, (list, tuple)))])
    return StdioServer(name=name, command=command, args=args, env=_string_map(entry, "env", name, source),
                       cwd=Path(cwd) if cwd else None, source=source, written=written,
                       expanded=_from_environment(entry), credentials=_credentials(entry))


def parse_servers(raw: Mapping[str, object] | None, source: str, *, unwrap: bool = True) -> dict[str, ServerConfig]:
    """Servers of one mapping, by name; ``{"mcpServers": {...}}`` is unwrapped (unless ``unwrap``
    is False: the inner object of a ``.mcp.json``, already unwrapped once)."""
    if not raw:
        return {}
    if not isinstance(raw, Mapping):
        raise McpConfigError(f"MCP servers (in {source}) must be an object of server entries, got {type(raw).__name__}")
    entries: Mapping[str, object] = raw
    if unwrap and set(raw) == {"mcpServers"}:
        inner = raw["mcpServers"]
        if not isinstance(inner, Mapping):
            raise McpConfigError(f"'mcpServers' (in {source}) must be an object of server entries, "
                                 f"got {type(inner).__name__}")
        entries = inner
    servers: dict[str, ServerConfig] = {}
    for name, entry in entries.items():
        server = parse_server(name, entry, source)
        if server is not None:
            servers[name] = server
    return servers


def load_mcp_json(cwd: Path, raw: bytes | None = None) -> dict[str, ServerConfig]:
    """Servers of ``cwd/.mcp.json`` (empty when there is no such file); ``raw``: the file's bytes
    as already read (and checked: :func:`~.trust.trusted_mcp_json`), parsed instead of reading it."""
    path = Path(cwd) / MCP_JSON
    if raw is None and not path.is_file():
        return {}
    # A file that may have been received: read as a regular file, within a bound (never a FIFO's
    # wait, never gigabytes whole), and its nesting may not crash the parser.
    raw = read_capped(path, MAX_MCP_JSON_BYTES + 1) if raw is None else raw
    # Unwrapped once: a second level ({"mcpServers": {"mcpServers": {...}}}) would start servers
    # that %agent mcp, reading the file as written, shows as one empty entry.
    return parse_servers(mcp_servers_object(raw, path), str(path), unwrap=False)


def mcp_servers_object(raw: bytes | None, path: Path) -> Mapping[str, object]:
    """The ``mcpServers`` object of a ``.mcp.json``'s bytes (``{}`` where it has none), as written:
    the one reading of the file that the servers and ``%agent mcp``'s view both come from. A
    :class:`McpConfigError` saying what is wrong with it otherwise (``path`` names it)."""
    if raw is None:
        raise McpConfigError(f"cannot read {path}: not a readable regular file")
    if len(raw) > MAX_MCP_JSON_BYTES:
        raise McpConfigError(f"{path} is larger than {MAX_MCP_JSON_BYTES:,} bytes; not read")
    try:
        data = loads_within(raw.decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise McpConfigError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except (UnicodeDecodeError, NestedTooDeepError) as exc:
        raise McpConfigError(f"{path} is not valid JSON: {exc}") from None
    servers = data.get("mcpServers", {}) if isinstance(data, Mapping) else None
    if not isinstance(servers, Mapping):
        raise McpConfigError(f"{path} must be an object with an 'mcpServers' object of server entries")
    return servers


def _field_values(server: ServerConfig) -> dict[str, str]:
    """A server's fields that may carry a value to its command or URL, by name (``env.GW_TOKEN``)."""
    if isinstance(server, HttpServer):
        return {"url": server.url, **{f"headers.{k}": v for k, v in server.headers.items()}}
    return {"command": server.command, **{f"args[{i}]": a for i, a in enumerate(server.args)},
            **{f"env.{k}": v for k, v in server.env.items()}}


def _secret_fields(server: ServerConfig, secrets: tuple[str, ...]) -> list[str]:
    """The fields of ``server`` whose value holds one of ``secrets`` (never the value itself)."""
    return [name for name, value in _field_values(server).items() if any(secret in value for secret in secrets)]


def refuse_secrets(servers: Mapping[str, ServerConfig], secrets: tuple[str, ...]) -> None:
    """A project's ``.mcp.json`` (a file the user may have received) never gets a configured secret:
    ``${ANTHROPIC_API_KEY}`` in a header would send the key to a URL the file names, in ``env`` hand
    it to a command; so does ``${ACME_GW}``, the gateway key one of your endpoint profiles reads,
    whichever endpoint the session uses (the server gets it all the same). Servers given in code
    (``Agent(mcp_servers=...)``) may: the user wrote them."""
    for name, server in servers.items():
        found = _secret_fields(server, secrets)
        if found:
            raise McpConfigError(f"MCP server {name!r} (in {server.source}): field {found[0]!r} would carry "
                                 f"{_secret_reason(server, found[0])}: a project file may not send it to a server "
                                 "(give it in code, Agent(mcp_servers=...), if you mean to)")


def _secret_reason(server: ServerConfig, field_name: str) -> str:
    """What the secret a field would carry is, by its variable's name, never its value: a gateway key
    your endpoint profile reads (the user never listed it in ``secret_env``), else the session's."""
    from ...providers.endpoints import profile_key_sources  # the user's profiles: read only for this message

    value = next((v for k, v in _field_values(server).items() if k == field_name), "")
    for variable, source in profile_key_sources().items():
        held = os.environ.get(variable, "").strip()
        if held and held in value:
            return f"the value of {variable}, read as {source}"
    return ("a configured secret (the session's API key, a variable of secret_env, or a key one of your endpoint "
            "profiles reads)")


def resolve_servers(explicit: Mapping[str, object] | None, cwd: Path, *, read_mcp_json: bool = True,
                    source: str = "mcp_servers", secrets: tuple[str, ...] = (),
                    mcp_json: bytes | None = None) -> tuple[ServerConfig, ...]:
    """All configured servers: ``.mcp.json`` first, replaced by explicit entries of the same name.
    ``secrets``: values no server of ``.mcp.json`` may carry (:func:`refuse_secrets`); ``mcp_json``:
    the file's bytes as already read and checked (else it is read here)."""
    servers = load_mcp_json(cwd, mcp_json) if read_mcp_json else {}
    refuse_secrets(servers, secrets)
    servers.update(parse_servers(explicit, source))
    tool_prefixes: dict[str, str] = {}
    for name in servers:
        prefix = mcp_tool_name(name, "")
        if prefix in tool_prefixes:
            raise McpConfigError(f"MCP servers {tool_prefixes[prefix]!r} and {name!r} would give their tools the "
                                 f"same names ({prefix}…): rename one of them")
        tool_prefixes[prefix] = name
    # "a" and "a__b": tool "b__c" of the first and tool "c" of the second are both mcp__a__b__c, so
    # one server could take another's tool name (its "Allow always", its place in ``allow``).
    for prefix, name in tool_prefixes.items():
        for other, other_name in tool_prefixes.items():
            if other != prefix and other.startswith(prefix):
                raise McpConfigError(f"MCP servers {name!r} and {other_name!r} could give their tools the same "
                                     f"names ({other}…: a tool of {name!r} may be named like one of "
                                     f"{other_name!r}): rename one of them")
    return tuple(servers.values())


__all__ = [
    "MCP_JSON", "DEFAULT_WAIT_TIMEOUT", "credential_named", "McpConfigError", "StdioServer", "HttpServer", "ServerConfig",
    "mcp_tool_name", "parse_server", "parse_servers", "load_mcp_json", "mcp_servers_object", "resolve_servers",
]
