"""What a project's ``.nbagent/endpoints.json`` may do (issue 33): a repository is not the user.

A project file may add profiles, but may not redefine one of ``~/.nbagent/endpoints.json`` (the
user's bearer token or key would follow a planted ``base_url``), may name in ``*_env`` only
environment variables of :data:`PROJECT_ENV_PREFIX` (never ``AWS_SECRET_ACCESS_KEY``), and a
``base_url`` it names is used only once the user trusted that host, which is remembered per user
in ``~/.nbagent/trusted_endpoints.json`` (never in the project folder).
"""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path
from typing import Mapping

import httpx2

from ..engine.contracts.errors import NbAgentError
from ..engine.disk.persist import atomic_write_json

PROJECT_ENV_PREFIX = "NBAGENT_"
TRUST_FILE = Path(".nbagent") / "trusted_endpoints.json"


class EndpointError(NbAgentError):
    """An endpoint profile is unknown or malformed; the message says where profiles are read from."""


class UntrustedEndpointError(EndpointError):
    """A project file's profile points at a host the user has not trusted yet."""


def host_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url`` (what trust is given to, and what messages show)."""
    parsed = urllib.parse.urlsplit(url)
    return f"{parsed.scheme}://{ascii_host(parsed.hostname)}{f':{parsed.port}' if parsed.port else ''}"


def ascii_host(host: str | None) -> str:
    """``host`` as the SDK's transport connects to it: IDNA-encoded (``xn--…``) when it is not ASCII.

    Shown as written, a letter of another script that looks like a Latin one (``аpi.anthropic.com``
    with a Cyrillic ``а``, a fullwidth dot) made another host read as one the user knows, and
    ``trust_host`` then sent the API key there (a project profile without a key fell back to
    ``ANTHROPIC_API_KEY``)."""
    if not host:
        return "?"
    if host.isascii():
        return host
    try:
        return httpx2.URL(f"http://{host}/").raw_host.decode("ascii")
    except httpx2.InvalidURL:  # no request can go there either: shown escaped, never as it draws
        return ascii(host)[1:-1]


def _trust_file() -> Path:
    return Path.home() / TRUST_FILE


def trusted_hosts() -> set[str]:
    """The hosts this user trusted for profiles of project files."""
    try:
        data = json.loads(_trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    hosts = data.get("hosts") if isinstance(data, dict) else None
    return {h for h in hosts if isinstance(h, str)} if isinstance(hosts, list) else set()


def trust_host(url: str) -> None:
    """Trust ``url``'s host for endpoint profiles of project files (remembered for this user)."""
    path = _trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"hosts": sorted(trusted_hosts() | {host_of(url)})})


def check_project_row(name: str, row: Mapping[str, object], where: str, user_names: set[str]) -> None:
    """A project file's profile row may not redefine a user profile nor read other variables."""
    if name in user_names:
        raise EndpointError(f"{where}: endpoint {name!r} is defined in ~/.nbagent/endpoints.json; a project "
                            "file may not redefine it (give the project's profile another name)")
    for key in ("api_key_env", "auth_token_env"):
        var = row.get(key)
        if var is not None and not str(var).startswith(PROJECT_ENV_PREFIX):
            raise EndpointError(f"{where}: endpoint {name!r}: a project file may name only variables starting "
                                f"with {PROJECT_ENV_PREFIX} in {key} (got {var}); put the profile in "
                                "~/.nbagent/endpoints.json to use another")


_ENV_KEYS = ("api_key_env", "auth_token_env")


def check_project_variables(name: str, row: Mapping[str, object], where: str,
                            yours: Mapping[str, Mapping[str, object]]) -> None:
    """Before a project profile's first use: an ``NBAGENT_*`` variable it names is not the file's to
    use where one of ``yours`` (your profiles: ``~/.nbagent/endpoints.json``, ``AgentMagics.endpoints``)
    reads its key from it for another host. Your gateway's token kept in ``NBAGENT_WORK_GW`` went with
    the file's profile to any other host you trusted (for some other project), or as a bearer token
    to Anthropic's API, which needs no trust (attacker pass 22)."""
    for key in _ENV_KEYS:
        var = row.get(key)
        owner = _reader_elsewhere(str(var), row, yours) if var is not None else None
        if owner is not None:
            raise EndpointError(f"{where}: endpoint {name!r}: {key} names {var}, which your endpoint profile "
                                f"{owner!r} reads its key from for {_where(yours[owner])}; this profile would send "
                                f"it to {_where(row)}. A project file may send it only where your profile does: "
                                "put the profile in ~/.nbagent/endpoints.json to use it elsewhere")


