"""Endpoints: where the Messages API is served, and how nbagent authenticates there.

An :class:`Endpoint` is a base URL, a key (``x-api-key``) or a bearer token (``Authorization:
Bearer``, as gateways such as the LiteLLM proxy take them), extra headers, a per-request timeout,
and optionally the model and window to use there. Named profiles come from
``~/.nbagent/endpoints.json``, then ``<cwd>/.nbagent/endpoints.json`` (both optional; a write to
either always asks, as for everything under ``.nbagent/``; what a project file may do is limited,
see :mod:`.endpoint_trust`), then ``AgentMagics.endpoints``; a later source wins per name::

    {"endpoints": {"gateway": {"base_url": "http://127.0.0.1:4000", "auth_token_env": "LITELLM_KEY",
                               "model": "local-model", "headers": {"X-Team": "data"}, "timeout_s": 120}}}

Keys, tokens and header values are secrets: no repr, event, file or tool output carries them
(the Agent hands them to the redaction boundary, and ``*_env`` names to ``secret_env``).
"""

from __future__ import annotations

import dataclasses
import os
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..engine.disk.json_depth import loads_within
from ..engine.disk.safe_open import read_capped
from .endpoint_trust import EndpointError, check_project_row, check_project_variables, check_trusted, host_of, is_the_sdks_host

ENDPOINTS_FILE = Path(".nbagent") / "endpoints.json"
MAX_PROFILES_BYTES = 1_000_000
"""The largest endpoints file read (profiles, not data)."""
_REGION = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_PROJECT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:-]*")
RESERVED_NAMES = frozenset({"auto", "simulated", "anthropic"})
"""Provider choices, not endpoint names (``%%agent --endpoint anthropic`` would be ambiguous)."""
_FIELDS = frozenset({"base_url", "api_key", "api_key_env", "auth_token", "auth_token_env", "headers",
                     "timeout_s", "model", "context_window", "kind", "region", "project_id", "model_ids"})
KINDS = ("anthropic", "bedrock", "vertex")
"""``anthropic``: any server of the Messages API; ``bedrock`` / ``vertex``: the SDK's own clients
for Amazon Bedrock (SigV4 from AWS's credential chain) and Google Vertex AI (a bearer token, or
Google's application-default credentials)."""


