"""Property: wherever a summary compaction cuts, at a prompt or mid-turn (between a tool result
and the next call), the history stays API-valid, and undoing the compactions (latest first)
restores the history exactly; :func:`hidden_end` keeps the latest call and its results whole."""

from __future__ import annotations

import copy
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.engine.contracts.messages import MessageParam, blocks, history_problems, is_tool_result, tool_uses
from nbagent.engine.loop.compaction import MIN_HIDDEN, hidden_end
from nbagent.engine.state.compactions import SUMMARY_MARK, RollbackPoint, compacted, folded
from tests.engine.context.test_context_policy_property import sessions
from tests.engine.loop._blocks import content_list


@st.composite
def histories(draw: st.DrawFn) -> list[MessageParam]:
    """A session as the loop holds it: before a request (it ends with a user message) or after a
    finished turn (a final text reply); many of them one long turn of tool calls."""
    history = draw(sessions())
    if draw(st.booleans()):
        history.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    return history


def cuts(history: Sequence[MessageParam]) -> list[int]:
    """Every place a cut could end: a user message after index 2 that an assistant message follows."""
    return [k for k in range(3, len(history) - 1)
            if history[k]["role"] == "user" and history[k + 1]["role"] == "assistant"]


def point(history: Sequence[MessageParam], end: int) -> RollbackPoint:
    return RollbackPoint(turns=(), replaced=tuple(history[2:end + 1]), updates=[])


@settings(max_examples=150, deadline=None)
@given(histories())
def test_every_cut_keeps_the_history_api_valid_and_is_undone_exactly(history: list[MessageParam]) -> None:
    for end in cuts(history):
        out = compacted(history, end, "what happened")
        assert history_problems(out) == [], end
        assert SUMMARY_MARK in str(out[2]) and out[3:] == history[end + 1:]
        # What the summary stands for: everything folded, the tool results it drops included.
        dropped = [b for b in blocks(history[end]) if is_tool_result(b)]
        assert [b for m in folded(history, end) for b in blocks(m)][-len(dropped):] == dropped or not dropped
        assert point(history, end).restore(out) == history


@settings(max_examples=150, deadline=None)
@given(histories(), st.lists(sessions(), min_size=1, max_size=3))
def test_repeated_compactions_at_hidden_end_stay_valid_and_roll_back_exactly(
        history: list[MessageParam], more: list[list[MessageParam]]) -> None:
    original = copy.deepcopy(history)
    points: list[RollbackPoint] = []
    for step, extra in enumerate(more):
        end = hidden_end(history)
        if end is not None:
            assert len(folded(history, end)) - (step > 0 and SUMMARY_MARK in str(history[2])) >= MIN_HIDDEN
            after = history[end + 1:]
            if any(is_tool_result(b) for b in blocks(history[end])):  # mid-turn: the latest call stays whole
                assert after and tool_uses(after[0])
            points.append(point(history, end))
            history = compacted(history, end, f"summary {step}")
            assert history_problems(history) == [] and history[3:] == after
        if history[-1]["role"] == "assistant" and not tool_uses(history[-1]):  # a finished turn: a new prompt
            history.append({"role": "user", "content": [{"type": "text", "text": f"prompt {step}"}]})
        # The session goes on: more exchanges (their ids made unique), then maybe a compaction again.
        for message in extra[1:]:
            history.append(_renamed(message, step))
        assert history_problems(history) == []
    undone = history
    for p in reversed(points):
        undone = p.restore(undone)
    assert undone[:len(original)] == original


def _renamed(message: MessageParam, step: int) -> MessageParam:
    """The message with its tool ids prefixed by ``step`` (each session numbers its calls from t1)."""
    out = copy.deepcopy(message)
    for b in content_list(out):
        if b["type"] == "tool_use":
            b["id"] = f"s{step}-{b['id']}"
        elif b["type"] == "tool_result":
            b["tool_use_id"] = f"s{step}-{b['tool_use_id']}"
        else:
            assert "id" not in b and "tool_use_id" not in b, b  # no other block of a session has an id
    return out


def test_a_long_turn_is_cut_before_its_latest_call() -> None:
    def call(n: int) -> MessageParam:
        return {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}", "name": "python", "input": {}}]}

    def result(n: int) -> MessageParam:
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": f"r{n}"}]}

    history: list[MessageParam] = [{"role": "user", "content": "task"}]
    for n in range(1, 6):
        history += [call(n), result(n)]
    assert hidden_end(history[:5]) is None  # the first call, then only the latest exchange
    assert hidden_end(history[:7]) == 4  # the earliest mid-turn cut: r1, c2 and r2 folded
    assert hidden_end(history) == len(history) - 3
    out = compacted(history, hidden_end(history) or 0, "s")
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant", "user"]
    assert content_list(out[2])[0] == content_list(result(1))[0] and out[3:] == [call(5), result(5)]
    assert history_problems(out) == []
