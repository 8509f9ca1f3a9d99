"""The fault matrix (issue 4, test 2): every fault of the simulated API, before the first chunk and
mid-stream where that applies, through the real SDK and the whole loop.

Each case checks the retries and their delays (2, 4, 8; ``max(backoff, retry_after)`` capped at
``max_retry_delay``), that non-retryable kinds go straight to ``on_api_failure`` with one
``ApiRequestFailed`` and no ``RetryScheduled``, that a broken stream's partial output never enters
history, and that the task folder afterwards holds a valid history with nothing complete lost.
"""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.engine.context import CONTINUE_NOTICE, TRUNCATION_NOTICE
from nbagent.engine.contracts.events import (
    ApiRequestFailed,
    ApiRequestStarted,
    ContextTruncated,
    Done,
    ModelFallback,
    RateLimitWait,
    RetryScheduled,
    StreamInterrupted,
    TextDelta,
    ToolResult,
)
from nbagent.engine.contracts.messages import text_of, tool_uses
from nbagent.providers.simulated import ALL_FAULTS, Fault, SimulatedAPI, error_reply, text_reply, tool_reply
from tests.engine.loop.test_query_support import (
    FALLBACK,
    MODEL,
    RecordingSleep,
    assert_history_valid,
    assert_persisted_valid,
    done_of,
    kinds,
    make_engine,
    messages_requests,
    run,
)

pytestmark = pytest.mark.usefixtures("no_jitter")  # these check the exact retry schedule

LEAD = "Calling the echo tool now with a handful of words to stream."
ECHO = "an input that is long enough to be cut in several JSON fragments"
FIRST = 3  # request number of the faulted turn's first request (turn 1 takes requests 1 and 2)


def responder(body: dict) -> Any:
    """Deterministic by request content, so a retried request gets the same reply."""
    content = body["messages"][-1]["content"]
    texts = [content] if isinstance(content, str) else [b.get("text", "") for b in content if b.get("type") == "text"]
    if any(t.endswith("task") for t in texts):  # a prompt (possibly after repaired tool results)
        return tool_reply("echo", {"text": ECHO}, text=LEAD)
    return text_reply("All done.")


class Answers:
    """An ``on_api_failure`` that records what it was asked and answers from a list (then cancel)."""

    def __init__(self, *choices: str) -> None:
        self.choices = list(choices)
        self.asked: list[ApiRequestFailed] = []

    async def __call__(self, event: ApiRequestFailed) -> str:
        self.asked.append(event)
        return self.choices.pop(0) if self.choices else "cancel"


async def session(tmp_path: Any, faults: dict[int, Any], *, answers: Answers | None = None,
                  responder_fn: Any = responder, **cfg: Any) -> tuple[Any, SimulatedAPI, RecordingSleep, list, list]:
    """Turn 1 clean; turn 2 under ``faults``. Returns engine, api, sleep, events of turn 1 and 2."""
    api = SimulatedAPI(responder_fn, faults=faults, sleep=RecordingSleep())
    sleep = RecordingSleep()
    engine = make_engine(api, tmp_path, sleep=sleep, on_api_failure=answers or Answers(), **cfg)
    ev1 = await run(engine, "first task")
    assert done_of(ev1).reason == "end_turn"
    assert len(engine.session.history) == 4
    ev2 = await run(engine, "second task")
    return engine, api, sleep, ev1, ev2


def turn2_ok(engine: Any) -> None:
    """Turn 2 completed normally, turn 1 untouched, no partial output anywhere in history."""
    h = engine.session.history
    assert len(h) == 8
    assert [m["role"] for m in h[4:]] == ["user", "assistant", "user", "assistant"]
    assert text_of(h[5]) == LEAD and [u["input"] for u in tool_uses(h[5])] == [{"text": ECHO}]
    assert text_of(h[7]) == "All done."
    assert_history_valid(h)
    assert_persisted_valid(engine.config.task_dir, engine)