def _where(row: Mapping[str, object]) -> str:
    """Where a profile's requests go, as compared and shown: its ``base_url``'s host, or the SDK's
    own host of its kind (and region)."""
    url = row.get("base_url")
    if isinstance(url, str):
        return host_of(url)
    region = row.get("region")
    return f"the {row.get('kind', 'anthropic')} API" + (f" in {region}" if region else "")


_DEFAULT_PORTS = {"http": 80, "https": 443}
_ANTHROPIC_API = "https://api.anthropic.com:443"


def _destination(row: Mapping[str, object]) -> str:
    """Where a profile's requests go, as compared: a ``base_url``'s scheme, host and port (the
    scheme's default when not written), with Anthropic's API the same whether named by its URL or
    by no ``base_url``. Compared as written, ``https://gw.corp`` and ``https://gw.corp:443/v1``
    were two hosts, and a team file naming your gateway's variable was refused (review of pass 22)."""
    url = row.get("base_url")
    if not isinstance(url, str):
        where = _where(row)
        return _ANTHROPIC_API if where == "the anthropic API" else where
    parsed = urllib.parse.urlsplit(url)
    scheme = parsed.scheme.lower()
    try:
        port = parsed.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        return host_of(url)
    return f"{scheme}://{ascii_host(parsed.hostname).rstrip('.').lower()}:{port}"


def _reader_elsewhere(var: str, row: Mapping[str, object], yours: Mapping[str, Mapping[str, object]]) -> str | None:
    """The name of your profile that reads ``var`` for another host than ``row``'s (None: none does,
    or another of yours reads it for ``row``'s host: one token your profiles use for two gateways
    goes to either, as they send it)."""
    readers = {owner: _destination(own) for owner, own in yours.items() if var in (own.get(k) for k in _ENV_KEYS)}
    here = _destination(row)
    if here in readers.values():
        return None
    return next(iter(readers), None)


CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|passw|cookie|session|signature", re.IGNORECASE)
"""Header names that carry a credential (``Authorization``, ``x-api-key``, ``Cookie``, ``X-Auth-Token``)."""


def own_credential(row: Mapping[str, object]) -> str | None:
    """The field of ``row`` that brings a credential of the file's own: a literal ``api_key`` or
    ``auth_token``, or a header named like one (None: the profile uses the user's)."""
    literal = [key for key in ("api_key", "auth_token") if row.get(key)]
    headers = row.get("headers")
    named = [f"headers[{h!r}]" for h in (headers if isinstance(headers, dict) else {}) if CREDENTIAL_HEADER.search(str(h))]
    return next(iter(literal + named), None)


def check_trusted(name: str, row: Mapping[str, object], where: str) -> None:
    """Before a project profile's first use: its ``base_url`` host must be one the user trusted;
    without one (the SDK's own host: Anthropic's API, Bedrock's, Vertex's), it may not bring a
    credential of its own."""
    url = row.get("base_url")
    if not isinstance(url, str):
        _check_the_sdks_host(name, row, where)
        return
    host = host_of(url)
    if host in trusted_hosts():
        if is_the_sdks_host(url):  # trusted as where your key goes: not a host of the file's own
            _check_the_sdks_host(name, row, where)
        else:
            _check_cloud_credential(name, row, where, host)
        return
    raise UntrustedEndpointError(
        f"endpoint {name!r} comes from the project file {where} and would send your credentials to {host}, "
        f"a host you have not trusted. If you trust it, run once: from nbagent.providers.endpoint_trust "
        f"import trust_host; trust_host({host!r})  (remembered in ~/{TRUST_FILE}, not in the project)")


_CLOUD_CREDENTIAL = {"bedrock": ("api_key", "your AWS credentials would sign for it, or your AWS_BEARER_TOKEN_BEDROCK go there"),
                     "vertex": ("auth_token", "your Google credentials' access token would go there")}


