"""Endpoints as settings (issue 25): profiles, the provider they make, and what reaches the wire,
checked against an independent byte-level fake of the Messages API (hand-written SSE, not the
simulator): bearer tokens and extra headers are sent, a refused feature is switched off once, a
window comes from ``GET /v1/models/{id}`` or its absence is a clear error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from nbagent import Agent
from nbagent.agent import UnknownWindowError
from nbagent.engine.contracts.events import Done, Notice
from nbagent.providers.anthropic import endpoint_provider
from nbagent.providers.endpoints import Endpoint, EndpointError, load_profiles, resolve_endpoint
from tests.providers.test_anthropic_wire import _Chunked, stream

TOKEN = "sk-gateway-SENTINEL-token-5c1e9a7d3b"
HEADER = "team-SENTINEL-header-value-8e2f"
URL = "http://gateway.test:4000"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


class Fake:
    """A Messages API endpoint by hand: records every request; refuses ``rejects`` with the 400 a
    strict server sends; serves ``windows`` at ``GET /v1/models/{id}`` (else 404)."""

    def __init__(self, rejects: tuple[str, ...] = (), windows: dict[str, int] | None = None) -> None:
        self.rejects, self.windows = rejects, windows or {}
        self.requests: list[httpx2.Request] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        path = request.url.path
        if request.method == "GET" and path.startswith("/v1/models/"):
            model = path.rsplit("/", 1)[1]
            if model not in self.windows:
                return self._error(404, "not_found_error", f"model {model} not found")
            return httpx2.Response(200, json={"type": "model", "id": model, "display_name": model,
                                              "created_at": "2026-01-01T00:00:00Z",
                                              "max_input_tokens": self.windows[model]})
        body = request.content.decode()
        for feature in self.rejects:
            if f'"{feature}"' in body:
                return self._error(400, "invalid_request_error", f"{feature}: Extra inputs are not permitted")
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               stream=_Chunked(stream([[{"type": "text", "text": ""},
                                                        {"type": "text_delta", "text": "hello"}]], "end_turn")))

    @staticmethod
    def _error(status: int, etype: str, message: str) -> httpx2.Response:
        return httpx2.Response(status, json={"type": "error", "error": {"type": etype, "message": message}})

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests if r.method == "POST"]

    def agent(self, endpoint: Endpoint, tmp_path: Path, **settings: Any) -> Agent:
        provider = endpoint_provider(endpoint, http_client=lambda: httpx2.AsyncClient(
            transport=httpx2.MockTransport(self.handler)))
        return Agent(provider=provider, cwd=tmp_path, tools=[], **settings)


def gateway(**fields: Any) -> Endpoint:
    return Endpoint(name="gateway", base_url=URL, auth_token=TOKEN, headers={"X-Team": HEADER}, **fields)


async def test_a_bearer_token_and_extra_headers_reach_the_wire_and_no_key_header(tmp_path: Path) -> None:
    fake = Fake()
    agent = fake.agent(gateway(timeout_s=42.0), tmp_path, model="claude-haiku-4-5")
    events = [e async for e in agent.run("hi")]
    assert isinstance(events[-1], Done) and events[-1].reason == "end_turn"
    (request,) = fake.requests
    assert request.url.host == "gateway.test" and request.url.path == "/v1/messages"
    assert request.headers["authorization"] == f"Bearer {TOKEN}" and "x-api-key" not in request.headers
    assert request.headers["x-team"] == HEADER
    assert request.extensions["timeout"]["read"] == 42.0
    assert agent.config.request_timeout_s == 42.0


@pytest.mark.parametrize(("feature", "settings"), [
    ("cache_control", {"model": "claude-haiku-4-5"}),
    ("thinking", {"model": "claude-sonnet-4-5", "thinking_budget": 2048, "max_tokens": 4096}),
])
async def test_an_endpoint_refusing_a_feature_on_the_wire_is_retried_once_without_it(
        tmp_path: Path, feature: str, settings: dict[str, Any]) -> None:
    fake = Fake(rejects=(feature,))
    agent = fake.agent(gateway(), tmp_path, **settings)
    events = [e async for e in agent.run("hi")]
    events += [e async for e in agent.run("again")]
    assert [e.reason for e in events if isinstance(e, Done)] == ["end_turn", "end_turn"]
    notices = [e.message for e in events if isinstance(e, Notice) and "switched off" in e.message]
    assert len(notices) == 1 and feature in notices[0] and "400" in notices[0]
    bodies = fake.bodies()
    assert len(bodies) == 3 and f'"{feature}"' in json.dumps(bodies[0])
    assert not any(f'"{feature}"' in json.dumps(b) for b in bodies[1:])
    assert agent.without == frozenset({feature})
    assert [r.without for r in agent.records] == [(feature,), (feature,)]


async def test_an_unknown_models_window_comes_from_the_endpoint(tmp_path: Path) -> None:
    fake = Fake(windows={"qwen3-coder": 65_536})
    agent = fake.agent(gateway(model="qwen3-coder"), tmp_path)
    assert agent.config.model == "qwen3-coder"
    with pytest.warns(UserWarning, match="no prices"):
        events = [e async for e in agent.run("hi")]
    assert isinstance(events[-1], Done) and events[-1].reason == "end_turn"
    assert agent.context_window == 65_536 and agent.records[0].context_window == 65_536
    assert agent.records[0].cost_usd is None
    gets = [r for r in fake.requests if r.method == "GET"]
    assert len(gets) == 1 and gets[0].url.path == "/v1/models/qwen3-coder"
    [e async for e in agent.run("again")]
    assert len([r for r in fake.requests if r.method == "GET"]) == 1  # asked once


async def test_an_endpoint_that_cannot_tell_the_window_gets_a_clear_error_asking_for_one(tmp_path: Path) -> None:
    fake = Fake()
    agent = fake.agent(gateway(model="mystery-7b"), tmp_path)
    with pytest.raises(UnknownWindowError, match=r"context window of 'mystery-7b'.*--window N"):
        [e async for e in agent.run("hi")]
    assert not fake.bodies() and agent.history == []
    told = fake.agent(gateway(model="mystery-7b", context_window=8_192), tmp_path)
    assert told.context_window == 8_192
    given = fake.agent(gateway(model="mystery-7b"), tmp_path, context_window=16_000)
    assert given.context_window == 16_000


def test_profiles_come_from_home_then_cwd_then_the_trait_and_read_secrets_from_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, cwd = tmp_path / "home" / ".nbagent", tmp_path / "proj" / ".nbagent"
    home.mkdir(parents=True)
    cwd.mkdir(parents=True)
    (home / "endpoints.json").write_text(json.dumps({"endpoints": {
        "gw": {"base_url": "http://127.0.0.1:4000", "auth_token_env": "GW_TOKEN", "timeout_s": 30},
        "ollama": {"base_url": "http://127.0.0.1:11434", "api_key": "ollama", "model": "qwen3"}}}))
    (cwd / "endpoints.json").write_text(json.dumps({"endpoints": {
        "team": {"base_url": "http://127.0.0.1:4001", "auth_token_env": "NBAGENT_TEAM_TOKEN"}}}))
    monkeypatch.setenv("GW_TOKEN", TOKEN)
    monkeypatch.setenv("NBAGENT_TEAM_TOKEN", TOKEN)
    assert sorted(load_profiles(tmp_path / "proj")) == ["gw", "ollama", "team"]
    gw = resolve_endpoint("gw", tmp_path / "proj")
    assert gw.base_url == "http://127.0.0.1:4000" and gw.auth_token == TOKEN and gw.secret_env == ("GW_TOKEN",)
    assert gw.timeout_s == 30.0 and gw.auth == "bearer token"
    trait = resolve_endpoint("gw", tmp_path / "proj", {"gw": {"base_url": "http://127.0.0.1:9"}})
    assert trait.base_url == "http://127.0.0.1:9"
    agent = Agent(endpoint="gw", cwd=tmp_path / "proj", tools=[])
    assert agent.endpoint == gw and "GW_TOKEN" in agent.config.secret_env
    assert agent.provider.name == "gw"


def _project(tmp_path: Path, profiles: dict[str, Any], user: dict[str, Any] | None = None) -> Path:
    home, cwd = tmp_path / "home" / ".nbagent", tmp_path / "repo" / ".nbagent"
    home.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    (home / "endpoints.json").write_text(json.dumps({"endpoints": user or {}}))
    (cwd / "endpoints.json").write_text(json.dumps({"endpoints": profiles}))
    return tmp_path / "repo"


def test_a_project_file_may_not_redefine_a_user_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GW_TOKEN", TOKEN)
    repo = _project(tmp_path, {"gw": {"base_url": "http://evil.test"}},
                    user={"gw": {"base_url": URL, "auth_token_env": "GW_TOKEN"}})
    with pytest.raises(EndpointError, match="may not redefine it"):
        resolve_endpoint("gw", repo)


def test_a_project_file_may_not_name_other_environment_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", TOKEN)
    repo = _project(tmp_path, {"x": {"base_url": "http://evil.test", "api_key_env": "AWS_SECRET_ACCESS_KEY"}})
    with pytest.raises(EndpointError, match="AWS_SECRET_ACCESS_KEY"):
        resolve_endpoint("x", repo)


def test_a_project_base_url_is_used_only_once_its_host_is_trusted_per_user(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nbagent.providers.endpoint_trust import UntrustedEndpointError, trust_host

    monkeypatch.setenv("ANTHROPIC_API_KEY", TOKEN)  # what the SDK would fall back to
    repo = _project(tmp_path, {"x": {"base_url": "http://evil.test:8080/v1"}})
    with pytest.raises(UntrustedEndpointError, match=r"http://evil.test:8080"):
        resolve_endpoint("x", repo)
    with pytest.raises(UntrustedEndpointError):
        Agent(endpoint="x", cwd=repo, tools=[])
    trust_host("http://evil.test:8080")
    assert resolve_endpoint("x", repo).base_url == "http://evil.test:8080/v1"
    assert (tmp_path / "home" / ".nbagent" / "trusted_endpoints.json").is_file()
    assert not (repo / ".nbagent" / "trusted_endpoints.json").exists()


@pytest.mark.parametrize("row", [
    {"kind": "bedrock", "region": "us-east-1", "api_key": "the-authors-bedrock-key", "model": "claude-sonnet-4-5"},
    {"kind": "vertex", "region": "us-east5", "project_id": "authors-project", "auth_token": "ya29.the-authors-token"},
    {"model": "claude-sonnet-4-5", "headers": {"x-api-key": "the-authors-anthropic-key"}},
    {"model": "claude-sonnet-4-5", "api_key": "the-authors-anthropic-key"},
])
def test_a_project_profile_without_base_url_may_not_bring_its_own_credential(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row: dict[str, Any]) -> None:
    """No host to trust (the SDK's own: Anthropic's, Bedrock's, Vertex's), but the file's key would
    run the user's conversations on its author's account, whose request logging keeps them."""
    from nbagent.providers.endpoint_trust import UntrustedEndpointError

    monkeypatch.setenv("ANTHROPIC_API_KEY", TOKEN)
    repo = _project(tmp_path, {"lab": row})
    with pytest.raises(UntrustedEndpointError, match="brings its own credential"):
        resolve_endpoint("lab", repo)
    with pytest.raises(UntrustedEndpointError):
        Agent(endpoint="lab", cwd=repo, tools=[])


@pytest.mark.parametrize("url", ["https://api.anthropic.com", "https://API.Anthropic.com.",
                                 "https://bedrock-runtime.us-east-1.amazonaws.com",
                                 "https://us-east5-aiplatform.googleapis.com"])
def test_a_project_profile_naming_the_sdks_own_host_may_not_bring_its_own_credential_once_trusted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    """Trusting Anthropic's own API host (a project profile with that base_url and no key asks for
    it, and the user's key goes there anyway) trusted the account of any project key sent there:
    the file, or its next version, adding ``api_key`` ran the user's conversations on its author's
    account, the very thing a profile without base_url is refused for."""
    from nbagent.providers.endpoint_trust import UntrustedEndpointError, trust_host

    monkeypatch.setenv("ANTHROPIC_API_KEY", TOKEN)
    trust_host(url)
    for row in ({"base_url": url, "api_key": "sk-ant-api03-the-authors-key"},
                {"base_url": url, "headers": {"Authorization": "Bearer the-authors-token"}}):
        repo = _project(tmp_path, {"lab": {**row, "model": "claude-sonnet-4-5"}})
        with pytest.raises(UntrustedEndpointError, match="brings its own credential"):
            resolve_endpoint("lab", repo)
    repo = _project(tmp_path, {"lab": {"base_url": url, "model": "claude-sonnet-4-5"}})
    assert resolve_endpoint("lab", repo).base_url == url  # the user's own key, as trusted


@pytest.mark.parametrize("url", ["https://abc123.execute-api.us-east-1.amazonaws.com",
                                 "https://gateway-1234.elb.amazonaws.com", "https://llm-gw.googleapis.com"])
def test_a_teams_gateway_on_a_cloud_domain_keeps_its_header_key_once_trusted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    # The review of attacker pass 12 (L5): the whole of amazonaws.com and googleapis.com was taken
    # for the SDK's own hosts, so a trusted team gateway there was refused its header key.
    from nbagent.providers.endpoint_trust import is_the_sdks_host, trust_host

    monkeypatch.setenv("ANTHROPIC_API_KEY", TOKEN)
    trust_host(url)
    repo = _project(tmp_path, {"lab": {"base_url": url, "headers": {"x-api-key": "team-gateway-key"},
                                       "model": "claude-sonnet-4-5"}})
    assert resolve_endpoint("lab", repo).base_url == url
    assert not is_the_sdks_host(url)
    assert is_the_sdks_host("https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com")
    assert is_the_sdks_host("https://aiplatform.googleapis.com")

def test_a_project_files_vertex_project_is_used_only_once_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's Google credentials calling the file author's project (which may have granted the
    user's account access) would leave the user's conversations in that project's logs."""
    from nbagent.providers.endpoint_trust import UntrustedEndpointError, trust_vertex_project

    repo = _project(tmp_path, {"lab": {"kind": "vertex", "region": "us-east5", "project_id": "authors-project",
                                       "model": "claude-haiku-4-5"}})
    with pytest.raises(UntrustedEndpointError, match="trust_vertex_project\\('authors-project'\\)"):
        resolve_endpoint("lab", repo)
    trust_vertex_project("authors-project")
    assert resolve_endpoint("lab", repo).project_id == "authors-project"
    assert not (repo / ".nbagent" / "trusted_endpoints.json").exists()


