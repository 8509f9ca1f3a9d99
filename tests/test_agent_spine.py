"""The spine (issue 10): one config, runs that are exclusive, aborts that belong to their run, a
locked task folder, settings that never go stale, and one write per change."""

from __future__ import annotations

import asyncio
import copy
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Sequence

import pytest

from nbagent import Agent, RunLimits, SessionConfig
from nbagent.engine.contracts.events import RequestCompleted, TextDelta
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.loop.query import RunInProgressError
from nbagent.engine.state.store import CONTEXT_FILE, LOCK_FILE, TaskFolderLockedError
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import Echo, done_of, messages_requests

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def agent_on(api: SimulatedAPI, tmp_path: Path, **kw: Any) -> Agent:
    return Agent(provider=simulated_provider(api), cwd=tmp_path, tools=[Echo()], **kw)


def test_a_provider_choice_is_a_keyword_not_a_crash(tmp_path: Path) -> None:
    agent = Agent(provider="simulated", cwd=tmp_path)
    assert agent.provider.name == "simulated"
    assert done_of(agent.run_sync("hi")).reason == "end_turn"
    with pytest.raises(ValueError, match="provider must be"):
        Agent(provider="openai")  # type: ignore[arg-type]


def test_reconfigure_is_seen_everywhere_at_once(tmp_path: Path) -> None:
    agent = agent_on(SimulatedAPI([text_reply("a"), text_reply("b")]), tmp_path)
    agent.run_sync("one")
    agent.reconfigure(model="claude-haiku-4-5")
    assert agent.config.model == "claude-haiku-4-5"
    assert "claude-haiku-4-5" in repr(agent)
    agent.run_sync("two")
    assert agent.records[-1].model == "claude-haiku-4-5"
    with pytest.raises(TypeError, match="unknown setting"):
        agent.reconfigure(modle="x")


def test_settings_are_validated_with_a_message_that_names_them() -> None:
    with pytest.raises(ValueError, match="max_requests must be a positive integer"):
        SessionConfig(max_requests=0)
    # deliberately loose: a str cwd and one allowed tool as a str are accepted and normalised
    assert SessionConfig(cwd=".", allow="python").allow == ("python",)  # type: ignore[arg-type]


def test_run_limits_hold_for_one_prompt_only(tmp_path: Path) -> None:
    api = SimulatedAPI([tool_reply("echo", {"text": "x"}), text_reply("done"),
                        tool_reply("echo", {"text": "y"}), text_reply("done again")])
    agent = agent_on(api, tmp_path)
    assert done_of(agent.run_sync("go", limits=RunLimits(max_requests=1))).reason == "max_requests"
    assert agent.config.max_requests == 25
    assert done_of(agent.run_sync("go on")).reason == "end_turn"


async def test_an_abort_pressed_as_a_run_finishes_never_reaches_the_next_run(tmp_path: Path) -> None:
    agent = agent_on(SimulatedAPI([text_reply("first"), text_reply("second"), text_reply("third")]), tmp_path)
    async for event in agent.run("one"):
        if isinstance(event, RequestCompleted):
            agent.abort()  # pressed late: run 1 is all but done
    events = [e async for e in agent.run("two")]
    assert done_of(events).reason == "end_turn"
    agent.abort()  # between runs: nothing to abort, and nothing remembered
    assert done_of([e async for e in agent.run("three")]).reason == "end_turn"


async def test_an_abort_mid_stream_stops_within_a_second_and_sends_nothing_more(tmp_path: Path) -> None:
    long_text = "word " * 400
    api = SimulatedAPI([tool_reply("echo", {"text": "x"}, text=long_text), text_reply("never")])
    agent = agent_on(api, tmp_path)
    events = []
    started = None
    async for event in agent.run("go"):
        events.append(event)
        if isinstance(event, TextDelta) and started is None:
            started = time.monotonic()
            agent.abort()
    assert started is not None and time.monotonic() - started < 1.0
    assert done_of(events).reason == "aborted"
    assert len(messages_requests(api)) == 1
    assert not any(e.kind == "tool_use" for e in events)
    assert history_problems(agent.history) == []


async def test_a_second_concurrent_run_gets_a_clear_error_and_history_stays_valid(tmp_path: Path) -> None:
    api = SimulatedAPI([text_reply("slow answer")], first_token_latency=0.3)
    agent = agent_on(api, tmp_path, task_dir=tmp_path / "task")
    first = asyncio.ensure_future(agent.ask("the first prompt"))
    await asyncio.sleep(0.05)
    with pytest.raises(RunInProgressError, match="the first prompt"):
        async for _ in agent.run("a second prompt"):
            pass
    assert await first == "slow answer"
    assert history_problems(agent.history) == [] and len(agent.history) == 2
    agent.close()
    assert Agent.resume(tmp_path / "task", provider=simulated_provider(api), cwd=tmp_path).history == agent.history


