"""Permissions and tool input in the loop (issue 4, test 3): denied tools never run and the model
is told; "Allow always" lasts one session; unknown tools, invalid or malformed input and failing
tools are answered with ``is_error`` results, never an exception out of the loop."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbagent.engine.contracts.abort import AbortGuard
from nbagent.engine.contracts.events import Notice, PermissionAsked, PermissionDenied, ToolResult, ToolUse
from nbagent.engine.contracts.json_types import JSONObject
from nbagent.engine.contracts.messages import MessageParam, ToolResultBlockParam, ToolUseBlockParam, history_problems
from nbagent.engine.contracts.permissions import (
    Allow,
    Deny,
    PermissionDenial,
    PermissionGate,
    PermissionRequest,
    allow_all,
)
from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.engine.loop.tool_runner import ToolAnswer, run_tool_call
from nbagent.providers.simulated import Reply, SimulatedAPI, ToolUseBlock, text_reply, tool_reply
from tests.engine.loop.test_query_support import (
    Add,
    Boom,
    Echo,
    Write,
    assert_persisted_valid,
    done_of,
    make_engine,
    messages_requests,
    run,
)

WRITE_INPUT = {"path": "notes.txt", "text": "hello"}


class Asker:
    """A ``can_use_tool`` that records the questions and answers from a list."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, dict]] = []

    async def __call__(self, name: str, tool_input: dict, request: Any) -> Any:
        self.asked.append((name, tool_input))
        return self.answers.pop(0)


def result_blocks(body: dict) -> list[dict]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


async def test_a_denied_tool_never_runs_and_the_model_is_told(tmp_path: Any) -> None:
    write = Write()
    asker = Asker(Deny("not in my home folder"))
    api = SimulatedAPI([tool_reply("write", WRITE_INPUT, id="toolu_w"), text_reply("Understood.")])
    engine = make_engine(api, tmp_path, tools=[write], can_use_tool=asker)
    before = time.time_ns() // 1_000_000
    ev = await run(engine, "save my notes")
    assert write.calls == []
    assert asker.asked == [("write", WRITE_INPUT)]
    denied = [e for e in ev if isinstance(e, PermissionDenied)]
    assert denied == [PermissionDenied(tool_use_id="toolu_w", name="write", input=WRITE_INPUT,
                                       reason="not in my home folder")]
    msg = "The user denied this write call: not in my home folder"
    assert [e for e in ev if isinstance(e, ToolResult)] == [
        ToolResult(tool_use_id="toolu_w", name="write", content=msg, is_error=True)]
    # What the model got back on the next request.
    assert result_blocks(messages_requests(api)[1].body) == [
        {"type": "tool_result", "tool_use_id": "toolu_w", "content": msg, "is_error": True,
         "cache_control": {"type": "ephemeral"}}]
    # The audit record.
    (denial,) = engine.denials
    assert isinstance(denial, PermissionDenial)
    assert (denial.tool, denial.input, denial.reason, denial.tool_use_id, denial.turn) == (
        "write", WRITE_INPUT, "not in my home folder", "toolu_w", 1)
    assert before <= denial.ts <= time.time_ns() // 1_000_000
    assert done_of(ev).reason == "end_turn"
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_headless_session_denies_non_read_only_tools_and_says_how_to_allow(tmp_path: Any) -> None:
    write = Write()
    api = SimulatedAPI([tool_reply("write", WRITE_INPUT), text_reply("ok")])
    engine = make_engine(api, tmp_path, tools=[write])  # no can_use_tool: nobody to ask
    ev = await run(engine, "save")
    assert write.calls == []
    assert not any(isinstance(e, PermissionAsked) for e in ev)
    (result,) = [e for e in ev if isinstance(e, ToolResult)]
    assert result.is_error and "not allowed" in result.content and "allow=['write']" in result.content
    assert "The user" not in result.content  # nobody was asked
    assert len(engine.denials) == 1