@dataclass(frozen=True)
class Endpoint:
    """One Messages API endpoint (its secrets are in no repr)."""

    name: str
    base_url: str | None = None
    """``None``: the SDK's default (Anthropic's API, or ``ANTHROPIC_BASE_URL``)."""
    api_key: str | None = field(default=None, repr=False)
    auth_token: str | None = field(default=None, repr=False)
    """Sent as ``Authorization: Bearer …`` (gateways' virtual keys)."""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Extra headers of every request (their values are treated as secrets)."""
    timeout_s: float | None = None
    """Per-request timeout (None: the session's ``request_timeout_s`` or 600 s)."""
    model: str | None = None
    """The model to use here unless the session names one."""
    context_window: int | None = None
    """The window of ``model`` when nbagent's table does not know it and the endpoint cannot tell."""
    secret_env: tuple[str, ...] = ()
    """Environment variables the secrets were read from (kept out of the shell tool's environment)."""
    kind: str = "anthropic"
    """One of :data:`KINDS`."""
    region: str | None = None
    """The cloud region (Bedrock, Vertex)."""
    project_id: str | None = None
    """The Google Cloud project (Vertex)."""
    model_ids: Mapping[str, str] = field(default_factory=dict)
    """The id the endpoint knows a model by, per nbagent model id (e.g. ``claude-sonnet-4-5`` ->
    ``anthropic.claude-sonnet-4-5-20250929-v1:0`` on Bedrock): the session keeps nbagent's id, so
    windows and prices stay known, and the request carries the endpoint's."""
    named_credentials_only: bool = False
    """Send only the credentials this endpoint names, never one the SDK finds by itself
    (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, an SDK profile on disk): set for a received
    project file's profile naming a host of its own, which must not get the key you keep for Anthropic."""

    def __post_init__(self) -> None:
        if not self.name or self.name in RESERVED_NAMES:
            raise EndpointError(f"an endpoint needs a name other than {', '.join(sorted(RESERVED_NAMES))}")
        if self.kind not in KINDS:
            raise EndpointError(f"endpoint {self.name!r}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.kind != "anthropic" and not self.region:
            raise EndpointError(f"endpoint {self.name!r}: a {self.kind} endpoint needs a region")
        # The SDKs build the host from these (bedrock-runtime.{region}.amazonaws.com): anything but a
        # plain name would let a profile, a received project file's too, pick the host the cloud
        # credential goes to (region "evil.example/" or "evil.example#").
        if self.region is not None and not _REGION.fullmatch(self.region):
            raise EndpointError(f"endpoint {self.name!r}: region must be a region name such as us-east-1 "
                                f"(letters, digits and dashes), got {self.region!r}")
        if self.kind == "vertex" and not self.project_id:
            raise EndpointError(f"endpoint {self.name!r}: a vertex endpoint needs a project_id")
        if self.project_id is not None and not _PROJECT_ID.fullmatch(self.project_id):
            raise EndpointError(f"endpoint {self.name!r}: project_id must be a Google Cloud project id "
                                f"(letters, digits, dashes, dots and colons), got {self.project_id!r}")
        if self.base_url is not None:
            parsed = urllib.parse.urlsplit(self.base_url)
            if parsed.scheme not in ("http", "https") or not parsed.hostname:
                # the text as given, not ``where``: "127.0.0.1:8000" (no scheme) read "got ://?". Never
                # what comes before an "@" (a scheme-less ``ana:secret@host`` holds a password).
                # Nor its query or fragment (``?api-key=…``).
                shown = self.base_url.rsplit("@", 1)[-1].split("?", 1)[0].split("#", 1)[0][:80]
                hint = ": it lacks the http:// in front" if "://" not in self.base_url else ""
                raise EndpointError(f"endpoint {self.name!r}: base_url must be an http(s) URL, "
                                    f"e.g. http://127.0.0.1:4000 (got {shown!r}{hint})")
            if parsed.username or parsed.password:
                raise EndpointError(f"endpoint {self.name!r}: put credentials in auth_token/api_key "
                                    "(or their *_env), not in base_url")
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise EndpointError(f"endpoint {self.name!r}: timeout_s must be a positive number of seconds")
        if self.context_window is not None and (isinstance(self.context_window, bool) or self.context_window < 1):
            raise EndpointError(f"endpoint {self.name!r}: context_window must be a positive number of tokens")

    @property
    def where(self) -> str:
        """The base URL without path secrets or query (what status lines show)."""
        if self.kind == "bedrock" and self.base_url is None:
            return f"Amazon Bedrock ({self.region})"
        if self.kind == "vertex" and self.base_url is None:
            return f"Google Vertex AI ({self.region}, project {self.project_id})"
        if self.base_url is None:
            return "the Anthropic API"
        return host_of(self.base_url)  # the host as the request goes there (IDNA: a look-alike shows)

    @property
    def auth(self) -> str:
        """How requests authenticate, in words (never the secret)."""
        if self.auth_token:
            return "bearer token"
        if self.api_key:
            return "API key"
        return {"bedrock": "AWS credentials (SigV4)", "vertex": "Google credentials"}.get(self.kind, "none")

    def secrets(self) -> tuple[str, ...]:
        """Every secret value of this endpoint (for the redaction boundary)."""
        return tuple(v for v in (self.api_key, self.auth_token, *self.headers.values()) if v)

    def describe(self) -> str:
        """``gateway at http://127.0.0.1:4000 (bearer token)``: for status lines, no secret."""
        headers = f", headers {', '.join(sorted(self.headers))}" if self.headers else ""
        return f"{self.name} at {self.where} ({self.auth}{headers})"

    def __repr__(self) -> str:
        return f"Endpoint({self.describe()!r}, model={self.model!r})"


def profile_files(cwd: str | Path | None = None) -> list[Path]:
    """Where named profiles are read from, in order (a later one wins per name)."""
    return [Path.home() / ENDPOINTS_FILE, Path(cwd or Path.cwd()) / ENDPOINTS_FILE]


def load_profiles(cwd: str | Path | None = None, extra: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Every named profile (raw rows, secrets not yet read): the files, then ``extra``."""
    return _load(cwd, extra)[0]


def _load(cwd: str | Path | None, extra: Mapping[str, Any] | None) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The profiles, and for each one from the project file, that file (see :mod:`.endpoint_trust`)."""
    rows: dict[str, dict[str, Any]] = {}
    from_project: dict[str, str] = {}
    user_file, project_file = profile_files(cwd)
    if user_file.is_file():
        rows.update(_read(user_file))
    if project_file.is_file() and project_file.resolve() != user_file.resolve():
        for name, row in _read(project_file).items():
            check_project_row(name, row, str(project_file), set(rows))
            rows[name], from_project[name] = row, str(project_file)
    for name, row in dict(extra or {}).items():
        rows[str(name)] = _checked_row(str(name), row, "AgentMagics.endpoints")
        from_project.pop(str(name), None)
    return rows, from_project


def _read(path: Path) -> dict[str, dict[str, Any]]:
    # A project's file may have been received: a regular file, within a bound, any nesting refused.
    data = read_capped(path, MAX_PROFILES_BYTES + 1)
    if data is None or len(data) > MAX_PROFILES_BYTES:
        raise EndpointError(f"cannot read endpoint profiles from {path}: not a regular file of at most "
                            f"{MAX_PROFILES_BYTES:,} bytes")
    try:
        raw = loads_within(data.decode("utf-8"))
    except ValueError as exc:  # not JSON, or nested past the bound
        raise EndpointError(f"cannot read endpoint profiles from {path}: {type(exc).__name__}: {exc}") from None
    table = raw.get("endpoints", raw) if isinstance(raw, dict) else None
    if not isinstance(table, dict):
        raise EndpointError(f"{path}: expected {{\"endpoints\": {{NAME: {{\"base_url\": ...}}}}}}")
    return {str(name): _checked_row(str(name), row, str(path)) for name, row in table.items()}


class ProfileRow(dict[str, Any]):
    """A profile's settings as read, whose repr leaves out what a file may write literally as a
    secret (``api_key``, ``auth_token``, header values): a traceback in ``%xmode Verbose`` prints
    the arguments of its frames, and a typo in a profile fails in frames that are passed its row."""

    def __repr__(self) -> str:
        shown = {key: "…" if key in ("api_key", "auth_token") else
                 {name: "…" for name in value} if key == "headers" and isinstance(value, dict) else value
                 for key, value in self.items()}
        return f"ProfileRow({shown!r})"


def _checked_row(name: str, row: Any, where: str) -> ProfileRow:
    if not isinstance(row, dict):
        raise EndpointError(f"{where}: endpoint {name!r} must be an object of settings")
    unknown = sorted(set(row) - _FIELDS)
    if unknown:
        raise EndpointError(f"{where}: endpoint {name!r} has unknown field(s) {', '.join(unknown)}; "
                            f"known: {', '.join(sorted(_FIELDS))}")
    headers = row.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise EndpointError(f"{where}: endpoint {name!r}: headers must map names to string values")
    return ProfileRow(row)


ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
"""What ``%config`` takes as an ``*_env`` value: a variable's name as the environment can hold it, ``-`` and ``.``
too (``my-gateway-key``, as a profile file names one; the environment refuses only ``=`` and NUL), never a
space or other punctuation a pasted key has."""


def is_env_name(value: object) -> bool:
    """Whether ``value`` can name an environment variable (a ``*_env`` field): a key pasted there
    instead (``sk-ant-…``) is never one, and must not be echoed as a variable's name. Nor is one of
    letters, digits and ``_`` only, shaped as a key (``hf_…``, ``ghp_…``, a random token): it passed
    as a name, and was kept, listed by ``%config AgentMagics`` and echoed as a variable "not set"."""
    from ..engine.credentials.embedded_secrets import looks_like_token
    from ..engine.credentials.key_shapes import redact_shapes

    if not isinstance(value, str) or ENV_NAME.fullmatch(value) is None:
        return False
    parts = re.split(r"[_.\-]", value)
    if redact_shapes(value) != value or any(_AWS_KEY_ID.fullmatch(part) or _HEX_KEY.fullmatch(part) for part in parts):
        return False
    if ("-" in value or "." in value) and not all(map(_plain_part, parts)):
        return False  # glpat-…, key-<hex>: a key's short random parts between "-" each passed as an id
    # Judged by its parts (between _, - and .) where one is a word: ANTHROPIC_KEY_3F9A2C71 (a name with an id's suffix)
    # was refused whole, as random text mixes classes, and the user could not name their variable.
    if any(_WORD.fullmatch(part) for part in parts):
        return not any(looks_like_token(part) for part in parts)
    return _camel_case_words(value) or not looks_like_token(value)


_WORD = re.compile(r"[A-Z]{3,}|[A-Z]?[a-z]{3,}")
"""A part of a variable's name that is a word (KEY, Anthropic, token), which a random key's parts seldom are."""
_AWS_KEY_ID = re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}")
"""An AWS access key id (``AKIAIOSFODNN7EXAMPLE``): capitals and digits that change class seldom enough
to pass as a name, and it was kept and echoed as one."""
_HEX_KEY = re.compile(r"(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{16,}"
                      r"|[A-Za-z]{1,4}(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{24,}")
"""A hex key (Azure OpenAI's is 32 hex digits, Mailgun's ``key-`` + 32, Twilio's ``SK`` + 32): an id's suffix in a
name is shorter (``ANTHROPIC_KEY_3F9A2C71``); one in twenty passed the random-text test, and was kept and echoed."""
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+")


def _plain_part(part: str) -> bool:
    """Whether a part of a name with ``-`` or ``.`` (``my-gateway-key``, ``gw-key-8f3a9c2e``, ``team-a.llm-key``)
    is a name's: short, of one case (a word, an id), or words (``MyGateway``); a key's random part mixes cases."""
    if len(part) <= 4 or part.lower() == part or part.upper() == part or _camel_case_words(part):
        return True
    # camelCase and CamelCase words with acronyms (myKey, azureOpenAI, apiKey, MyGateway): each piece a word,
    # an acronym of 4 capitals at most or a piece of 2 letters; a random part's pieces seldom are all of those
    if re.search(r"[A-Za-z][0-9]+[A-Za-z]", part):  # CUk7Yjpq: a digit between letters, as in random text
        return False
    pieces = re.findall(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]", part)
    words = [p for p in pieces if len(p) >= 3 and not p.isupper() and _pronounceable(p)]
    return bool(words) and all(p in words or len(p) <= 2 or (p.isupper() and len(p) <= 4) for p in pieces) \
        and sum(len(p) for p in pieces if p not in words) <= 5


def _pronounceable(word: str) -> bool:
    """A vowel in four letters and no five consonants in a row (``Gateway``, not ``Vdtxcvo``)."""
    return not _CONSONANTS.search(word) and len(word) > sum(c in "aeiouy" for c in word.lower()) >= len(word) / 4
_CONSONANTS = re.compile(r"[bcdfghjklmnpqrstvwxz]{5,}", re.IGNORECASE)


def _camel_case_words(value: str) -> bool:
    """Whether ``value`` is a CamelCase name (``Df2023Q4SalesByRegion``, ``XgbModelV2Fold3Seed7``):
    two capitalised words or more, and words (3 letters or more, a vowel in four, no five consonants
    in a row) hold 65% of its letters. Random text mixing classes was refused as a key, and the user
    could not name their variable; about one random mixed-case key in 200 (and no hex one) passes."""
    words = [w for w in _CAMEL_PART.findall(value) if len(w) >= 3 and _pronounceable(w)]
    letters = sum(c.isalpha() for c in value)
    return sum(w[0].isupper() for w in words) >= 2 and sum(map(len, words)) >= 0.65 * letters


def endpoint_from_row(name: str, row: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Endpoint:
    """An :class:`Endpoint` from a profile row, its ``*_env`` secrets read from ``environ`` now."""
    env = os.environ if environ is None else environ
    secret_env: list[str] = []

    def secret(key: str) -> str | None:
        var = row.get(f"{key}_env")
        if var:
            value = env.get(str(var), "").strip()
            if not value:
                shown = var if is_env_name(var) else "(a value that names no variable, not shown: the key itself?)"
                raise EndpointError(f"endpoint {name!r}: the environment variable {shown} ({key}_env) is not set")
            secret_env.append(str(var))
            return value
        return row.get(key) or None

    timeout = row.get("timeout_s")
    window = row.get("context_window")
    # Checked before any secret is read: a traceback in %xmode Verbose prints the arguments of the
    # frame that failed, and a typo (a base_url without http://) failed in Endpoint(auth_token=…).
    checked = Endpoint(name=name, base_url=row.get("base_url"), timeout_s=float(timeout) if timeout is not None else None,
                       model=row.get("model"), context_window=int(window) if window is not None else None,
                       kind=str(row.get("kind", "anthropic")), region=row.get("region"),
                       project_id=row.get("project_id"), model_ids=dict(row.get("model_ids", {})))
    return dataclasses.replace(checked, api_key=secret("api_key"), auth_token=secret("auth_token"),
                               headers=dict(row.get("headers", {})), secret_env=tuple(secret_env))


def resolve_endpoint(endpoint: str | Endpoint, cwd: str | Path | None = None,
                     extra: Mapping[str, Any] | None = None) -> Endpoint:
    """``endpoint`` itself, or the named profile (secrets read from the environment now)."""
    if isinstance(endpoint, Endpoint):
        return endpoint
    profiles, from_project = _load(cwd, extra)
    if endpoint not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        files = " or ".join(str(p) for p in profile_files(cwd))
        raise EndpointError(f"no endpoint profile named {endpoint!r} (known: {known}); add it to {files} "
                            "or to %config AgentMagics.endpoints")
    if endpoint in from_project:  # before its variables are read
        yours = {name: row for name, row in profiles.items() if name not in from_project}
        check_project_variables(endpoint, profiles[endpoint], from_project[endpoint], yours)
    resolved = endpoint_from_row(endpoint, profiles[endpoint])  # a malformed profile says so first (no request yet)
    if endpoint in from_project:
        check_trusted(endpoint, profiles[endpoint], from_project[endpoint])
        # A host of the file's own (trusted, maybe for another project) gets the credentials the
        # file names, never the SDK's fallback: your ANTHROPIC_API_KEY, which the file may not name.
        if resolved.base_url is not None and not is_the_sdks_host(resolved.base_url):
            return dataclasses.replace(resolved, named_credentials_only=True)
    return resolved


def profile_secret_env(extra: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The variables your own profiles read a key or token from (``api_key_env``, ``auth_token_env``
    of ``~/.nbagent/endpoints.json`` and of ``extra``, ``AgentMagics.endpoints``): configured
    secrets for every session and wherever no session is loaded, not only for the session using
    that profile. A gateway's key in ``ACME_GW`` held in a cell's ``gw`` went to the model (and
    ``ACME_GW`` to the shell tool) from a session on another endpoint, from ``%agent serve`` before any
    prompt, and into a replay's lines. A project's file is not read (its names are ``NBAGENT_*``,
    and it is someone else's)."""
    return tuple(profile_key_sources(extra))


def profile_key_sources(extra: Mapping[str, Any] | None = None) -> dict[str, str]:
    """:func:`profile_secret_env`'s variables, each with what reads it (``"the auth_token_env of your
    endpoint profile 'gw' in ~/.nbagent/endpoints.json"``), for a message that names why a variable is
    a secret. Read row by row from the file's JSON: one profile with a typo (the session using it says
    so) does not drop every other profile's variable from every session."""
    rows: list[tuple[str, object, str]] = []
    user_file = profile_files()[0]
    try:
        data = read_capped(user_file, MAX_PROFILES_BYTES + 1) if user_file.is_file() else None
        raw = loads_within(data.decode("utf-8")) if data is not None and len(data) <= MAX_PROFILES_BYTES else None
    except (OSError, ValueError):
        raw = None
    table = raw.get("endpoints", raw) if isinstance(raw, dict) else None
    if isinstance(table, dict):
        rows += [(str(name), row, f"~/{ENDPOINTS_FILE}") for name, row in table.items()]
    rows += [(str(name), row, "AgentMagics.endpoints") for name, row in dict(extra or {}).items()]
    found: dict[str, str] = {}
    for name, row, where in rows:
        for key in ("api_key_env", "auth_token_env"):
            variable = row.get(key) if isinstance(row, Mapping) else None
            if isinstance(variable, str) and variable and variable not in found:
                found[variable] = f"the {key} of your endpoint profile {name!r} in {where}"
    return found


__all__ = ["ENDPOINTS_FILE", "KINDS", "Endpoint", "EndpointError", "ProfileRow", "endpoint_from_row", "is_env_name",
           "load_profiles", "profile_files", "profile_key_sources", "profile_secret_env", "resolve_endpoint"]