def turn2_failed(engine: Any) -> None:
    """Turn 2 failed: turn 1 intact, the prompt stays its own turn (closed by a marked "no reply"
    message, so the next prompt is not merged into it), nothing else was added."""
    h = engine.session.history
    assert len(h) == 6 and h[4]["role"] == "user" and text_of(h[4]) == "second task"
    assert text_of(h[5]).startswith("[No reply: the request failed")
    assert_history_valid(h)
    assert_persisted_valid(engine.config.task_dir, engine)


# name -> (error kind, status, first delay, delays when every retry fails)
# (A 429 with retry-after is a rate limit wait, not a counted retry: see RATE_LIMITED below.)
RETRYABLE = {
    "overloaded": ("overloaded", 529, [2.0, 4.0, 8.0]),
    "server_error": ("server", 500, [2.0, 4.0, 8.0]),
    "unavailable": ("server", 503, [2.0, 4.0, 8.0]),
    "connection_refused": ("connection", None, [2.0, 4.0, 8.0]),
    "stall": ("timeout", None, [2.0, 4.0, 8.0]),
    "sse_error": ("overloaded", 200, [2.0, 4.0, 8.0]),
    "drop": ("connection", None, [2.0, 4.0, 8.0]),
    "cut_tool_json": ("connection", None, [2.0, 4.0, 8.0]),
}
NOT_RETRYABLE = {
    "auth": ("auth", 401),
    "billing": ("billing", 402),
    "permission": ("auth", 403),
    "not_found": ("not_found", 404),
}
# Mid-stream: after text has arrived. Frames: message_start, ping, claude-sonnet-5-5's unasked
# thinking block with its text omitted (start, signature_delta, stop: nothing the engine shows), the
# text block's start, then text deltas; the break at frame 8 comes after two of them.
MID = 8
MID_STREAM = {"sse_error": Fault.sse_error(after_events=MID), "drop": Fault.drop(after_events=MID),
              "cut_tool_json": Fault.cut_tool_json()}
# Before the first chunk: no content delta has arrived when these strike.
BEFORE = {**{name: make() for name, make in ALL_FAULTS.items()},
          "sse_error": Fault.sse_error(after_events=2), "drop": Fault.drop(after_events=2)}


def test_the_matrix_covers_every_fault() -> None:
    assert set(RETRYABLE) | set(NOT_RETRYABLE) | {"prompt_too_long", "rate_limit"} == set(ALL_FAULTS)
    assert len(ALL_FAULTS) == 14


@pytest.mark.parametrize("where", ["before", "mid"])
@pytest.mark.parametrize("name", sorted(RETRYABLE))
async def test_retryable_fault_once_is_retried_after_the_right_delay(tmp_path: Any, name: str, where: str) -> None:
    if where == "mid" and name not in MID_STREAM:
        pytest.skip("this fault strikes before any stream")
    if where == "before" and name == "cut_tool_json":
        pytest.skip("a cut inside a tool call's JSON comes after the text that precedes it")
    fault = (MID_STREAM if where == "mid" else BEFORE)[name]
    kind, status, delays = RETRYABLE[name]
    engine, api, sleep, _, ev = await session(tmp_path, {FIRST: fault}, request_timeout_s=5.0)
    interrupted = [e for e in ev if isinstance(e, StreamInterrupted)]
    retry = [e for e in ev if isinstance(e, RetryScheduled)]
    assert kinds(ev) == ["api_request_started"] + ["stream_interrupted"] * (where == "mid") + [
        "retry_scheduled", "api_request_started", "request_completed", "tool_use", "tool_result",
        "api_request_started", "request_completed", "done"]
    r = retry[0]
    assert (r.attempt, r.max_attempts, r.delay_s, r.error_kind, r.status) == (1, 3, delays[0], kind, status)
    if status is not None:
        assert r.request_id == f"req_sim_{FIRST:06d}"
    assert sleep.delays == [delays[0]]
    started = [e for e in ev if isinstance(e, ApiRequestStarted)]
    assert [s.attempt for s in started] == [0, 1, 0]
    assert done_of(ev).reason == "end_turn"
    assert done_of(ev).totals.retries == 1
    assert engine.session.records[2].retries == 1
    if where == "mid":
        # Some output was shown before the break; it is marked interrupted and dropped.
        assert interrupted[0].error_kind == kind
        partial = interrupted[0].partial_text
        assert partial and LEAD.startswith(partial)
        if name != "cut_tool_json":
            assert partial != LEAD
        shown_before_break = "".join(e.text for e in ev[: ev.index(interrupted[0])] if isinstance(e, TextDelta))
        assert shown_before_break == partial
    else:
        assert not interrupted
    turn2_ok(engine)