async def test_allow_always_is_remembered_by_the_session_and_its_folder(tmp_path: Any) -> None:
    write = Write()
    asker = Asker(Allow(always=True))
    script = [tool_reply("write", WRITE_INPUT), tool_reply("write", WRITE_INPUT), text_reply("done"),
              tool_reply("write", WRITE_INPUT), text_reply("done")]
    api = SimulatedAPI(script)
    engine = make_engine(api, tmp_path, tools=[write], can_use_tool=asker)
    ev = await run(engine, "save twice")
    ev += await run(engine, "and again")
    assert len(asker.asked) == 1
    assert sum(isinstance(e, PermissionAsked) for e in ev) == 1
    assert len(write.calls) == 3
    assert engine.gate.allowed_always == frozenset({"write"})

    # The same task folder resumed remembers it (session.json keeps it); another session does not.
    asker2 = Asker(Deny("changed my mind"))
    api2 = SimulatedAPI([tool_reply("write", WRITE_INPUT), text_reply("ok")])
    engine.session.close()
    resumed = make_engine(api2, tmp_path, tools=[write], can_use_tool=asker2, resume=True)
    ev2 = await run(resumed, "once more")
    assert asker2.asked == [] and len(write.calls) == 4
    assert not any(isinstance(e, PermissionDenied) for e in ev2)
    assert resumed.gate.allowed_always == frozenset({"write"})
    fresh = make_engine(SimulatedAPI([]), tmp_path, tools=[write], task="other")
    assert fresh.gate.allowed_always == frozenset()


async def test_unknown_tool_invalid_input_and_failing_tool_are_answered_with_errors(tmp_path: Any) -> None:
    reply = Reply((
        ToolUseBlock("no_such_tool", {"x": 1}, "toolu_a"),
        ToolUseBlock("add", {"a": "two", "b": 3}, "toolu_b"),
        ToolUseBlock("add", {"a": 1, "b": 2, "c": 3}, "toolu_c"),
        ToolUseBlock("add", {"a": 1}, "toolu_d"),
        ToolUseBlock("boom", {}, "toolu_e"),
        ToolUseBlock("add", {"a": 1, "b": 2}, "toolu_f"),
    ))
    api = SimulatedAPI([reply, text_reply("I see.")])
    engine = make_engine(api, tmp_path, tools=[Add(), Echo(), Boom()])
    ev = await run(engine, "try things")
    results = {e.tool_use_id: e for e in ev if isinstance(e, ToolResult)}
    assert list(results) == ["toolu_a", "toolu_b", "toolu_c", "toolu_d", "toolu_e", "toolu_f"]
    assert [results[k].is_error for k in results] == [True] * 5 + [False]
    assert results["toolu_a"].content == "Unknown tool 'no_such_tool'. Available tools: add, boom, echo."
    assert "'add'" in results["toolu_b"].content and "a" in results["toolu_b"].content
    assert "c" in results["toolu_c"].content and "b" in results["toolu_d"].content
    assert results["toolu_e"].content == "boom failed: RuntimeError: kaboom"
    assert results["toolu_f"].content == "3"
    sent = result_blocks(messages_requests(api)[1].body)
    assert [b["tool_use_id"] for b in sent] == list(results)
    assert [b.get("is_error", False) for b in sent] == [True] * 5 + [False]
    assert done_of(ev).reason == "end_turn"
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_a_broken_permission_callback_denies_instead_of_crashing(tmp_path: Any) -> None:
    write = Write()

    async def broken(name: str, tool_input: dict, request: Any) -> Any:
        raise ValueError("callback bug")

    api = SimulatedAPI([tool_reply("write", WRITE_INPUT), text_reply("ok")])
    engine = make_engine(api, tmp_path, tools=[write], can_use_tool=broken)
    ev = await run(engine, "save")
    assert write.calls == [] and done_of(ev).reason == "end_turn"
    (result,) = [e for e in ev if isinstance(e, ToolResult)]
    assert result.is_error and "callback bug" in result.content


