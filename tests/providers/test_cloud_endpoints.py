"""Bedrock and Vertex through the SDK's own clients (issue 25), against fake transports that check
the request shape each cloud expects: SigV4 on Bedrock (an ``Authorization: AWS4-HMAC-SHA256``
header from AWS's credential chain, the model in the path, ``anthropic_version`` in the body), a
bearer token on Vertex (``:streamRawPredict`` under the project and region). No real credentials,
nothing leaves the process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from nbagent import Agent
from nbagent.engine.contracts.events import Done
from nbagent.providers.anthropic import endpoint_provider
from nbagent.providers.endpoints import Endpoint, EndpointError, endpoint_from_row, resolve_endpoint
from tests.providers.test_anthropic_wire import _Chunked, stream

AWS_SECRET = "fakeSecretKeySENTINEL0123456789abcdefgh"
VERTEX_TOKEN = "ya29.fake-SENTINEL-vertex-token-77aa"
BEDROCK_ID = "anthropic.claude-sonnet-4-5-20250929-v1:0"


class Capture:
    """Records each request; answers with a complete SSE message (Vertex streams SSE) or a 403."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.requests: list[httpx2.Request] = []

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if self.status != 200:
            return httpx2.Response(self.status, json={"message": "not with these credentials"})
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               stream=_Chunked(stream([[{"type": "text", "text": ""},
                                                        {"type": "text_delta", "text": "hi"}]], "end_turn")))


def run(agent: Agent) -> list[Any]:
    return agent.run_sync("hello").events


def test_bedrock_requests_are_sigv4_signed_with_the_model_in_the_path_and_the_clouds_body(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKESENTINEL0000")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    endpoint = endpoint_from_row("bedrock", {"kind": "bedrock", "region": "us-east-1",
                                             "model_ids": {"claude-sonnet-4-5": BEDROCK_ID}})
    fake = Capture(status=403)  # Bedrock streams AWS event-stream frames: the shape is what is checked
    agent = Agent(provider=endpoint_provider(endpoint, http_client=fake.client), model="claude-sonnet-4-5",
                  cwd=tmp_path, tools=[])
    events = run(agent)
    (request,) = fake.requests
    assert request.url.host == "bedrock-runtime.us-east-1.amazonaws.com"
    assert request.url.path == f"/model/{BEDROCK_ID}/invoke-with-response-stream"
    auth = request.headers["authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIAFAKESENTINEL0000/") and "/us-east-1/bedrock/" in auth
    assert "Signature=" in auth and "x-amz-date" in request.headers
    body = json.loads(request.content)
    assert "model" not in body and body["anthropic_version"] and body["messages"][0]["role"] == "user"
    assert body["max_tokens"] == agent.config.max_tokens and "system" in body
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "error"
    assert (done.error or "").startswith("auth: HTTP 403: not with these credentials")
    assert AWS_SECRET not in repr(events) and "Bedrock (us-east-1)" in endpoint.describe()


def test_vertex_requests_carry_the_bearer_token_to_stream_raw_predict_and_the_run_completes(tmp_path: Path) -> None:
    endpoint = Endpoint(name="vertex", kind="vertex", region="us-east5", project_id="nb-project",
                        auth_token=VERTEX_TOKEN, model_ids={"claude-haiku-4-5": "claude-haiku-4-5@20251001"})
    fake = Capture()
    agent = Agent(provider=endpoint_provider(endpoint, http_client=fake.client), model="claude-haiku-4-5",
                  cwd=tmp_path, tools=[])
    events = run(agent)
    assert isinstance(events[-1], Done) and events[-1].reason == "end_turn"
    (request,) = fake.requests
    assert request.url.host == "us-east5-aiplatform.googleapis.com"
    assert request.url.path == ("/v1/projects/nb-project/locations/us-east5/publishers/anthropic/models/"
                                "claude-haiku-4-5@20251001:streamRawPredict")
    assert request.headers["authorization"] == f"Bearer {VERTEX_TOKEN}"
    body = json.loads(request.content)
    assert "model" not in body and body["anthropic_version"] and body["stream"] is True
    assert agent.records[0].cost_usd is not None  # nbagent's id stays: the price is known
    assert VERTEX_TOKEN not in repr(agent.records) + repr(endpoint) + repr(events)


@pytest.mark.parametrize(("fields", "message"), [
    ({"kind": "bedrock"}, "needs a region"),
    ({"kind": "vertex", "region": "us-east5"}, "needs a project_id"),
    ({"kind": "azure"}, "kind must be one of"),
])
def test_a_cloud_endpoint_without_its_region_or_project_is_a_clear_error(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(EndpointError, match=message):
        Endpoint(name="cloud", **fields)


@pytest.mark.parametrize("fields", [
    {"kind": "bedrock", "region": "attacker.example:8443/"},  # bedrock-runtime.attacker.example:8443/.amazonaws.com
    {"kind": "bedrock", "region": "evil.example#"},
    {"kind": "vertex", "region": "evil.example/x?", "project_id": "p"},
    {"kind": "vertex", "region": "us-east5", "project_id": "p/../../x?"},
])
def test_a_region_or_project_that_would_pick_the_host_is_refused_before_any_client(tmp_path: Path, monkeypatch,
                                                                                   fields: dict[str, Any]) -> None:
    # A received folder's profile: the cloud SDKs build the host from the region, and the request
    # would carry the user's AWS or Google credential there.
    (tmp_path / ".nbagent").mkdir()
    (tmp_path / ".nbagent" / "endpoints.json").write_text(json.dumps({"endpoints": {"team": fields}}))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no user profiles, no trusted hosts
    with pytest.raises(EndpointError, match="must be a"):
        resolve_endpoint("team", cwd=tmp_path)