@pytest.mark.parametrize("name", sorted(RETRYABLE))
async def test_retryable_fault_every_time_exhausts_three_retries_then_asks_once(tmp_path: Any, name: str) -> None:
    fault = MID_STREAM.get(name) or BEFORE[name]
    kind, status, delays = RETRYABLE[name]
    answers = Answers("cancel")
    engine, api, sleep, _, ev = await session(tmp_path, {FIRST + i: fault for i in range(4)}, answers=answers,
                                              request_timeout_s=5.0)
    retries = [e for e in ev if isinstance(e, RetryScheduled)]
    assert [(e.attempt, e.delay_s, e.error_kind) for e in retries] == [(i + 1, d, kind) for i, d in enumerate(delays)]
    assert sleep.delays == delays
    failed = [e for e in ev if isinstance(e, ApiRequestFailed)]
    assert len(failed) == 1 and failed[0].error_kind == kind and failed[0].attempts == 4
    assert failed[0].status == status
    assert answers.asked == failed
    assert kinds(ev)[-2:] == ["api_request_failed", "done"]
    assert done_of(ev).reason == "error" and kind in (done_of(ev).error or "")
    assert len(messages_requests(api)) == 2 + 4
    turn2_failed(engine)


async def test_retry_from_on_api_failure_resets_the_counter(tmp_path: Any) -> None:
    answers = Answers("retry")
    engine, api, sleep, _, ev = await session(tmp_path, {FIRST + i: Fault.overloaded() for i in range(5)},
                                              answers=answers)
    assert sleep.delays == [2.0, 4.0, 8.0, 2.0]  # after "retry" the streak starts again at 2 s
    assert [e.attempt for e in ev if isinstance(e, RetryScheduled)] == [1, 2, 3, 1]
    assert len(answers.asked) == 1
    assert kinds(ev).count("api_request_failed") == 1
    assert done_of(ev).reason == "end_turn"
    assert engine.session.records[2].retries == 4
    turn2_ok(engine)


@pytest.mark.parametrize("name", sorted(NOT_RETRYABLE))
async def test_non_retryable_fault_goes_straight_to_on_api_failure(tmp_path: Any, name: str) -> None:
    kind, status = NOT_RETRYABLE[name]
    answers = Answers()
    engine, api, sleep, _, ev = await session(tmp_path, {FIRST: BEFORE[name]}, answers=answers)
    assert kinds(ev) == ["api_request_started", "api_request_failed", "done"]
    failed = ev[1]
    assert isinstance(failed, ApiRequestFailed)
    assert (failed.error_kind, failed.status, failed.attempts) == (kind, status, 1)
    assert failed.request_id == f"req_sim_{FIRST:06d}"
    assert answers.asked == [failed]
    assert sleep.delays == []
    assert done_of(ev).reason == "error"
    assert len(messages_requests(api)) == FIRST
    turn2_failed(engine)