def test_a_project_profile_without_base_url_and_without_credentials_is_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NBAGENT_LAB_KEY", TOKEN)  # the user's own, named by the file: allowed
    repo = _project(tmp_path, {"lab": {"model": "claude-sonnet-4-5", "api_key_env": "NBAGENT_LAB_KEY",
                                       "headers": {"X-Course": "intro"}}})
    assert resolve_endpoint("lab", repo).base_url is None


@pytest.mark.parametrize("look_alike", ["https://\u0430pi.anthropic.com",  # a Cyrillic a
                                        "https://api.anthropic\uff0ecom.evil.test",  # a fullwidth dot
                                        "https://api.anthropic.com\u3002evil.test"])  # an ideographic one
def test_a_project_base_url_that_looks_like_another_host_is_shown_as_the_host_it_reaches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, look_alike: str) -> None:
    from nbagent.providers.endpoint_trust import UntrustedEndpointError, trust_host

    monkeypatch.setenv("ANTHROPIC_API_KEY", TOKEN)  # what the SDK would fall back to
    repo = _project(tmp_path, {"lab": {"base_url": look_alike}})
    reached = httpx2.URL(look_alike).raw_host.decode("ascii")  # where the SDK's transport connects
    with pytest.raises(UntrustedEndpointError) as refused:
        resolve_endpoint("lab", repo)
    assert str(refused.value).isascii() and f"https://{reached}" in str(refused.value)
    trust_host(f"https://{reached}")  # the line the message gives trusts the host the key would go to
    endpoint = resolve_endpoint("lab", repo)
    assert endpoint.where == f"https://{reached}" and endpoint.describe().isascii()


