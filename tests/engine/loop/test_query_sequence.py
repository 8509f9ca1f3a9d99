"""A scripted five-request session yields exactly the expected typed events (issue 4, test 1)."""

from __future__ import annotations

import json
from typing import Any

from nbagent.engine.api_facts.cost import Usage, cost_of
from nbagent.engine.api_facts.models import context_window_for
from nbagent.engine.context import get_context_window_info
from nbagent.engine.contracts.events import (
    ApiRequestStarted,
    Done,
    Event,
    PermissionAsked,
    PermissionDenied,
    RequestCompleted,
    RequestRecord,
    TextDelta,
    ToolResult,
    ToolUse,
    ToolUseDelta,
)
from nbagent.engine.contracts.permissions import Allow, Deny
from nbagent.engine.state.store import SessionStore
from nbagent.providers.simulated import Reply, SimulatedAPI, TextBlock, ToolUseBlock, text_reply
from tests.engine.loop._blocks import content_list
from tests.engine.loop.test_query_support import (
    MODEL,
    Add,
    Echo,
    Write,
    assert_history_valid,
    assert_persisted_valid,
    make_engine,
    messages_requests,
    normalise,
    records_of,
    request_tokens,
    run,
    totals_for,
)

# Output tokens the simulated API reports for each scripted reply: cl100k tokens of its blocks'
# text (a tool call counts its name plus its input as sorted JSON). Fixed strings → fixed numbers.
OUTPUT_TOKENS = [15, 25, 6, 14, 2]


def script() -> list[Reply]:
    return [
        Reply((TextBlock("Adding."), ToolUseBlock("add", {"a": 2, "b": 3}, "toolu_r1"))),
        Reply((TextBlock("Echo and save."), ToolUseBlock("echo", {"text": "5"}, "toolu_r2a"),
               ToolUseBlock("write", {"path": "out.txt", "text": "5"}, "toolu_r2b"))),
        text_reply("The sum is 5."),
        Reply((ToolUseBlock("write", {"path": "out.txt", "text": "5"}, "toolu_r4"),)),
        text_reply("Saved."),
    ]


