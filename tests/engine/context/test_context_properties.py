"""Property tests: whatever truncations, overflows, file-read updates and rollbacks happen, the
request is valid for the Messages API, keeps messages 0 and 1, mutates nothing, and a rollback
rebuilds exactly the request that was sent then."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from nbagent.engine.context import (
    ContextManager,
    RequestUsage,
    ensure_tool_results_follow_tool_use,
    get_context_window_info,
    get_next_truncation_range,
    get_truncated_messages,
)
from nbagent.engine.context.request import apply_block_updates
from nbagent.engine.context.window import Keep
from nbagent.engine.contracts.json_types import JSONObject
from nbagent.engine.contracts.messages import (
    ContentBlock,
    MessageParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
    history_problems,
)
from tests.engine.context.test_context_support import mention

PATHS = ["a.py", "./a.py", "b.py", "d/../b.py"]
TOOLS = ["read_file", "read_file", "read_file", "write_file", "edit_file", "python"]
WINDOWS = [4_000, 64_000, 131_072, 200_000, 1_000_000, 0, None]

body = st.integers(0, 400).map(lambda n: "x" * n)


@st.composite
def tool_call(draw: Any, tool_id: str) -> ToolUseBlockParam:
    name = draw(st.sampled_from(TOOLS))
    path = draw(st.sampled_from(PATHS))
    tool_input: JSONObject = {"path": path}
    if name == "write_file":
        tool_input["content"] = draw(body)
    elif name == "edit_file":
        tool_input.update(old="a", new="b")
    elif name == "read_file" and draw(st.booleans()) and draw(st.booleans()):
        tool_input["offset"] = draw(st.sampled_from([0, 10]))
    elif name == "python":
        tool_input = {"code": "1+1"}
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


@st.composite
def user_text(draw: Any) -> str | list[ContentBlock]:
    words = draw(st.sampled_from(["hi", "please continue", "look at this"]))
    if draw(st.booleans()):
        words += " " + mention(draw(st.sampled_from(PATHS)), draw(body))
    if draw(st.integers(0, 4)) == 0:
        return words  # plain string content
    return [{"type": "text", "text": words}]


@st.composite
def histories(draw: Any) -> list[MessageParam]:
    """Valid conversations: alternating turns (sometimes a user turn split in two), tool calls
    answered in the next message (results in any order, sometimes errors, sometimes with text)."""
    counter = iter(range(10_000))
    msgs: list[MessageParam] = [{"role": "user", "content": draw(user_text())}]
    pending: list[str] = []
    for turn in range(draw(st.integers(0, 30))):
        if turn:
            if pending:
                results: list[ContentBlock] = []
                for t in draw(st.permutations(pending)):
                    result: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": t, "content": draw(body)}
                    if draw(st.integers(0, 6)) == 0:
                        result["is_error"] = True
                    results.append(result)
                extra: list[ContentBlock] = [{"type": "text", "text": "note"}] if draw(st.integers(0, 5)) == 0 else []
                msgs.append({"role": "user", "content": results + extra})
                if draw(st.integers(0, 8)) == 0:
                    msgs.append({"role": "user", "content": draw(user_text())})
            else:
                msgs.append({"role": "user", "content": draw(user_text())})
        ids = [f"t{next(counter)}" for _ in range(draw(st.integers(0, 3)))]
        if ids:
            blocks: list[ContentBlock] = [{"type": "text", "text": "ok"}] if draw(st.booleans()) else []
            blocks += [draw(tool_call(i)) for i in ids]
            msgs.append({"role": "assistant", "content": blocks})
        else:
            msgs.append({"role": "assistant", "content": draw(st.sampled_from(["done", [{"type": "text", "text": "done"}]]))})
        pending = ids
    return msgs


def request_points(history: list[MessageParam]) -> list[int]:
    """Lengths at which a request is made: the history then ends with a user message."""
    return [n for n in range(1, len(history) + 1)
            if history[n - 1]["role"] == "user" and (n == len(history) or history[n]["role"] != "user")]


def check_request(request: list[MessageParam], history: list[MessageParam], cm: ContextManager) -> None:
    assert history_problems(request) == [], history_problems(request)
    if len(history) <= 1:
        assert request == history  # returned as they are, as in Cline
        return
    assert request[0] == apply_block_updates(history[0], cm.updates.latest_by_block(0))
    assert request[1] == apply_block_updates(history[1], cm.updates.latest_by_block(1))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(full=histories(), data=st.data())
def test_sessions_stay_valid_and_roll_back_exactly(full: list[MessageParam], data: st.DataObject) -> None:
    frozen = copy.deepcopy(full)
    points = request_points(full)
    window = data.draw(st.sampled_from(WINDOWS))
    limit = get_context_window_info(window).max_allowed_size
    cm = ContextManager()
    clock = iter(range(1, 10_000))
    watermark = 0  # the largest timestamp any update could carry so far
    prev: RequestUsage | None = None
    rng = None
    log: list[tuple[int, Any, int, list[MessageParam]]] = []
    point = 0
    for _ in range(data.draw(st.integers(1, 12))):
        op = data.draw(st.sampled_from(["request", "request", "request", "overflow", "rollback", "any_range"]))
        n = points[point]
        history = full[:n]
        if op == "request":
            # As the loop does: updates are recorded at this request's own (fresh) timestamp, so
            # timestamps only grow and a rollback to a mark undoes everything after it.
            ts = next(clock)
            previous = dataclasses.replace(prev, ts=ts) if prev is not None else None
            result = cm.get_new_context_messages_and_metadata(history, rng, previous, context_window=window)
            watermark = ts
            rng = result.deleted_range
            request = result.truncated_messages
            log.append((n, rng, watermark, copy.deepcopy(request)))
            event(f"request: keep={result.keep}, reads replaced={bool(result.replaced_reads)}")
            total = data.draw(st.sampled_from([0, int(limit) - 1, int(limit), int(2 * limit) + 1]))
            prev = RequestUsage(next(clock), input_tokens=total)
            point = min(point + data.draw(st.integers(0, 3)), len(points) - 1)
        elif op == "overflow":
            ts = next(clock)
            result = cm.truncate_for_overflow(history, rng, ts)
            watermark = ts
            assert result.keep == "quarter" and result.deleted_range == get_next_truncation_range(history, rng, "quarter")
            rng = result.deleted_range
            request = result.truncated_messages
            log.append((n, rng, watermark, copy.deepcopy(request)))
        elif op == "rollback" and log:
            k = data.draw(st.integers(0, len(log) - 1))
            n, rng, watermark, expected = log[k]
            del log[k + 1:]
            event(f"rollback over {len(cm.updates)} updated messages")
            cm.truncate_context_history(watermark)
            history = full[:n]
            point = points.index(n)
            request = cm.get_truncated_messages(history, rng)
            assert request == expected
            prev = None
        else:
            # any range that is not stale (a stale range may hide the latest message: see below)
            end = data.draw(st.integers(-3, len(history) - 2))
            request = get_truncated_messages(history, (2, end), cm.updates)
        check_request(request, history, cm)
        # the manager's memoised build and the pure function agree
        assert cm.get_truncated_messages(history, rng) == get_truncated_messages(history, rng, cm.updates)
        assert full == frozen, "history was mutated"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(full=histories(), data=st.data())
def test_any_range_any_keep_gives_a_valid_request(full: list[MessageParam], data: st.DataObject) -> None:
    frozen = copy.deepcopy(full)
    points = request_points(full)
    history = full[: data.draw(st.sampled_from(points))]
    rng = data.draw(st.one_of(st.none(), st.tuples(st.just(2), st.integers(-3, len(history) - 2))))
    keeps: list[Keep] = ["none", "last_two", "half", "quarter"]
    keep = data.draw(st.sampled_from(keeps))
    nxt = get_next_truncation_range(history, rng, keep)
    request = get_truncated_messages(history, nxt)
    assert history_problems(request) == []
    assert request[0] is history[0]
    if len(history) > 1:
        assert request[1] is history[1]
    assert full == frozen


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(full=histories(), data=st.data())
def test_stale_ranges_follow_cline(full: list[MessageParam], data: st.DataObject) -> None:
    """A range reaching past the history (left over from a rollback that did not restore it)
    hides everything after the pair, as in Cline; the request is still well-formed apart from
    possibly ending on message 1. Sessions restore the range with the history to avoid this."""
    history = full[: data.draw(st.sampled_from(request_points(full)))]
    end = data.draw(st.integers(len(history) - 1, len(history) + 5))
    request = get_truncated_messages(history, (2, end))
    assert request == history[:2]
    assert history_problems(request, allow_trailing_tool_use=True) == []


@settings(max_examples=100, deadline=None)
@given(full=histories(), data=st.data())
def test_ensure_repairs_any_cut_of_a_valid_history(full: list[MessageParam], data: st.DataObject) -> None:
    """Dropping arbitrary messages (keeping the first) and repairing gives a valid conversation."""
    keep = [full[0]] + [m for m in full[1:] if data.draw(st.booleans())]
    if keep[-1]["role"] == "assistant":
        keep.append({"role": "user", "content": "go on"})
    before = copy.deepcopy(keep)
    out = ensure_tool_results_follow_tool_use(keep)
    assert keep == before
    assert history_problems(out) == [], history_problems(out)
