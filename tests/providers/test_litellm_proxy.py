"""A real gateway in the loop (issue 25): the LiteLLM proxy, started once per test session as a
process on loopback, in front of the simulated Messages API (also on loopback).

Per-user keys without a database work through a ``custom_auth`` module (below) that returns
``UserAPIKeyAuth`` with the key's limits; ``custom_auth_run_common_checks: true`` makes the proxy
enforce them: its own 429 "Rate limit exceeded" and its 422 "Budget has been exceeded". The proxy
streams the upstream's SSE, rewrites ``model`` to its alias, and serves ``GET /v1/models/{id}``
with ``max_input_tokens`` (the window nbagent learns for a model it does not know).

Needs the ``gateway`` extra (``litellm==1.110.2`` plus the proxy's own imports; ``make test``
installs it); skipped, saying so, only when litellm cannot be imported.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Iterator

import httpx2
import pytest

from nbagent import Agent
from nbagent.engine.contracts.events import Done, RetryScheduled
from nbagent.engine.contracts.permissions import allow_all
from nbagent.providers.anthropic import endpoint_provider, simulated_provider
from nbagent.providers.endpoints import Endpoint
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from nbagent.providers.simulated.server import LoopbackServer
from nbagent.tools import NamespaceExecutor
from tests.engine.loop.test_query_support import RecordingSleep

from ._messages import list_content

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                       reason="litellm is not installed (pip install -e '.[test,gateway]'; make test installs it)"),
    pytest.mark.filterwarnings("ignore:nbagent has no prices"),
]

ALIAS = "sim-sonnet"
MASTER_KEY = "sk-master-nbagent-test"
STARTUP_S = 120.0  # the proxy imports for ~10-14 s on a quiet machine

CUSTOM_AUTH = '''
"""Per-user keys without a database: each key's limits, by its prefix."""
import hashlib

from litellm.proxy._types import UserAPIKeyAuth

MESSAGES = {}  # /v1/messages calls per key


async def user_api_key_auth(request, api_key):
    token = hashlib.sha256(api_key.encode()).hexdigest()
    routes = ["/v1/messages", "/v1/models/*"]
    if not request.url.path.endswith("/v1/messages"):
        return UserAPIKeyAuth(api_key=api_key, token=token, allowed_routes=routes)
    n = MESSAGES[api_key] = MESSAGES.get(api_key, 0) + 1
    if api_key.startswith("sk-broke-"):  # already spent more than its budget
        return UserAPIKeyAuth(api_key=api_key, token=token, max_budget=0.0001, spend=1.0, allowed_routes=routes)
    if api_key.startswith("sk-burst-"):  # one request a minute for its first two requests
        return UserAPIKeyAuth(api_key=api_key, token=token, rpm_limit=1 if n <= 2 else None, allowed_routes=routes)
    return UserAPIKeyAuth(api_key=api_key, token=token, allowed_routes=routes)