def _check_cloud_credential(name: str, row: Mapping[str, object], where: str, host: str) -> None:
    """A project profile of a cloud kind naming a host of its own must name the credential to send
    there: without one, the SDK's cloud client sends the one it finds (a Google access token to your
    whole cloud account), to a host that may be trusted for another project only (attacker pass 24)."""
    needed = _CLOUD_CREDENTIAL.get(str(row.get("kind", "anthropic")))
    if needed is None or row.get(needed[0]) or row.get(f"{needed[0]}_env"):
        return
    raise EndpointError(f"endpoint {name!r} comes from the project file {where} and names {host} without "
                        f"{needed[0]} or {needed[0]}_env: {needed[1]}. Name the credential for that host, or put "
                        "the profile in ~/.nbagent/endpoints.json if it is yours")


SDK_HOSTS = re.compile(r"(?:[a-z0-9-]+\.)*anthropic\.com"
                       r"|bedrock(?:-runtime)?(?:-fips)?\.[a-z0-9-]+\.amazonaws\.com"
                       r"|(?:[a-z0-9-]+-)?aiplatform\.googleapis\.com")
"""The SDK's own hosts (Anthropic's API, Bedrock's, Vertex's), where anyone has an account. Not
the whole of amazonaws.com or googleapis.com: a team's gateway behind API Gateway or a load
balancer (``*.execute-api.*.amazonaws.com``, ``*.elb.amazonaws.com``) is a host of its own."""


def is_the_sdks_host(url: str) -> bool:
    """Whether ``url`` names a host of the SDK's own (``https://api.anthropic.com``): trusting it
    trusts where your own key goes, not whose account a project file's key is. A profile naming it
    brings no credential of its own, as one without ``base_url`` (a file that first used it with
    your key, once trusted, could later add its author's and receive your prompts in its logs)."""
    host = ascii_host(urllib.parse.urlsplit(url).hostname).rstrip(".").lower()
    return SDK_HOSTS.fullmatch(host) is not None


def vertex_project(project_id: str) -> str:
    """What trust is given to for a project file's Vertex profile: the Google Cloud project."""
    return f"vertex project {project_id}"


def trust_vertex_project(project_id: str) -> None:
    """Trust the Google Cloud project ``project_id`` for Vertex profiles of project files (remembered
    for this user, beside the trusted hosts)."""
    path = _trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"hosts": sorted(trusted_hosts() | {vertex_project(project_id)})})


def _check_the_sdks_host(name: str, row: Mapping[str, object], where: str) -> None:
    """A project profile without ``base_url`` goes to the SDK's own host (Anthropic's API, Bedrock's,
    Vertex's): no host to trust, but its account must be the user's. A key of the file's author, or
    (Vertex) the author's Google Cloud project called with the user's own credentials, would put the
    user's prompts, data and files in the author's request logs (Bedrock's invocation logging,
    Vertex's request-response logging)."""
    if (field := own_credential(row)) is not None:
        raise UntrustedEndpointError(
            f"endpoint {name!r} comes from the project file {where} and brings its own credential "
            f"({field}): your prompts, data and files would go to the account of whoever wrote it. "
            "If the profile is yours, put it in ~/.nbagent/endpoints.json")
    project = row.get("project_id")
    if row.get("kind") == "vertex" and isinstance(project, str) and vertex_project(project) not in trusted_hosts():
        raise UntrustedEndpointError(
            f"endpoint {name!r} comes from the project file {where} and would send your prompts, data and files, "
            f"with your Google credentials, to the Google Cloud project {project!r}, which you have not trusted. "
            f"If it is your organisation's, run once: from nbagent.providers.endpoint_trust import "
            f"trust_vertex_project; trust_vertex_project({project!r})  (remembered in ~/{TRUST_FILE}, not in the project)")


__all__ = ["CREDENTIAL_HEADER", "EndpointError", "PROJECT_ENV_PREFIX", "UntrustedEndpointError", "ascii_host",
           "check_project_row", "check_project_variables", "check_trusted", "host_of", "is_the_sdks_host",
           "own_credential", "trust_host",
           "trust_vertex_project",
           "trusted_hosts", "vertex_project"]