@pytest.mark.parametrize("reply, kind", [
    (error_reply(400, "invalid_request_error", "messages.1.content.0.text: text content blocks must be non-empty"),
     "invalid_request"),
    (error_reply(429, "rate_limit_error", "You have reached your monthly spend limit."), "spend_limit"),
    (error_reply(400, "invalid_request_error", "This organization has exceeded its spending limit."), "spend_limit"),
])
async def test_invalid_request_and_spend_limit_are_not_retried(tmp_path: Any, reply: Any, kind: str) -> None:
    calls = []

    def fail_turn_two(body: dict) -> Any:
        calls.append(body)
        return reply if len(calls) == FIRST else responder(body)

    answers = Answers()
    engine, api, sleep, _, ev = await session(tmp_path, {}, answers=answers, responder_fn=fail_turn_two)
    assert kinds(ev) == ["api_request_started", "api_request_failed", "done"]
    assert ev[1].error_kind == kind and answers.asked == [ev[1]]
    assert sleep.delays == []
    turn2_failed(engine)


@pytest.mark.parametrize("retry_after, max_delay, expected", [
    (3, 60.0, [3.0, 3.0, 3.0]),
    (45, 60.0, [45.0, 45.0, 45.0]),
    (60, 60.0, [60.0, 60.0, 60.0]),
    (1, 5.0, [1.0, 1.0, 1.0]),
])
async def test_a_429_retry_after_is_waited_exactly_as_a_rate_limit_wait_not_a_retry(
        tmp_path: Any, retry_after: float, max_delay: float, expected: list[float]) -> None:
    fault = Fault.rate_limit(retry_after=retry_after)
    engine, api, sleep, _, ev = await session(tmp_path, {FIRST + i: fault for i in range(3)},
                                              max_retry_delay=max_delay)
    assert sleep.delays == expected
    waits = [e for e in ev if isinstance(e, RateLimitWait)]
    assert [(e.delay_s, e.reason) for e in waits] == [(d, "retry_after") for d in expected]
    assert "waiting for the shared rate limit" in waits[0].headline
    assert not [e for e in ev if isinstance(e, RetryScheduled)]
    assert done_of(ev).reason == "end_turn"
    assert engine.session.records[2].retries == 3  # the refused requests were sent
    assert engine.session.records[2].rate_limit_wait_s == sum(expected)
    turn2_ok(engine)


async def test_429s_beyond_three_keep_waiting_until_the_total_wait_cap_then_count_as_retries(tmp_path: Any) -> None:
    answers = Answers("cancel")
    engine, api, sleep, _, ev = await session(tmp_path, {FIRST + i: Fault.rate_limit(retry_after=3) for i in range(10)},
                                              answers=answers, max_rate_limit_wait_s=10.0)
    # 3 + 3 + 3 waited as rate limit waits; a fourth would pass the 10 s cap: then the ordinary
    # three retries (max(backoff, retry-after)) and the question to the user.
    assert sleep.delays == [3.0, 3.0, 3.0, 3.0, 4.0, 8.0]
    assert [e.kind for e in ev if isinstance(e, (RateLimitWait, RetryScheduled))] == \
        ["rate_limit_wait"] * 3 + ["retry_scheduled"] * 3
    assert len(answers.asked) == 1 and answers.asked[0].error_kind == "rate_limit"
    assert done_of(ev).reason == "error"
    turn2_failed(engine)


async def test_a_server_wait_longer_than_the_cap_goes_to_the_user_instead_of_sleeping(tmp_path: Any) -> None:
    answers = Answers()
    engine, api, sleep, _, ev = await session(tmp_path, {FIRST: Fault.rate_limit(retry_after=120)}, answers=answers)
    assert kinds(ev) == ["api_request_started", "api_request_failed", "done"]
    assert sleep.delays == []
    assert ev[1].error_kind == "rate_limit" and "120" in ev[1].message
    assert answers.asked == [ev[1]]
    turn2_failed(engine)


