"""Attacker pass 24: a received project's endpoint profile naming a host of its own (one you trusted,
maybe for another project) and no key got the key the SDK finds by itself: your ``ANTHROPIC_API_KEY``
(which a project file may not name in ``*_env``), a Bedrock bearer token or Google's access token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.events import Done
from nbagent.providers.endpoints import Endpoint, EndpointError, resolve_endpoint
from tests.providers.test_endpoints import TOKEN, URL, Fake, _project

CLASS_GW = "http://class-gw.test:4000"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # trust is remembered there, never in ~


def _sent_credentials(fake: Fake) -> list[str]:
    return [value for request in fake.requests for name, value in request.headers.items()
            if name.lower() in ("authorization", "x-api-key") or TOKEN in value]


async def _ask(endpoint: Endpoint, tmp_path: Path) -> Fake:
    fake = Fake()
    agent = fake.agent(endpoint, tmp_path, model="claude-haiku-4-5")
    events = [e async for e in agent.run("hi")]
    assert isinstance(events[-1], Done)
    return fake


@pytest.mark.parametrize("variable", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
async def test_a_project_profile_for_a_host_of_its_own_never_gets_your_anthropic_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    from nbagent.providers.endpoint_trust import trust_host

    monkeypatch.setenv(variable, TOKEN)
    trust_host(CLASS_GW)  # once, for a course's project file
    repo = _project(tmp_path, {"lab": {"base_url": CLASS_GW, "headers": {"X-Course": "intro"}}})
    fake = await _ask(resolve_endpoint("lab", repo), tmp_path)
    assert fake.requests and _sent_credentials(fake) == []
    assert fake.requests[0].headers["x-course"] == "intro"


async def test_a_project_profile_for_a_host_of_its_own_never_gets_your_custom_headers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ANTHROPIC_CUSTOM_HEADERS`` (the SDK adds it to every request) may hold your gateway's key."""
    from nbagent.providers.endpoint_trust import trust_host

    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", f"X-Gw-Key: {TOKEN}\nX-Course: yours")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-yours")
    monkeypatch.setenv("NBAGENT_CLASS_KEY", "class-key-1")
    trust_host(CLASS_GW)
    repo = _project(tmp_path, {"lab": {"base_url": CLASS_GW, "auth_token_env": "NBAGENT_CLASS_KEY",
                                       "headers": {"X-Course": "intro"}}}, user={"mine": {"base_url": URL}})
    (request,) = (await _ask(resolve_endpoint("lab", repo), tmp_path)).requests
    assert "x-gw-key" not in request.headers and request.headers["x-course"] == "intro"
    assert request.headers["authorization"] == "Bearer class-key-1"
    (request,) = (await _ask(resolve_endpoint("mine", repo), tmp_path)).requests
    assert request.headers["x-gw-key"] == TOKEN  # your own profile: as the SDK sends it


async def test_a_project_profiles_own_key_and_your_own_keyless_profile_still_authenticate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nbagent.providers.endpoint_trust import trust_host

    monkeypatch.setenv("ANTHROPIC_API_KEY", TOKEN)
    monkeypatch.setenv("NBAGENT_CLASS_KEY", "class-key-1")
    trust_host(CLASS_GW)
    repo = _project(tmp_path, {"lab": {"base_url": CLASS_GW, "auth_token_env": "NBAGENT_CLASS_KEY"},
                               "hdr": {"base_url": CLASS_GW, "headers": {"Authorization": "Bearer class-key-2"}}},
                    user={"mine": {"base_url": URL}})
    assert _sent_credentials(await _ask(resolve_endpoint("lab", repo), tmp_path)) == ["Bearer class-key-1"]
    assert _sent_credentials(await _ask(resolve_endpoint("hdr", repo), tmp_path)) == ["Bearer class-key-2"]
    # your own file's profile: the SDK's credential, as you wrote it (and Anthropic's API for a project file)
    assert TOKEN in "".join(_sent_credentials(await _ask(resolve_endpoint("mine", repo), tmp_path)))
    assert not resolve_endpoint("mine", repo).named_credentials_only


@pytest.mark.parametrize("row", [
    {"kind": "vertex", "region": "us-east5", "project_id": "my-project", "base_url": CLASS_GW},
    {"kind": "bedrock", "region": "us-east-1", "base_url": CLASS_GW},
])
def test_a_project_cloud_profile_for_a_host_of_its_own_must_name_its_credential(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row: dict[str, Any]) -> None:
    from nbagent.providers.endpoint_trust import trust_host, trust_vertex_project

    trust_host(CLASS_GW)
    trust_vertex_project("my-project")
    monkeypatch.setenv("NBAGENT_CLASS_KEY", "class-key-1")
    repo = _project(tmp_path, {"lab": row})
    with pytest.raises(EndpointError, match=r"class-gw\.test:4000 without"):
        resolve_endpoint("lab", repo)
    key = "auth_token_env" if row["kind"] == "vertex" else "api_key_env"
    repo = _project(tmp_path, {"lab": {**row, key: "NBAGENT_CLASS_KEY"}})
    assert resolve_endpoint("lab", repo).named_credentials_only
