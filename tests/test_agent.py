"""``Agent`` wiring, and the API key guarantee (issue 4, test 7): the key never appears in a
persisted file, an event, or the repr of the agent, its config or its provider."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from nbagent import Agent
from nbagent.agent import make_provider
from nbagent.engine.contracts.errors import MissingApiKeyError
from nbagent.engine.contracts.events import Done, Notice, event_to_dict
from nbagent.engine.contracts.hooks import HookMap
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.contracts.permissions import allow_all
from nbagent.engine.state.store import SessionStore
from nbagent.providers.anthropic import AnthropicProvider
from nbagent.providers.simulated import Fault, SimulatedAPI, text_reply, tool_reply
from nbagent.result import RunResult
from nbagent.tools import NamespaceExecutor, builtin_tools
from tests.engine.loop.test_query_support import RecordingSleep, done_of, messages_requests

SENTINEL = "sk-ant-api03-SENTINEL-d0-not-leak-7f3a9c2e1b"


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def script() -> list[Any]:
    return [
        tool_reply("python", {"code": "print(6 * 7)"}, text="Computing."),
        tool_reply("write_file", {"path": "answer.txt", "content": "42\n"}),
        text_reply("The answer is 42."),
        text_reply("Second turn."),
    ]


def assert_no_key(text: str, where: str) -> None:
    assert SENTINEL not in text, f"the API key leaked into {where}"
    assert SENTINEL[-12:] not in text, f"part of the API key leaked into {where}"


async def test_the_api_key_never_appears_in_files_events_or_reprs(tmp_path: Path) -> None:
    # One retried 529 and one failed request (a 401 carries the API's message, never the key).
    api = SimulatedAPI(script(), faults={2: Fault.overloaded(), 6: Fault.auth()})
    provider = AnthropicProvider(lambda: api.async_client(api_key=SENTINEL), name="anthropic")
    task_dir = tmp_path / "task"
    agent = Agent(api_key=SENTINEL, provider=provider, cwd=tmp_path, task_dir=task_dir, can_use_tool=allow_all,
                  executor=NamespaceExecutor({}), sleep=RecordingSleep())
    events = [e async for e in agent.run("What is 6 * 7? Save it.")]
    events += [e async for e in agent.run("And again?")]
    events += [e async for e in agent.run("Once more?")]
    assert [e.reason for e in events if isinstance(e, Done)] == ["end_turn", "end_turn", "error"]
    assert (tmp_path / "answer.txt").read_text() == "42\n"
    assert len(messages_requests(api)) == 6  # the key was used: the API rejects a missing one

    files = [p for p in task_dir.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"api_conversation_history.json", "ui_messages.json", "session.json",
                                       "context_history.json"}
    for p in files:
        assert_no_key(p.read_bytes().decode("utf-8", "replace"), str(p))
    for e in events + agent.events:
        assert_no_key(repr(e), f"repr of {e.kind}")
        assert_no_key(json.dumps(event_to_dict(e), default=str), f"dict of {e.kind}")
    for name, obj in [("agent", agent), ("agent config", agent.config), ("engine config", agent.engine.config),
                      ("provider", provider), ("records", agent.records), ("totals", agent.totals),
                      ("history", agent.history), ("denials", agent.denials)]:
        assert_no_key(repr(obj), name)
        assert_no_key(str(obj), name)
    for r in api.requests:
        assert_no_key(json.dumps(r.body) + repr(r.headers), f"recorded request {r.number}")


def test_a_key_is_wiring_not_a_setting_and_real_provider_needs_one() -> None:
    provider = make_provider("anthropic", api_key=SENTINEL)
    assert provider.name == "anthropic"
    assert_no_key(repr(provider), "provider repr")
    agent = Agent(provider="anthropic", api_key=SENTINEL, tools=[])
    assert_no_key(repr(agent), "agent repr")
    assert_no_key(repr(agent.config), "config repr")
    with pytest.raises(MissingApiKeyError):
        make_provider("anthropic")
    # No key at all: the offline simulated model.
    assert make_provider().name == "simulated"


async def test_agent_runs_on_the_simulated_api_and_resumes(tmp_path: Path) -> None:
    api = SimulatedAPI([tool_reply("python", {"code": "x = 17 * 23\nprint(x)"}), text_reply("It is 391."),
                        text_reply("Still 391.")])
    from nbagent.providers.anthropic import simulated_provider

    namespace: dict[str, Any] = {}
    agent = Agent(provider=simulated_provider(api), cwd=tmp_path, task_dir=tmp_path / "t", allow=["python"],
                  executor=NamespaceExecutor(namespace))
    assert await agent.ask("17 * 23?") == "It is 391."
    assert namespace["x"] == 391
    done = RunResult(agent.events).done
    assert done is not None and done.reason == "end_turn"
    assert history_problems(agent.history) == []
    assert agent.simulated_api is api

    agent.close()  # a task folder has one writer
    resumed = Agent.resume(tmp_path / "t", provider=simulated_provider(api), cwd=tmp_path,
                           executor=NamespaceExecutor(namespace))
    assert resumed.session.history == agent.history and resumed.session.records == agent.records
    assert await resumed.ask("and now?") == "Still 391."
    assert resumed.engine.session.turn == 2
    resumed.rollback(1)
    assert resumed.session.history == agent.history
    assert SessionStore(tmp_path / "t").load().history == agent.history


def test_run_sync_and_the_simulated_notice(tmp_path: Path) -> None:
    api = SimulatedAPI([text_reply("hello")])
    from nbagent.providers.anthropic import simulated_provider

    agent = Agent(provider=simulated_provider(api), cwd=tmp_path, tools=builtin_tools())
    events = agent.run_sync("hi")
    assert isinstance(events[0], Notice) and "simulated" in events[0].message
    assert done_of(events).reason == "end_turn"
    assert repr(agent) == "Agent(model='claude-sonnet-5-5', provider='simulated', turns=1)"


def test_the_simulated_model_notice_shows_once_per_agent_not_once_per_process(tmp_path: Path) -> None:
    from nbagent.providers.anthropic import simulated_provider

    def notices(agent: Agent) -> int:
        return sum(isinstance(e, Notice) and "simulated model" in e.message for e in agent.run_sync("hi"))

    first = Agent(provider=simulated_provider(SimulatedAPI([text_reply("a"), text_reply("b")])), cwd=tmp_path)
    second = Agent(provider=simulated_provider(SimulatedAPI([text_reply("c")])), cwd=tmp_path)
    assert [notices(first), notices(first), notices(second)] == [1, 0, 1]


def test_hooks_and_permission_mode_are_agent_keywords(tmp_path: Path) -> None:
    from nbagent import Deny
    from nbagent.engine.contracts.hooks import UnknownHookError

    api = SimulatedAPI([tool_reply("python", {"code": "print(1)"}), text_reply("ok")])
    seen: list[str] = []
    hooks: HookMap = {"pre_tool_use": lambda call: Deny("hooked") if call.name == "python" else None,
                      "on_done": lambda done: seen.append(done.reason)}
    agent = Agent(provider="simulated", simulated_options={"api": api}, cwd=tmp_path, permission_mode="bypass",
                  hooks=hooks)
    assert agent.config.permission_mode == "bypass"
    done_of(agent.run_sync("run it"))
    assert [d.reason for d in agent.denials] == ["hooked"] and seen == ["end_turn"]
    with pytest.raises(UnknownHookError):
        Agent(provider="simulated", hooks={"before_everything": print})  # type: ignore[arg-type]  # deliberately wrong: an unknown hook


def test_agent_rollback_keeps_spent_and_the_session_budget_counts_it(tmp_path: Path) -> None:
    """Issue 28: spent is a fact of the session; Agent(max_session_budget_usd=...) counts it."""
    agent = Agent(provider="simulated", task_dir=tmp_path / "task", allow=["python"])
    agent.run_sync("What is 17 * 23?")
    agent.run_sync("What is 2 * 4?")
    spent = agent.totals.spent_usd
    agent.rollback(0)
    assert agent.totals.cost_usd == 0 and agent.totals.spent_usd == pytest.approx(spent)
    agent.reconfigure(max_session_budget_usd=spent / 2)
    sent = len(messages_requests(agent.simulated_api))
    done = agent.run_sync("What is 3 * 3?").done
    assert done is not None and done.reason == "max_budget" and done.stopped is not None
    assert done.stopped.startswith("stopped: the session budget")
    assert len(messages_requests(agent.simulated_api)) == sent
    agent.close()
    again = Agent.resume(tmp_path / "task", provider="simulated")
    assert again.totals.spent_usd == pytest.approx(spent)  # kept across save/load of the folder
    again.close()


TOKEN = "sk-gateway-SENTINEL-bearer-0b9d4f2a61"
HEADER_VALUE = "hdr-SENTINEL-value-3e7c1a9f"


async def test_an_endpoints_token_and_header_values_never_appear_in_files_events_outputs_or_reprs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx2

    from nbagent.providers.anthropic import endpoint_provider
    from nbagent.providers.endpoints import endpoint_from_row
    from nbagent.providers.simulated.app import BASE_URL

    monkeypatch.setenv("GW_TOKEN", TOKEN)
    endpoint = endpoint_from_row("gateway", {"base_url": BASE_URL, "auth_token_env": "GW_TOKEN",
                                             "headers": {"X-Team-Key": HEADER_VALUE}})
    # The model prints both secrets (a tool's output), and one request fails with a 401.
    api = SimulatedAPI([tool_reply("python", {"code": f"import os; print(os.environ['GW_TOKEN'], {HEADER_VALUE!r})"}),
                        text_reply("Printed."), text_reply("never")], faults={2: Fault.overloaded(), 4: Fault.auth()})
    provider = endpoint_provider(endpoint, http_client=lambda: httpx2.AsyncClient(transport=api.transport()))
    task_dir = tmp_path / "task"
    agent = Agent(provider=provider, cwd=tmp_path, task_dir=task_dir, can_use_tool=allow_all,
                  executor=NamespaceExecutor({}), sleep=RecordingSleep())
    events = [e async for e in agent.run("Print the token.")]
    events += [e async for e in agent.run("Again?")]
    assert [e.reason for e in events if isinstance(e, Done)] == ["end_turn", "error"]
    assert api.requests[0].headers["x-team-key"] == HEADER_VALUE  # it was sent, to the endpoint only
    tool_output = [e for e in events if e.kind == "tool_result"][0].content
    assert "[redacted]" in tool_output

    def clean(text: str, where: str) -> None:
        for secret in (TOKEN, HEADER_VALUE):
            assert secret not in text and secret[-12:] not in text, f"a secret leaked into {where}"

    for p in (p for p in task_dir.rglob("*") if p.is_file()):
        clean(p.read_bytes().decode("utf-8", "replace"), str(p))
    for e in events + list(agent.events):
        clean(repr(e), f"repr of {e.kind}")
        clean(json.dumps(event_to_dict(e), default=str), f"dict of {e.kind}")
    for name, obj in [("agent", agent), ("config", agent.config), ("provider", provider), ("endpoint", endpoint),
                      ("history", agent.history), ("records", agent.records)]:
        clean(repr(obj), name)
        clean(str(obj), name)
    assert "GW_TOKEN" in agent.config.secret_env  # and so out of the shell tool's environment


def test_a_closed_agent_refuses_a_prompt_before_any_request_and_says_how_to_resume(tmp_path) -> None:
    from nbagent.engine.loop.query import SessionClosedError
    from nbagent.providers.anthropic import simulated_provider
    from nbagent.providers.simulated import SimulatedAPI, text_reply

    api = SimulatedAPI([text_reply("One."), text_reply("Two.")])
    folder = tmp_path / "task"
    agent = Agent(provider=simulated_provider(api), task_dir=folder)
    agent.run_sync("First.")
    agent.close()
    with pytest.raises(SessionClosedError) as info:
        agent.run_sync("Second.")
    assert str(info.value) == f"this Agent was closed; continue it with Agent.resume({str(folder)!r})"
    assert api.request_count == 1 and "\n" not in str(info.value)
    resumed = Agent.resume(folder, provider=simulated_provider(api))
    assert resumed.run_sync("Second.").text == "Two."
    resumed.close()
    in_memory = Agent(provider="simulated")
    in_memory.close()
    with pytest.raises(SessionClosedError, match="start a new Agent"):
        in_memory.run_sync("Hello?")


def test_a_closed_agent_refuses_to_compact_before_the_summary_request(tmp_path) -> None:
    from nbagent.engine.loop.query import SessionClosedError
    from nbagent.providers.anthropic import simulated_provider
    from nbagent.providers.simulated import SimulatedAPI, text_reply

    api = SimulatedAPI([text_reply("Noted. " * 50) for _ in range(8)] + [text_reply("A summary.")])
    agent = Agent(provider=simulated_provider(api), task_dir=tmp_path / "task")
    for i in range(8):
        agent.run_sync(f"Fact {i}: " + "the measured value changed. " * 60)
    history = list(agent.history)
    agent.close()

    async def compact() -> list[str]:
        return [e.kind async for e in agent.compact()]

    with pytest.raises(SessionClosedError, match="Agent.resume"):
        asyncio.run(compact())
    assert api.request_count == 8 and list(agent.history) == history