async def test_overflow_truncates_once_with_keep_quarter_and_retries_at_once(tmp_path: Any) -> None:
    engine, api, sleep, _, ev = await session(tmp_path, {FIRST: Fault.prompt_too_long()})
    assert kinds(ev) == ["api_request_started", "context_truncated", "api_request_started", "request_completed",
                         "tool_use", "tool_result", "api_request_started", "request_completed", "done"]
    truncated = ev[1]
    assert isinstance(truncated, ContextTruncated)
    assert (truncated.reason, truncated.keep, truncated.deleted_range) == ("overflow", "quarter", (2, 3))
    assert sleep.delays == [] and not any(isinstance(e, RetryScheduled) for e in ev)
    started = [e for e in ev if isinstance(e, ApiRequestStarted)]
    assert (started[0].messages_sent, started[1].messages_sent) == (5, 3)
    assert started[1].attempt == 1  # the refused request counts, at once and without a wait
    record = engine.session.records[-2]
    assert (record.retries, record.keep, record.trigger_tokens) == (1, "quarter", truncated.previous_tokens)
    retried = messages_requests(api)[FIRST].body["messages"]
    assert len(retried) == 3
    # Both notices: the first message asks to continue, the second says history was truncated (in
    # its text: the thinking block that opens it goes back unchanged).
    assert retried[0]["content"][0]["text"] == CONTINUE_NOTICE
    assert retried[1]["content"][0] == engine.session.history[1]["content"][0]
    assert retried[1]["content"][0]["type"] == "thinking"
    assert retried[1]["content"][1]["text"] == TRUNCATION_NOTICE
    assert engine.session.deleted_range == (2, 3) and done_of(ev).totals.truncations == 1
    turn2_ok(engine)


async def test_a_second_overflow_asks_the_user_and_never_loops(tmp_path: Any) -> None:
    answers = Answers()
    engine, api, sleep, _, ev = await session(
        tmp_path, {FIRST: Fault.prompt_too_long(), FIRST + 1: Fault.prompt_too_long()}, answers=answers)
    assert kinds(ev) == ["api_request_started", "context_truncated", "api_request_started", "api_request_failed",
                         "done"]
    failed = ev[3]
    assert failed.error_kind == "context_window_exceeded" and failed.can_shorten is False
    assert answers.asked == [failed]
    assert len(messages_requests(api)) == FIRST + 1
    assert sleep.delays == []
    assert done_of(ev).reason == "error"
    # issue 12 (D7): an overflow nothing can recover takes the prompt back out of history
    h = engine.session.history
    assert len(h) == 4 and "second task" not in str(h)
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_overflow_of_a_conversation_that_cannot_be_shortened_asks_at_once(tmp_path: Any) -> None:
    api = SimulatedAPI(responder, faults={1: Fault.prompt_too_long()})
    answers = Answers()
    engine = make_engine(api, tmp_path, on_api_failure=answers)
    ev = await run(engine, "hello")
    assert kinds(ev) == ["api_request_started", "api_request_failed", "done"]
    failed = ev[1]
    assert isinstance(failed, ApiRequestFailed)
    assert "cannot be shortened further" in failed.message and not failed.can_shorten
    assert len(answers.asked) == 1 and len(messages_requests(api)) == 1
    assert engine.session.history == []  # the prompt was withdrawn (issue 12, D7)
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_fallback_model_after_overloaded_retries_lasts_for_the_rest_of_the_turn(tmp_path: Any) -> None:
    engine, api, sleep, _, ev = await session(
        tmp_path, {FIRST + i: Fault.overloaded() for i in range(4)}, fallback_model=FALLBACK)
    assert kinds(ev) == ["api_request_started"] + ["retry_scheduled", "api_request_started"] * 3 + [
        "model_fallback", "api_request_started", "request_completed", "tool_use", "tool_result",
        "api_request_started", "request_completed", "done"]
    fb = [e for e in ev if isinstance(e, ModelFallback)]
    assert fb == [ModelFallback(from_model=MODEL, to_model=FALLBACK, reason="overloaded")]
    assert sleep.delays == [2.0, 4.0, 8.0]
    models = [r.body["model"] for r in messages_requests(api)]
    # Turn 1 on the primary; four failed tries on it; the fallback for both requests of turn 2.
    assert models == [MODEL] * 2 + [MODEL] * 4 + [FALLBACK] * 2
    assert [r.model for r in engine.session.records] == [MODEL, MODEL, FALLBACK, FALLBACK]
    turn2_ok(engine)
    ev3 = await run(engine, "third task")  # a new turn starts on the primary again
    assert done_of(ev3).reason == "end_turn"
    assert messages_requests(api)[-1].body["model"] == MODEL