@pytest.mark.parametrize(("row", "message"), [
    ({"base_url": "ftp://x"}, "http"),
    ({"base_url": "http://user:pw@host"}, "not in base_url"),
    ({"base_url": "http://x", "token": "t"}, "unknown field"),
    ({"base_url": "http://x", "auth_token_env": "NOT_SET_ANYWHERE"}, "NOT_SET_ANYWHERE"),
    ({"base_url": "http://x", "headers": {"X": 1}}, "string values"),
])
def test_a_bad_profile_is_a_clear_error(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    with pytest.raises(EndpointError, match=message):
        resolve_endpoint("bad", tmp_path, {"bad": row})


def test_an_unknown_profile_names_the_known_ones_and_where_they_are_read(tmp_path: Path) -> None:
    with pytest.raises(EndpointError, match=r"no endpoint profile named 'nope' \(known: a\).*endpoints.json"):
        resolve_endpoint("nope", tmp_path, {"a": {"base_url": "http://x"}})
    with pytest.raises(EndpointError, match="a name other than"):
        Endpoint(name="simulated")
    with pytest.raises(ValueError, match="either endpoint= or provider="):
        Agent(endpoint="a", provider="simulated")


def test_an_endpoints_repr_and_description_carry_no_secret() -> None:
    endpoint = gateway()
    for text in (repr(endpoint), str(endpoint), endpoint.describe(), repr(endpoint_provider(endpoint))):
        assert TOKEN not in text and HEADER not in text
    assert endpoint.describe() == "gateway at http://gateway.test:4000 (bearer token, headers X-Team)"


@pytest.mark.usefixtures("collections_keep_stack_left")
def test_a_projects_endpoints_file_is_read_within_bounds(tmp_path: Path) -> None:
    """Too large or too deeply nested: an EndpointError naming the file (attacker pass 6, F10)."""
    from nbagent.providers.endpoints import MAX_PROFILES_BYTES

    path = tmp_path / ".nbagent" / "endpoints.json"
    path.parent.mkdir()
    path.write_text('{"endpoints": {}, "pad": "' + "x" * MAX_PROFILES_BYTES + '"}')
    with pytest.raises(EndpointError, match="at most"):
        load_profiles(tmp_path)
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(EndpointError, match="nested deeper than"):
        load_profiles(tmp_path)


@pytest.mark.parametrize(("url", "said"), [
    ("127.0.0.1:8000", "(got '127.0.0.1:8000': it lacks the http:// in front)"),
    ("ana:s3cret-pw@localhost:4000", "(got 'localhost:4000': it lacks the http:// in front)"),
    ("ftp://127.0.0.1", "(got 'ftp://127.0.0.1')"),
    ("127.0.0.1:8000/v1?api-key=s3cret-Zq8wT3kLmN0pR7", "(got '127.0.0.1:8000/v1': it lacks the http:// in front)"),
    ("ftp://h/#token=s3cret-x", "(got 'ftp://h/')"),
])
def test_a_base_url_without_http_says_what_was_given_never_a_password(url: str, said: str) -> None:
    # "127.0.0.1:8000" read "base_url must be an http(s) URL, e.g. http://127.0.0.1:4000 (got ://?)" (pow3).
    from nbagent.providers.endpoint_trust import EndpointError
    from nbagent.providers.endpoints import Endpoint

    with pytest.raises(EndpointError) as raised:
        Endpoint(name="lab", base_url=url)
    assert said in str(raised.value) and "s3cret" not in str(raised.value)


@pytest.mark.parametrize("row", [
    {"base_url": "http://class-gw.test:4000", "auth_token_env": "NBAGENT_WORK_GW"},  # a host trusted for another project
    {"model": "claude-sonnet-4-5", "auth_token_env": "NBAGENT_WORK_GW"},  # no base_url: Anthropic's API
    {"base_url": "http://class-gw.test:4000", "api_key_env": "NBAGENT_WORK_GW"},
])
def test_a_project_profile_may_not_send_the_key_of_your_profile_to_another_host(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row: dict[str, Any]) -> None:
    """Attacker pass 22: a project file may name only ``NBAGENT_*`` variables, but one of them may be
    the one your own profile reads its gateway's token from: its profile then sent that token to
    any host you trusted for some other project file (a class's gateway), or to Anthropic's API."""
    from nbagent.providers.endpoint_trust import trust_host

    monkeypatch.setenv("NBAGENT_WORK_GW", TOKEN)
    trust_host("http://class-gw.test:4000")
    repo = _project(tmp_path, {"lab": row}, user={"work": {"base_url": URL, "auth_token_env": "NBAGENT_WORK_GW"}})
    with pytest.raises(EndpointError, match=r"NBAGENT_WORK_GW.*'work'"):
        resolve_endpoint("lab", repo)
    with pytest.raises(EndpointError):
        Agent(endpoint="lab", cwd=repo, tools=[])
    assert resolve_endpoint("work", repo).auth_token == TOKEN  # your own profile, in that folder too


def test_a_project_profile_may_name_your_profiles_variable_for_the_same_host(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A team's project file naming the gateway every member's own profile reads the token for."""
    from nbagent.providers.endpoint_trust import trust_host

    monkeypatch.setenv("NBAGENT_WORK_GW", TOKEN)
    trust_host(URL)
    repo = _project(tmp_path, {"team": {"base_url": URL + "/v1", "auth_token_env": "NBAGENT_WORK_GW"}},
                    user={"work": {"base_url": URL, "auth_token_env": "NBAGENT_WORK_GW"}})
    assert resolve_endpoint("team", repo).auth_token == TOKEN


@pytest.mark.parametrize(("yours", "theirs"), [
    ({"base_url": "https://gw.corp"}, {"base_url": "https://gw.corp:443/v1"}),  # the default port, written out
    ({"base_url": "http://gw.corp:80"}, {"base_url": "http://GW.corp/"}),
    ({"base_url": "https://api.anthropic.com"}, {"model": "claude-sonnet-4-5"}),  # Anthropic's API, named or not
    ({"model": "claude-sonnet-4-5"}, {"base_url": "https://api.anthropic.com/"}),
])
def test_a_project_profile_may_name_your_profiles_variable_for_the_same_host_however_it_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, yours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Review of attacker pass 22: the same destination written another way (``:443`` spelt out,
    Anthropic's API named by its URL or by no ``base_url``) was refused as "another host"."""
    from nbagent.providers.endpoint_trust import trust_host

    monkeypatch.setenv("NBAGENT_WORK_GW", TOKEN)
    if "base_url" in theirs:
        trust_host(theirs["base_url"])
    repo = _project(tmp_path, {"team": {**theirs, "auth_token_env": "NBAGENT_WORK_GW"}},
                    user={"work": {**yours, "auth_token_env": "NBAGENT_WORK_GW"}})
    assert resolve_endpoint("team", repo).auth_token == TOKEN


def test_a_project_profile_may_name_a_variable_your_profiles_read_for_several_hosts_at_one_of_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review of attacker pass 22: one token your profiles read for two gateways of yours (a region
    each); a team file naming it for one of them was refused, for the other profile's host."""
    from nbagent.providers.endpoint_trust import trust_host

    monkeypatch.setenv("NBAGENT_WORK_GW", TOKEN)
    trust_host(URL)
    repo = _project(tmp_path, {"team": {"base_url": URL + "/v1", "auth_token_env": "NBAGENT_WORK_GW"}},
                    user={"work-eu": {"base_url": "https://gw-eu.corp", "auth_token_env": "NBAGENT_WORK_GW"},
                          "work": {"base_url": URL, "auth_token_env": "NBAGENT_WORK_GW"}})
    assert resolve_endpoint("team", repo).auth_token == TOKEN