async def test_long_tool_output_is_cut_in_the_middle_with_the_full_text_kept_for_display(tmp_path: Any) -> None:
    long_text = "A" * 3_000 + "MIDDLE" + "Z" * 3_000
    api = SimulatedAPI([tool_reply("echo", {"text": long_text}), text_reply("ok")])
    engine = make_engine(api, tmp_path, tools=[Echo()], tool_output_limit=1_000)
    ev = await run(engine, "echo")
    (result,) = [e for e in ev if isinstance(e, ToolResult)]
    assert result.display == long_text
    assert len(result.content) <= 1_000 and "characters omitted" in result.content
    assert result.content.startswith("AAA") and result.content.endswith("ZZZ") and "MIDDLE" not in result.content
    sent = result_blocks(messages_requests(api)[1].body)[0]["content"]
    assert sent == result.content


# ----- generated malformed input ---------------------------------------------------------------

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)
not_int = json_values.filter(lambda v: not (isinstance(v, int) and not isinstance(v, bool)))
not_str = json_values.filter(lambda v: not isinstance(v, str))
extra_key = st.text(min_size=1, max_size=8).filter(lambda k: k not in ("a", "b", "text", "path"))

# (tool name, input) pairs that are wrong by construction.
malformed_dicts = st.one_of(
    st.tuples(st.just("add"), st.fixed_dictionaries({"a": not_int, "b": json_values})),
    st.tuples(st.just("add"), st.fixed_dictionaries({"a": st.integers(), "b": st.integers()}).flatmap(
        lambda d: st.tuples(extra_key, json_values).map(lambda kv: {**d, kv[0]: kv[1]}))),
    st.tuples(st.just("add"), st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=1)),
    st.tuples(st.just("echo"), st.fixed_dictionaries({"text": not_str})),
    st.tuples(st.just("echo"), st.dictionaries(extra_key, json_values, max_size=3)),
    st.tuples(st.just("write"), st.fixed_dictionaries({"path": not_str, "text": json_values})),
    st.tuples(st.sampled_from(["", "ADD", "python", "add ", "nope"]), st.dictionaries(st.text(max_size=5), json_values,
                                                                                         max_size=3)),
)
malformed_calls = st.one_of(
    malformed_dicts,
    st.tuples(st.sampled_from(["add", "echo", "write"]), json_values.filter(lambda v: not isinstance(v, dict))),
    st.tuples(st.one_of(st.none(), st.integers(), st.lists(st.text(max_size=3), max_size=2)), json_values),
)

_loop = asyncio.new_event_loop()


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call=malformed_calls)
def test_500_malformed_tool_inputs_are_each_answered_with_an_error(call: tuple[Any, Any]) -> None:
    name, raw = call
    write = Write()
    tools = {t.name: t for t in (Add(), Echo(), write)}
    gate = PermissionGate(allow_all)
    # Deliberately malformed: the drawn name and input (typed Any) are what a broken model might send.
    use: ToolUseBlockParam = {"type": "tool_use", "id": "toolu_x", "name": name, "input": raw}

    async def go() -> list[Any]:
        guard = AbortGuard(asyncio.Event())
        guard.start()
        try:
            return [e async for e in run_tool_call(
                use, tools=tools, gate=gate, guard=guard, make_context=lambda uid: ToolContext(cwd=Path("."), tool_use_id=uid),
                turn=1, output_limit=30_000)]
        finally:
            guard.stop()

    events, answered = _answers(_loop.run_until_complete(go()))
    assert write.calls == []
    assert [type(e) for e in events] == [ToolUse, ToolResult]
    assert events[1].is_error and events[1].content
    assert len(answered) == 1 and answered[0]["is_error"] is True and answered[0]["tool_use_id"] == "toolu_x"
    history: list[MessageParam] = [{"role": "user", "content": [{"type": "text", "text": "go"}]},
                                   {"role": "assistant", "content": [use]}, {"role": "user", "content": list(answered)}]
    assert history_problems(history) == []
    json.dumps(history)  # and it can be persisted


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(calls=st.lists(malformed_dicts, min_size=1, max_size=25))
def test_malformed_tool_calls_through_the_real_sdk_never_break_the_loop(tmp_path_factory: Any, calls: list) -> None:
    tmp_path = tmp_path_factory.mktemp("malformed")
    write = Write()
    reply = Reply(tuple(ToolUseBlock(name, raw, f"toolu_m{i}") for i, (name, raw) in enumerate(calls)))
    api = SimulatedAPI([reply, text_reply("Noted.")])
    engine = make_engine(api, tmp_path, tools=[Add(), Echo(), write], can_use_tool=allow_all)
    ev = _loop.run_until_complete(run(engine, "go"))
    assert done_of(ev).reason == "end_turn"
    assert write.calls == []
    results = [e for e in ev if isinstance(e, ToolResult)]
    assert [r.tool_use_id for r in results] == [f"toolu_m{i}" for i in range(len(calls))]
    assert all(r.is_error for r in results)
    sent = result_blocks(messages_requests(api)[1].body)
    assert [b["tool_use_id"] for b in sent] == [f"toolu_m{i}" for i in range(len(calls))]
    assert all(b["is_error"] for b in sent)
    assert_persisted_valid(engine.config.task_dir, engine)


