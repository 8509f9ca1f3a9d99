"""Degrade, never break (issue 25): an endpoint that refuses a request feature with a clear 400
gets one notice, one retry without the feature, and never that feature again in the session; a
gateway's budget error ends the run as a budget stop. Against the simulator's endpoint mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagent.engine.contracts.events import Notice, RetryScheduled
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from nbagent.providers.simulated.script import error_reply
from tests.engine.loop.test_query_support import (
    assert_history_valid,
    assert_persisted_valid,
    done_of,
    make_engine,
    messages_requests,
    run,
)


def _notices(events: list) -> list[str]:
    return [e.message for e in events if isinstance(e, Notice) and "switched off" in e.message]


async def test_an_endpoint_refusing_cache_control_gets_one_notice_one_retry_and_never_it_again(tmp_path: Path) -> None:
    api = SimulatedAPI([tool_reply("add", {"a": 1, "b": 2}), text_reply("3"), text_reply("again")],
                       rejects=("cache_control",))
    engine = make_engine(api, tmp_path)
    first = await run(engine, "add")
    second = await run(engine, "more")
    assert done_of(first).reason == "end_turn" and done_of(second).reason == "end_turn"
    notices = _notices(first + second)
    assert len(notices) == 1 and "prompt caching (cache_control)" in notices[0] and "400" in notices[0]
    bodies = [r.body for r in messages_requests(api)]
    assert len(bodies) == 4  # the refused one, then three without it
    assert "cache_control" in str(bodies[0]) and not any("cache_control" in str(b) for b in bodies[1:])
    assert not [e for e in first if isinstance(e, RetryScheduled)]  # no backoff: not a transient failure
    assert [r.without for r in engine.session.records] == [("cache_control",)] * 3
    assert engine.without == {"cache_control"}
    assert_history_valid(engine.session.history)
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_an_endpoint_refusing_thinking_is_sent_no_thinking_after_one_retry(tmp_path: Path) -> None:
    api = SimulatedAPI([text_reply("one"), text_reply("two")], rejects=("thinking",), thinks_by_default=False)
    engine = make_engine(api, tmp_path, model="claude-sonnet-4-5", thinking_budget=2048, max_tokens=4096)
    events = await run(engine, "think")
    events += await run(engine, "again")
    assert [done_of(events).reason] == ["end_turn"]
    assert len(_notices(events)) == 1 and "extended thinking" in _notices(events)[0]
    bodies = [r.body for r in messages_requests(api)]
    assert "thinking" in bodies[0] and not any("thinking" in b for b in bodies[1:]) and len(bodies) == 3


async def test_a_feature_refused_again_after_the_retry_is_an_ordinary_error_not_a_loop(tmp_path: Path) -> None:
    refusal = error_reply(400, "invalid_request_error", "system.0.cache_control: Extra inputs are not permitted")
    api = SimulatedAPI([refusal, refusal, text_reply("never")])
    engine = make_engine(api, tmp_path)
    events = await run(engine, "hi")
    assert done_of(events).reason == "error" and len(_notices(events)) == 1
    assert len(messages_requests(api)) == 2


async def test_a_gateways_budget_error_ends_the_run_as_a_budget_stop_with_one_line(tmp_path: Path) -> None:
    budget = error_reply(400, "invalid_request_error",
                         "Budget has been exceeded! Current cost: 0.0123, Max budget: 0.01")
    api = SimulatedAPI([budget, text_reply("never")])
    engine = make_engine(api, tmp_path)
    events = await run(engine, "hi")
    done = done_of(events)
    assert done.reason == "max_budget" and done.error is None
    assert done.stopped is not None and "\n" not in done.stopped
    assert done.stopped.startswith("stopped: the endpoint's budget for this key is spent (Budget has been exceeded")
    assert not [e for e in events if e.kind in ("api_request_failed", "retry_scheduled")]
    assert len(messages_requests(api)) == 1
    assert_history_valid(engine.session.history)


@pytest.mark.parametrize("feature", ["effort", "server_tools", "context_management"])
async def test_effort_server_tools_and_context_management_are_switched_off_the_same_way(
        tmp_path: Path, feature: str) -> None:
    api = SimulatedAPI([text_reply("ok")], rejects=(feature,))
    engine = make_engine(api, tmp_path, effort="low", server_tools=("web_search",), context="server")
    events = await run(engine, "hi")
    assert done_of(events).reason == "end_turn" and len(_notices(events)) == 1
    assert engine.without == {feature}
    first, retried = [r.body for r in messages_requests(api)]
    carried = {"effort": lambda b: "output_config" in b, "context_management": lambda b: "context_management" in b,
               "server_tools": lambda b: any(str(t.get("type", "")).startswith("web_search") for t in b["tools"])}
    assert carried[feature](first) and not carried[feature](retried)