def test_a_task_folder_has_one_writer_in_this_process(tmp_path: Path) -> None:
    task = tmp_path / "task"
    first = Agent(provider="simulated", cwd=tmp_path, task_dir=task)
    first.run_sync("hello")
    with pytest.raises(TaskFolderLockedError, match="another Agent in this process"):
        Agent.resume(task, provider="simulated", cwd=tmp_path)
    first.close()
    assert not (task / LOCK_FILE).exists()
    second = Agent.resume(task, provider="simulated", cwd=tmp_path)
    assert second.history == first.history
    second.close()


LOCKER = textwrap.dedent("""
    import sys, time
    from nbagent import Agent
    agent = Agent(provider="simulated", task_dir=sys.argv[1])
    print("locked", flush=True)
    time.sleep(60)
""")


def test_a_second_process_gets_a_clear_error_and_a_dead_ones_lock_is_taken_over(tmp_path: Path) -> None:
    task = tmp_path / "task"
    proc = subprocess.Popen([sys.executable, "-c", LOCKER, str(task)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        with pytest.raises(TaskFolderLockedError, match=f"process {proc.pid}"):
            Agent(provider="simulated", cwd=tmp_path, task_dir=task)
    finally:
        proc.kill()
        proc.communicate()  # its stdout pipe closed too, not left to the garbage collector
    agent = Agent(provider="simulated", cwd=tmp_path, task_dir=task)  # the holder died: taken over
    events = agent.run_sync("hello")
    assert any(e.kind == "notice" and "no longer running" in e.message for e in events)
    # A colleague's folder copied while their kernel held it carries their pid (newcomer pass 11): said.
    assert any(e.kind == "notice" and "copied while it was in use" in e.message for e in events)
    agent.close()


def test_context_history_is_written_once_per_truncation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writes: list[str] = []
    real = os.replace

    def counting(src: Any, dst: Any) -> None:  # the rename that ends each atomic write
        writes.append(Path(dst).name)
        real(src, dst)

    monkeypatch.setattr(os, "replace", counting)
    words = " ".join(f"word{i}" for i in range(60))
    api = SimulatedAPI([tool_reply("echo", {"text": words}) for _ in range(6)] + [text_reply("done")])
    agent = agent_on(api, tmp_path, task_dir=tmp_path / "task", context_window=2_000,
                     custom_system_prompt="x " * 700)
    events = agent.run_sync("go")
    truncations = sum(e.kind == "context_truncated" for e in events)
    assert truncations >= 1
    assert writes.count(CONTEXT_FILE) == truncations + 1  # + the new folder's first write


def test_history_records_events_and_sent_are_read_only_live_views(tmp_path: Path) -> None:
    agent = agent_on(SimulatedAPI([text_reply("a"), text_reply("b")]), tmp_path)
    agent.run_sync("one")
    views: dict[str, Sequence[object]] = {"history": agent.history, "records": agent.records,
                                          "events": agent.events, "sent": agent.sent}
    session = agent.session
    for name, view in views.items():
        live = getattr(session, name)
        assert view == live and len(view) == len(live) and view[-1] is live[-1]  # the live list, not a copy
        with pytest.raises(AttributeError, match=rf"agent\.{name} is a read-only view.*through the Agent"):
            view.append(view[0])  # type: ignore[attr-defined]
        with pytest.raises(TypeError, match="read-only view"):
            view[0] = view[0]  # type: ignore[index]
        with pytest.raises(TypeError, match="read-only view"):
            del view[0]  # type: ignore[attr-defined]
        with pytest.raises(AttributeError):
            setattr(agent, name, [])  # no setter either
    snapshot = copy.deepcopy(agent.history)
    held = agent.history
    agent.run_sync("two")
    assert len(held) == len(agent.session.history) == len(snapshot) + 2  # a kept view follows the session
    assert isinstance(snapshot, list) and held != snapshot and held[: len(snapshot)] == snapshot
    agent.rollback(1)
    assert agent.history == snapshot


def test_five_run_sync_calls_with_a_key_never_start_on_a_dead_connection(tmp_path: Path) -> None:
    from nbagent.providers.anthropic import anthropic_provider
    from nbagent.providers.simulated import LoopbackServer

    api = SimulatedAPI([text_reply(f"answer {i}") for i in range(5)])
    with LoopbackServer(api) as server:
        agent = Agent(provider=anthropic_provider("sk-test-loopback", base_url=server.base_url), cwd=tmp_path,
                      tools=[])
        runs = [agent.run_sync(f"question {i}") for i in range(5)]  # each run_sync: a new event loop
    assert [done_of(r).reason for r in runs] == ["end_turn"] * 5
    assert sum(e.kind == "retry_scheduled" for r in runs for e in r) == 0
    assert len(messages_requests(api)) == 5