'''


def _config(upstream: str) -> str:
    return f"""
model_list:
  - model_name: {ALIAS}
    litellm_params:
      model: anthropic/claude-sonnet-5-5
      api_base: {upstream}
      api_key: sk-simulated-upstream
    model_info:
      max_input_tokens: 1000000
      input_cost_per_token: 0.000002
      output_cost_per_token: 0.00001
general_settings:
  master_key: {MASTER_KEY}
  custom_auth: custom_auth.user_api_key_auth
  custom_auth_run_common_checks: true
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _exited_before_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> bool:
    """True when the proxy exited before it answered (most likely its port was taken meanwhile)."""
    try:
        _wait_until_up(url, proc, log)
    except RuntimeError:
        if proc.poll() is not None:
            return True
        raise
    return False


def _wait_until_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{url}/health/liveliness", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)  # polling a starting process, not synchronising with a test's own work
    tail = log.read_text(errors="replace")[-3000:]
    raise RuntimeError(f"the LiteLLM proxy did not come up at {url} within {STARTUP_S:g} s; its log ends:\n{tail}")


@pytest.fixture(scope="session")
def upstream() -> Iterator[LoopbackServer]:
    with LoopbackServer(SimulatedAPI()) as server:
        yield server


def api_of(server: LoopbackServer) -> SimulatedAPI:
    """The simulated API the upstream serves."""
    assert isinstance(server.api, SimulatedAPI)
    return server.api


@pytest.fixture(scope="session")
def proxy(upstream: LoopbackServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("litellm")
    (folder / "custom_auth.py").write_text(CUSTOM_AUTH)
    (folder / "config.yaml").write_text(_config(upstream.base_url))
    env = {**os.environ, "LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONPATH": str(folder), "NO_PROXY": "127.0.0.1,localhost"}
    log = folder / "proxy.log"
    for _ in range(3):  # a port found free can be taken before the proxy binds it: it exits, try another
        port = _free_port()
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "litellm.proxy.proxy_cli", "--config", str(folder / "config.yaml"),
                 "--host", "127.0.0.1", "--port", str(port)], cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        if not _exited_before_up(url, proc, log):
            break
    try:
        _wait_until_up(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def script() -> list[Any]:
    """Three prompts, two of them with a tool call."""
    return [tool_reply("python", {"code": "print(6 * 7)"}, text="Computing."), text_reply("It is 42."),
            tool_reply("python", {"code": "print(2 + 2)"}), text_reply("It is 4."), text_reply("Done.")]


PROMPTS = ("What is 6 * 7?", "And 2 + 2?", "Thanks.")


def gateway_agent(proxy: str, key: str, tmp_path: Path, **settings: Any) -> Agent:
    endpoint = Endpoint(name="litellm", base_url=proxy, auth_token=key)
    return Agent(provider=endpoint_provider(endpoint, http_client=lambda: httpx2.AsyncClient(trust_env=False)),
                 cwd=tmp_path, executor=NamespaceExecutor({}), can_use_tool=allow_all, sleep=RecordingSleep(),
                 model=ALIAS, **settings)


async def session_of(agent: Agent) -> list[Any]:
    events: list[Any] = []
    for prompt in PROMPTS:
        events += [e async for e in agent.run(prompt)]
    return events


async def test_a_three_prompt_session_through_the_proxy_matches_the_direct_one(
        proxy: str, upstream: LoopbackServer, tmp_path: Path) -> None:
    direct = Agent(provider=simulated_provider(SimulatedAPI(script())), model="claude-sonnet-5-5", cwd=tmp_path,
                   executor=NamespaceExecutor({}), can_use_tool=allow_all, sleep=RecordingSleep())
    direct_events = await session_of(direct)
    api_of(upstream).reset(script())
    agent = gateway_agent(proxy, f"sk-user-{uuid.uuid4().hex}", tmp_path)
    events = await session_of(agent)

    assert [e.reason for e in events if isinstance(e, Done)] == ["end_turn"] * 3
    assert list(agent.history) == list(direct.history)  # identical history, tool calls included
    assert [r.usage for r in agent.records] == [r.usage for r in direct.records]  # usage passed through
    assert sum(r.usage.cache_read_input_tokens for r in agent.records) > 0  # cache usage too
    assert {r.model for r in agent.records} == {ALIAS}  # the proxy answers with its alias
    assert agent.context_window == 1_000_000  # learned from GET /v1/models/sim-sonnet
    assert all(r.cost_usd is None for r in agent.records)  # unpriced: "–", never Claude's price
    sent = [r for r in api_of(upstream).requests if r.path.endswith("/v1/messages")]
    assert len(sent) == len(agent.records) == 5 and {r.body["model"] for r in sent} == {"claude-sonnet-5-5"}
    assert not [e for e in direct_events + events if isinstance(e, RetryScheduled)]


async def test_the_gateways_own_429_gets_a_countdown_and_the_request_then_succeeds(
        proxy: str, upstream: LoopbackServer, tmp_path: Path) -> None:
    api_of(upstream).reset(script())
    agent = gateway_agent(proxy, f"sk-burst-{uuid.uuid4().hex}", tmp_path)
    events = [e async for e in agent.run(PROMPTS[0])]
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert len(retries) == 1
    retry = retries[0]
    assert (retry.error_kind, retry.status) == ("rate_limit", 429)
    assert 0 < retry.delay_s <= 2.0  # the proxy drops retry-after: a jittered first backoff step
    assert "Rate limit exceeded" in retry.message
    assert isinstance(events[-1], Done) and events[-1].reason == "end_turn"
    last = list_content(agent.history[-1])[-1]
    assert last["type"] == "text" and last["text"] == "It is 42."


async def test_the_gateways_budget_error_ends_the_run_as_a_budget_stop_in_one_line(
        proxy: str, upstream: LoopbackServer, tmp_path: Path) -> None:
    # The key's budget (0.0001 USD) is spent by its first request; the proxy records that spend
    # after answering, so the refusal comes at the next request it admits (within the session).
    api_of(upstream).reset(script())
    agent = gateway_agent(proxy, f"sk-broke-{uuid.uuid4().hex}", tmp_path)
    dones: list[Done] = []
    events: list[Any] = []
    for prompt in PROMPTS:
        events += [e async for e in agent.run(prompt)]
        dones = [e for e in events if isinstance(e, Done)]
        if dones[-1].reason != "end_turn":
            break
    done = dones[-1]
    assert done.reason == "max_budget" and done.error is None, done
    assert done.stopped is not None and "\n" not in done.stopped
    assert done.stopped.startswith("stopped: the endpoint's budget for this key is spent (Budget has been exceeded")
    assert not [e for e in events if e.kind in ("retry_scheduled", "api_request_failed")]
    answered = [r for r in api_of(upstream).requests if r.path.endswith("/v1/messages")]
    assert len(answered) == len(agent.records) >= 1  # the refused request never reached the upstream
    assert agent.history[-1]["role"] == "user"  # history stays valid: the refusal is answered


async def test_one_student_over_budget_stops_in_one_line_while_the_others_go_on(
        proxy: str, upstream: LoopbackServer, tmp_path: Path) -> None:
    """A class on one gateway with per-user keys (issue 27): the student whose key's budget is
    spent gets a budget stop; the students beside them, on the same gateway, are not affected."""
    import asyncio

    api_of(upstream).reset(responder=lambda body: text_reply("Here you are."))
    kinds = {"ana": "user", "ben": "broke", "eva": "user"}
    for name in kinds:
        (tmp_path / name).mkdir()
    students = {name: gateway_agent(proxy, f"sk-{kind}-{uuid.uuid4().hex}", tmp_path / name)
                for name, kind in kinds.items()}

    async def two_prompts(agent: Agent) -> list[str]:
        reasons: list[str] = []
        for prompt in ("Hello.", "Once more."):
            done = [e async for e in agent.run(prompt)][-1]
            assert isinstance(done, Done), done
            reasons.append(done.reason)
        return reasons

    outcomes = dict(zip(students, await asyncio.gather(*(two_prompts(a) for a in students.values())), strict=True))
    assert outcomes["ana"] == outcomes["eva"] == ["end_turn", "end_turn"]
    assert outcomes["ben"][-1] == "max_budget"