async def test_fallback_model_on_not_found_without_retries(tmp_path: Any) -> None:
    engine, api, sleep, _, ev = await session(tmp_path, {FIRST: Fault.not_found()}, fallback_model=FALLBACK)
    assert kinds(ev)[:3] == ["api_request_started", "model_fallback", "api_request_started"]
    assert ev[1] == ModelFallback(from_model=MODEL, to_model=FALLBACK, reason="not_found")
    assert sleep.delays == []
    turn2_ok(engine)


async def test_threshold_truncation_happens_once_per_request_even_when_it_is_retried(tmp_path: Any) -> None:
    # A 2,000-token window allows 1,600 tokens. Turn 1 (four requests) ends above that, so turn 2's
    # first request truncates (keep half). Its first try fails; the retry must not truncate again
    # on the same (stale) figures of the previous request.
    words = " ".join(f"word{i}" for i in range(40))
    script = [tool_reply("echo", {"text": words}) for _ in range(3)] + [text_reply("done 1")] + [
        tool_reply("echo", {"text": "four"}), text_reply("All done.")]
    api = SimulatedAPI(script, faults={5: Fault.server_error()})
    sleep = RecordingSleep()
    engine = make_engine(api, tmp_path, sleep=sleep, context_window=2_000, custom_system_prompt="x " * 900)
    await run(engine, "first task")
    assert engine.session.records[2].usage.total_tokens + 25 < 1_600 < engine.session.records[3].usage.total_tokens - 25
    ev = await run(engine, "second task")
    assert kinds(ev)[:4] == ["context_truncated", "api_request_started", "retry_scheduled", "api_request_started"]
    truncated = [e for e in ev if isinstance(e, ContextTruncated)]
    assert [(t.reason, t.keep, t.deleted_range) for t in truncated] == [("threshold", "half", (2, 3))]
    failed_try, retry = (r.body["messages"] for r in messages_requests(api)[4:6])
    assert failed_try == retry  # the retry sends exactly what the failed try sent
    assert len(retry) == 7
    assert done_of(ev).reason == "end_turn" and sleep.delays == [2.0]
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_tool_results_are_not_lost_when_the_next_request_fails(tmp_path: Any) -> None:
    # Turn 2's second request (after the tool ran) fails for good: the tool's result stays.
    answers = Answers()
    engine, api, sleep, _, ev = await session(tmp_path, {FIRST + 1: Fault.auth()}, answers=answers)
    assert [e.name for e in ev if isinstance(e, ToolResult)] == ["echo"]
    assert done_of(ev).reason == "error"
    h = engine.session.history
    assert [m["role"] for m in h[4:]] == ["user", "assistant", "user"]
    assert h[6]["content"][0]["type"] == "tool_result" and h[6]["content"][0]["content"] == ECHO
    assert_persisted_valid(engine.config.task_dir, engine)
    # The session goes on: the next prompt joins the waiting user message.
    ev3 = await run(engine, "third task")
    assert done_of(ev3).reason == "end_turn"
    assert_history_valid(engine.session.history)


async def test_done_carries_the_error_and_the_event_is_shown_once(tmp_path: Any) -> None:
    engine, api, sleep, _, ev = await session(tmp_path, {FIRST: Fault.billing()})
    done = done_of(ev)
    assert isinstance(done, Done) and done.reason == "error" and "billing" in (done.error or "")
    assert sum(isinstance(e, (ApiRequestFailed, RetryScheduled)) for e in ev) == 1