async def test_five_requests_give_the_exact_event_sequence(tmp_path: Any) -> None:
    asked: list[tuple[str, dict]] = []

    async def can_use_tool(name: str, tool_input: dict, request: Any) -> Any:
        asked.append((name, tool_input))
        return Deny("not now") if len(asked) == 1 else Allow()

    api = SimulatedAPI(script())
    write = Write()
    engine = make_engine(api, tmp_path, tools=[Add(), Echo(), write], can_use_tool=can_use_tool)
    raw1 = await run(engine, "Add 2 and 3, then echo it.")
    raw2 = await run(engine, "Now save it.")

    bodies = [r.body for r in messages_requests(api)]
    assert len(bodies) == 5
    tokens = [request_tokens(b) for b in bodies]
    window = context_window_for(MODEL)
    max_allowed = get_context_window_info(window).max_allowed_size

    def started(turn: int, n: int, sent: int) -> ApiRequestStarted:
        return ApiRequestStarted(turn=turn, request=n, model=MODEL, attempt=0,
                                 estimated_input_tokens=tokens[n - 1], messages_sent=sent)

    def completed(turn: int, n: int, stop: str) -> RequestCompleted:
        usage = Usage(input_tokens=tokens[n - 1], output_tokens=OUTPUT_TOKENS[n - 1])
        return RequestCompleted(record=RequestRecord(
            turn=turn, request=n, model=MODEL, usage=usage, cost_usd=cost_of(usage, MODEL),
            context_tokens=tokens[n - 1], max_allowed=max_allowed, context_window=window, deleted_range=None,
            keep=None, file_read_saving=None, retries=0, stop_reason=stop, duration_s=0.0, ts=0,
            estimated_input_tokens=tokens[n - 1]))

    write_input = {"path": "out.txt", "text": "5"}
    # claude-sonnet-5-5 thinks unasked with its thinking omitted: every reply opens with a thinking
    # block at index 0 that yields no delta, so the scripted blocks stream from index 1.
    denied = "The user denied this write call: not now"
    turn1: list[Event] = [
        started(1, 1, 1),
        TextDelta(text="Adding.", index=1),
        ToolUseDelta(tool_use_id="toolu_r1", name="add", partial_json=json.dumps({"a": 2, "b": 3}), index=2),
        completed(1, 1, "tool_use"),
        ToolUse(tool_use_id="toolu_r1", name="add", input={"a": 2, "b": 3}),
        ToolResult(tool_use_id="toolu_r1", name="add", content="5"),
        started(1, 2, 3),
        TextDelta(text="Echo and save.", index=1),
        ToolUseDelta(tool_use_id="toolu_r2a", name="echo", partial_json=json.dumps({"text": "5"}), index=2),
        ToolUseDelta(tool_use_id="toolu_r2b", name="write", partial_json=json.dumps(write_input), index=3),
        completed(1, 2, "tool_use"),
        ToolUse(tool_use_id="toolu_r2a", name="echo", input={"text": "5"}),
        ToolResult(tool_use_id="toolu_r2a", name="echo", content="5"),
        ToolUse(tool_use_id="toolu_r2b", name="write", input=write_input),
        PermissionAsked(tool_use_id="toolu_r2b", name="write", input=write_input),
        PermissionDenied(tool_use_id="toolu_r2b", name="write", input=write_input, reason="not now"),
        ToolResult(tool_use_id="toolu_r2b", name="write", content=denied, is_error=True),
        started(1, 3, 5),
        TextDelta(text="The sum is 5.", index=1),
        completed(1, 3, "end_turn"),
    ]
    records1 = records_of(turn1)  # completed() always makes a record
    turn1.append(Done(reason="end_turn", totals=totals_for(records1)))
    turn2: list[Event] = [
        started(2, 4, 7),
        ToolUseDelta(tool_use_id="toolu_r4", name="write", partial_json=json.dumps(write_input), index=1),
        completed(2, 4, "tool_use"),
        ToolUse(tool_use_id="toolu_r4", name="write", input=write_input),
        PermissionAsked(tool_use_id="toolu_r4", name="write", input=write_input),
        ToolResult(tool_use_id="toolu_r4", name="write", content="wrote 1 characters to out.txt"),
        started(2, 5, 9),
        TextDelta(text="Saved.", index=1),
        completed(2, 5, "end_turn"),
    ]
    records2 = records1 + records_of(turn2)
    turn2.append(Done(reason="end_turn", totals=totals_for(records2)))

    assert normalise(raw1) == turn1
    assert normalise(raw2) == turn2
    # The stream really streamed: the text and the tool JSON came in several fragments.
    assert sum(isinstance(e, ToolUseDelta) for e in raw1) > 3 * 2
    assert sum(isinstance(e, TextDelta) for e in raw1) > 3

    # The denied call never ran; the allowed one ran once. The model got both answers.
    assert write.calls == [write_input]
    assert [n for n, _ in asked] == ["write", "write"]
    sent_results = [b for b in bodies[2]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert [(b["tool_use_id"], b.get("is_error", False)) for b in sent_results] == [
        ("toolu_r2a", False), ("toolu_r2b", True)]
    assert sent_results[1]["content"] == denied

    assert_history_valid(engine.session.history)
    assert len(engine.session.history) == 10
    # Each answer opens with its thinking block (text omitted, signature set), passed back unchanged.
    answers = engine.session.history[1::2]
    thinking = [content_list(m)[0] for m in answers]
    assert all(t["type"] == "thinking" and t["thinking"] == "" and t["signature"] for t in thinking)
    for n, body in enumerate(bodies[1:], start=1):
        assert [m["content"][0] for m in body["messages"][1::2]] == thinking[:n]
    task_dir = engine.config.task_dir
    assert_persisted_valid(task_dir, engine)
    assert task_dir is not None
    # The event log on disk is the non-delta events, in order.
    snap = SessionStore(task_dir).load()
    assert [type(e) for e in snap.events] == [type(e) for e in turn1 + turn2 if not isinstance(e, (TextDelta, ToolUseDelta))]
    assert normalise(snap.events) == [e for e in turn1 + turn2 if not isinstance(e, (TextDelta, ToolUseDelta))]
