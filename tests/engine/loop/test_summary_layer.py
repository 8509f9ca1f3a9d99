"""The summary layer in the loop, against the simulated API through the real SDK: inside one long
turn (one prompt, then many tool calls) it summarises mid-turn instead of tripping its circuit
breaker and every request stays API-valid; a rollback across a mid-turn compaction replays
byte-identical requests, live and after a resume; what each request saw (``%agent saw``) is rebuilt
exactly across it; a refusal after it withdraws the whole turn; a summariser that keeps failing is
switched off after ``failures`` failures with one notice, and truncation keeps the run going."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from nbagent import Agent
from nbagent.engine.contracts.events import Notice
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.loop.compaction import COMPACT_KEEP
from nbagent.engine.state.compactions import SUMMARY_MARK
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_context_policy_loop import Load
from tests.engine.loop.test_query_support import messages_requests

POLICY = "summary:headroom=2000:tokens=500"
WINDOW = 30_000  # trigger: min(30k - 2k - 2k, Cline's 24k) - 1: about every 9 loads of ~2.5k tokens
LOADS = 30


def digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).hexdigest()[:16]


def last_part(body: dict[str, Any]) -> int | None:
    """The part the last tool result loaded (None: the last message is a prompt)."""
    content = body["messages"][-1]["content"]
    results = [b for b in content if b.get("type") == "tool_result"] if isinstance(content, list) else []
    if not results:
        return None
    found = re.match(r"part (\d+)", str(results[-1]["content"]))
    return int(found.group(1)) if found else None


def responder(summary: str = "loaded parts so far") -> Any:
    """A short first turn without tools, then one turn of :data:`LOADS` loads, one per request.
    Replies depend only on the request, so the same request gets the same reply byte for byte."""
    def reply(body: dict[str, Any]) -> Any:
        if "nbagent-compaction" in str(body.get("system")):
            return text_reply(f"{summary} ({digest(body)})" if summary else "")
        part = last_part(body)
        prompt = json.dumps(body["messages"][-1]["content"])
        if part is None and "load everything" not in prompt:
            return text_reply("hello")
        if part is not None and part + 1 >= LOADS:
            return text_reply("all loaded")
        return tool_reply("load", {"part": 0 if part is None else part + 1}, id=f"toolu_{digest(body)}")
    return reply


def settings(api: SimulatedAPI, tmp_path: Path) -> dict[str, Any]:
    return {"provider": "simulated", "simulated_options": {"api": api}, "cwd": tmp_path, "tools": [Load()],
            "context": POLICY, "context_window": WINDOW, "max_tokens": 2000, "max_requests": 100}


def sent_requests(api: SimulatedAPI, start: int = 0) -> list[dict[str, Any]]:
    """The agent's requests (not the summary requests) from ``start`` on."""
    return [r.body for r in messages_requests(api)[start:] if "nbagent-compaction" not in str(r.body.get("system"))]


def request_bytes(api: SimulatedAPI, start: int) -> list[str]:
    return [json.dumps(r.body, sort_keys=True) for r in messages_requests(api)[start:]]


def without_breakpoints(value: Any) -> Any:
    """A request body as the session keeps it (the provider adds ``cache_control`` on the way out)."""
    if isinstance(value, dict):
        return {k: without_breakpoints(v) for k, v in value.items() if k != "cache_control"}
    return [without_breakpoints(v) for v in value] if isinstance(value, list) else value


def saw_what_was_sent(a: Agent, api: SimulatedAPI) -> bool:
    """Every request ``%agent saw`` rebuilds is the one the API received (compactions since undone)."""
    sent = [without_breakpoints(b["messages"]) for b in sent_requests(api)]
    rebuilt = [s.messages for s in a.session.sent]
    return [json.dumps(x, sort_keys=True) for x in rebuilt] == [json.dumps(y, sort_keys=True) for y in sent]


def test_one_long_turn_is_summarised_mid_turn_and_every_request_stays_valid(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder(), thinks_by_default=False)
    a = Agent(task_dir=tmp_path / "task", **settings(api, tmp_path))
    done = a.run_sync("load everything, part by part")
    assert done.reason == "end_turn"
    summaries = [r for r in a.records if r.keep == COMPACT_KEEP]
    assert len(summaries) >= 2  # more than once: the breaker never switched the layer off
    assert not any(isinstance(e, Notice) and "failed" in e.message for e in a.session.events)
    assert all(x.layer == "summary" and x.tokens_removed > 0 for r in summaries for x in r.context_actions)
    assert a.totals.truncations == 0  # summarising was enough: truncation never had to act
    sent = sent_requests(api)
    assert len(sent) == LOADS + 1 and all(history_problems(b["messages"]) == [] for b in sent)
    assert max(r.context_tokens for r in a.records) < WINDOW - 2000
    # What the model sees after a mid-turn summary: the task, its first call, the summary (with
    # that call's result), then the latest call and its result whole.
    after = sent[-1]["messages"]
    assert SUMMARY_MARK in json.dumps(after[2]) and after[-2]["role"] == "assistant"
    assert [b["type"] for b in after[-1]["content"]] == ["tool_result"]
    assert history_problems(a.history) == [] and saw_what_was_sent(a, api)
    a.close()