async def _one_call(tool: Any, gate: PermissionGate, tool_input: JSONObject) -> tuple[list[Any], list[ToolResultBlockParam]]:
    guard = AbortGuard(asyncio.Event())
    guard.start()
    use: ToolUseBlockParam = {"type": "tool_use", "id": "toolu_1", "name": tool.name, "input": tool_input}
    try:
        items = [e async for e in run_tool_call(
            use, tools={tool.name: tool}, gate=gate, guard=guard,
            make_context=lambda uid: ToolContext(cwd=Path("."), tool_use_id=uid), turn=1, output_limit=30_000)]
    finally:
        guard.stop()
    return _answers(items)


def _answers(items: list[Any]) -> tuple[list[Any], list[ToolResultBlockParam]]:
    """The events of one call and its answer blocks (exactly one, before its ToolResult)."""
    answers = [i for i in items if isinstance(i, ToolAnswer)]
    events = [i for i in items if not isinstance(i, ToolAnswer)]
    assert len(answers) == 1 and items.index(answers[0]) < max(i for i, e in enumerate(items) if isinstance(e, ToolResult))
    return events, [a.block for a in answers]


async def test_a_call_the_rules_allow_runs_without_asking_and_a_denied_read_only_tool_does_not_run() -> None:
    asked: list[str] = []

    async def asker(name: str, tool_input: JSONObject, request: PermissionRequest) -> Allow:
        asked.append(name)
        return Allow()

    events, answered = await _one_call(Echo(), PermissionGate(asker), {"text": "hi"})
    assert [type(e) for e in events] == [ToolUse, ToolResult] and not events[1].is_error
    assert asked == [] and answered[0]["content"] == "hi"  # read-only: allowed by the rules alone

    gate = PermissionGate(asker, deny=["echo"])
    events, answered = await _one_call(Echo(), gate, {"text": "hi"})
    assert [type(e) for e in events] == [ToolUse, PermissionDenied, ToolResult] and events[2].is_error
    assert asked == [] and [d.tool for d in gate.denials] == ["echo"]


async def test_an_allow_or_deny_naming_no_tool_is_said_once_instead_of_doing_nothing_silently(tmp_path: Any) -> None:
    # `--allow pythn` allowed nothing and a mistyped deny denied nothing, without a word.
    write = Write()
    api = SimulatedAPI([tool_reply("write", WRITE_INPUT), text_reply("ok"), text_reply("again")])
    engine = make_engine(api, tmp_path, tools=[write], allow=("wrte",), deny=("write_file",))
    ev = await run(engine, "save")
    notices = [e.message for e in ev if isinstance(e, Notice)]
    assert notices == [
        "allow names 'wrte', but this session has no tool of that name, so it allows nothing (tool names: write).",
        "deny names 'write_file', but this session has no tool of that name, so it denies nothing (tool names: write)."]
    assert write.calls == []  # the typo allowed nothing, as before: now the user knows why it asked
    assert not [e for e in await run(engine, "again") if isinstance(e, Notice)]  # once per entry


async def test_allow_and_deny_naming_the_sessions_tools_say_nothing(tmp_path: Any) -> None:
    api = SimulatedAPI([text_reply("ok")])
    engine = make_engine(api, tmp_path, tools=[Write(), Echo()], allow=("echo",), deny=("write",))
    assert not [e for e in await run(engine, "hi") if isinstance(e, Notice)]