def test_rollback_across_a_mid_turn_compaction_replays_byte_identical_requests(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder(), thinks_by_default=False)
    a = Agent(task_dir=tmp_path / "task", **settings(api, tmp_path))
    a.run_sync("hi")
    start = len(messages_requests(api))
    a.run_sync("load everything, part by part")
    turn_two = request_bytes(api, start)
    assert any(r.keep == COMPACT_KEEP for r in a.records if r.turn == 2)
    before = [json.loads(b) for b in turn_two if "nbagent-compaction" not in b]
    assert all(history_problems(b["messages"]) == [] for b in before)
    assert saw_what_was_sent(a, api)
    copy = a.save(tmp_path / "copy")

    a.rollback(1)
    assert a.session.compactions == [] and len(a.history) == 2
    start = len(messages_requests(api))
    a.run_sync("load everything, part by part")
    assert request_bytes(api, start) == turn_two
    a.close()

    b = Agent.resume(copy, **settings(api, tmp_path))
    assert len(b.session.compactions) >= 1
    b.rollback(1)
    start = len(messages_requests(api))
    b.run_sync("load everything, part by part")
    assert request_bytes(api, start) == turn_two
    b.close()


def test_a_failing_summariser_trips_the_breaker_once_and_truncation_takes_over(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder(summary=""), thinks_by_default=False)  # summaries come back empty
    a = Agent(task_dir=tmp_path / "task", **settings(api, tmp_path))
    done = a.run_sync("load everything, part by part")
    assert done.reason == "end_turn"
    failed = [e.message for e in a.session.events if isinstance(e, Notice) and "Compaction failed" in e.message]
    off = [e.message for e in a.session.events if isinstance(e, Notice) and "failed 3 times in a row" in e.message]
    assert len(failed) == 3 and len(off) == 1 and "returned no text" in failed[0]
    asked = [r for r in messages_requests(api) if "nbagent-compaction" in str(r.body.get("system"))]
    assert len(asked) == 3  # no summary request after the breaker tripped
    assert a.totals.truncations >= 1 and all(history_problems(b["messages"]) == [] for b in sent_requests(api))
    a.close()


def test_a_refusal_after_a_mid_turn_compaction_withdraws_the_whole_turn(tmp_path: Path) -> None:
    base = responder()

    def reply(body: dict[str, Any]) -> Any:
        part = last_part(body)
        if part is not None and part >= 20 and "nbagent-compaction" not in str(body.get("system")):
            return text_reply("I can't help with that.", stop_reason="refusal")
        return base(body)

    api = SimulatedAPI(responder=reply, thinks_by_default=False)
    a = Agent(task_dir=tmp_path / "task", **settings(api, tmp_path))
    a.run_sync("hi")
    a.run_sync("hi again")
    before = json.dumps(a.session.history)
    assert a.run_sync("load everything, part by part").reason == "refusal"
    assert any(r.keep == COMPACT_KEEP for r in a.records if r.turn == 3)  # it compacted before the refusal
    # The refused turn is out of what the model sees (its compactions undone), on disk too.
    assert json.dumps(a.session.history) == before and a.session.compactions == []
    a.close()
    b = Agent.resume(tmp_path / "task", **settings(api, tmp_path))
    assert json.dumps(b.session.history) == before and b.session.compactions == []
    assert b.run_sync("hi once more").reason == "end_turn" and history_problems(b.history) == []
    b.close()


class BigLoad(Load):
    name = "big_load"

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> Any:
        from nbagent.engine.contracts.tool_api import ToolOutput
        return ToolOutput(content="cell " * 25_000)


def test_nothing_to_summarise_yet_is_no_failure_and_no_warning(tmp_path: Path) -> None:
    def reply(body: dict[str, Any]) -> Any:
        results = sum(1 for m in body["messages"] if isinstance(m["content"], list)
                      for b in m["content"] if b.get("type") == "tool_result")
        return [tool_reply("big_load", {"part": 0}), tool_reply("load", {"part": 1})][results] if results < 2 \
            else text_reply("loaded")

    api = SimulatedAPI(responder=reply, thinks_by_default=False)
    # Window 8k: the trigger is 8k - 1k of output - 2k of headroom, and the result (cut to ~6k tokens
    # like any big tool output) passes it while staying under truncation's 6.4k.
    a = Agent(**{**settings(api, tmp_path), "tools": [BigLoad(), Load()], "context_window": 8_000, "max_tokens": 1_000})
    events = a.run_sync("load the big part")
    # The second request passes the trigger with only the task, one call and its result in the
    # history: before the third there is nothing to summarise, so no summary request and no warning.
    assert [e for e in events if isinstance(e, Notice) and e.level == "warning"] == []
    assert all("nbagent-compaction" not in str(r.body.get("system")) for r in messages_requests(api))
    assert len(a.records) == 3 and a.records[1].usage.prompt_tokens >= 5_000
    a.close()
