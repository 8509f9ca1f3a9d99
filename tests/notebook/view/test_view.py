"""AgentView without a front-end: ipywidgets 8 instantiate with a DummyComm when no kernel runs,
so every gesture can be driven with ``Button.click()`` or the fast path, and checked."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from nbagent.engine.api_facts.cost import Usage
from nbagent.engine.contracts import events as ev
from nbagent.engine.contracts.permissions import Allow, Deny, PermissionRequest
from nbagent.notebook import waiting
from nbagent.notebook.view import AgentView
from nbagent.notebook.view.render import STYLE
from nbagent.notebook.view.retry import FailurePrompt
from nbagent.notebook.view.text import TableBlock, TextBlock, ThinkingBlock
from nbagent.notebook.view.tools import ToolCard

CLICK = {"method": "custom", "content": {"event": "click"}}

P = TypeVar("P")


def _part(view: AgentView, index: int, kind: type[P]) -> P:
    """The view's part at ``index``, checked to be a ``kind``."""
    part = view.parts[index]
    assert isinstance(part, kind), part
    return part


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def record(request: int = 1, cost: float | None = 0.0042, tokens: int = 1250) -> ev.RequestRecord:
    return ev.RequestRecord(turn=1, request=request, model="claude-sonnet-4-5", usage=Usage(1000, 50, 0, 200),
                         cost_usd=cost, context_tokens=tokens, max_allowed=160_000, context_window=200_000,
                         deleted_range=None, keep=None, file_read_saving=None, retries=0,
                         stop_reason="end_turn", duration_s=1.2, ts=0)


def make_view(**kw: Any) -> AgentView:
    return AgentView(model="claude-sonnet-4-5", provider="simulated", context_window=200_000,
                     max_allowed=160_000, **kw)


def request(tool_use_id: str = "t1") -> PermissionRequest:
    return PermissionRequest(tool_use_id, "python", {"code": "1+1"}, False, 1, "python is not read-only")


def test_stream_updates_are_coalesced_and_the_last_is_sent() -> None:
    clock = FakeClock()
    view = make_view(clock=clock)
    for i in range(100):  # 100 deltas within 0.5 s: at most 0.5 / 0.05 + 1 pushes
        clock.t += 0.005
        view.handle(ev.TextDelta(text=f"{i} "))
    block = _part(view, 0, TextBlock)
    assert block.pushed <= 11
    assert view.stream_updates == block.pushed
    view.handle(ev.RequestCompleted(record=record()))  # a non-stream event flushes the tail
    assert block.shown() == "".join(f"{i} " for i in range(100))


async def test_trailing_update_is_sent_when_the_stream_pauses() -> None:
    view = make_view(min_interval=0.05)
    view.handle(ev.TextDelta(text="a"))
    view.handle(ev.TextDelta(text="b"))  # within the interval: held back
    block = _part(view, 0, TextBlock)
    assert block.shown() == "a"
    await asyncio.sleep(0.12)
    assert block.shown() == "ab"


def test_header_gauge_and_cost_follow_records() -> None:
    view = make_view()
    view.handle(ev.ApiRequestStarted(turn=1, request=1, model="claude-sonnet-4-5", estimated_input_tokens=900))
    assert "~900" in view.transcript()
    view.handle(ev.RequestCompleted(record=record(tokens=150_000)))
    assert view.gauge.value == 150_000 and view.gauge.max == 200_000
    assert view.gauge.bar_style == "warning"  # ≥ 80% of max allowed
    assert "context 150,000 / 160,000 max / 200,000 window" in view.transcript()
    assert "$0.0042" in view.transcript()
    view.handle(ev.RequestCompleted(record=record(request=2, cost=None, tokens=170_000)))
    assert view.gauge.bar_style == "danger"
    assert view.session_cost == pytest.approx(0.0042)


def test_thinking_is_folded_and_tool_card_shows_highlighted_code_and_result() -> None:
    view = make_view()
    view.handle(ev.ThinkingDelta(text="let me think"))
    view.handle(ev.ToolUseDelta(tool_use_id="t1", name="python", partial_json='{"code": "import m'))
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": "import math\nmath.pi"}))
    view.handle(ev.ToolResult(tool_use_id="t1", name="python", content="3.14159", duration_s=0.02))
    thinking, card = _part(view, 0, ThinkingBlock), _part(view, 1, ToolCard)
    assert thinking.widget.selected_index is None  # folded
    assert thinking.widget.get_title(0) == "Thinking"
    assert "<span" in card._input.value and "import" in card._input.value  # pygments markup
    assert "3.14159" in card._result.value
    assert "done in 0.02 s" in card.status
    text = view.transcript()
    assert "[thinking] let me think" in text and "[tool] python" in text and "→ result: 3.14159" in text


def test_interrupted_stream_is_greyed_and_labelled() -> None:
    view = make_view()
    view.handle(ev.ApiRequestStarted(request=1))
    view.handle(ev.TextDelta(text="half an ans"))
    view.handle(ev.StreamInterrupted(error_kind="connection", message="ReadError", partial_text="half an ans"))
    block = _part(view, 0, TextBlock)
    html = block.widget.children[0].outputs[0]["data"]["text/html"]
    assert "interrupted" in html and STYLE["interrupted"] in html  # greyed: the faint text colour
    assert "[interrupted]" in view.transcript()
    view.handle(ev.ApiRequestStarted(request=1, attempt=1))
    view.handle(ev.TextDelta(text="fresh"))
    assert view.parts[-1] is not block and _part(view, -1, TextBlock).text == "fresh"


def test_truncation_fallback_and_notice_lines() -> None:
    view = make_view()
    view.handle(ev.ContextTruncated(deleted_range=(2, 41), keep="half", previous_tokens=172_310, max_allowed=160_000))
    view.handle(ev.ModelFallback(from_model="claude-opus-4-5", to_model="claude-sonnet-4-5", reason="overloaded"))
    view.handle(ev.Notice(level="warning", message="MCP server skipped"))
    lines = view.transcript().splitlines()
    assert "✂ previous request tokens 172,310 (input + output) ≥ max allowed 160,000 → hid messages 2–41 (keep half)" in lines
    assert "↪ model fallback: claude-opus-4-5 → claude-sonnet-4-5 (overloaded)" in lines
    assert "⚠ MCP server skipped" in lines


async def test_permission_allow_by_click() -> None:
    view = make_view()
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": "1+1"}))
    task = asyncio.create_task(view.ask_permission("python", {"code": "1+1"}, request()))
    await asyncio.sleep(0.01)
    prompt = view.permission
    assert _part(view, 0, ToolCard).prompt is prompt  # the prompt sits in the tool's card
    prompt.allow_button.click()
    assert await task == Allow()
    assert prompt.allow_button.disabled and prompt.deny_button.disabled and prompt.reason.disabled
    assert "✓ allowed" in prompt._status.value
    assert prompt.allow() is False  # decided once


@pytest.mark.parametrize("gesture, expected", [
    (lambda p: p.allow_always(), Allow(always=True)),
    (lambda p: p.deny("not now"), Deny("not now")),
    (lambda p: p.deny(), Deny("")),  # no reason: the engine words it
])
async def test_permission_programmatic_gestures(gesture: Any, expected: Any) -> None:
    view = make_view()
    task = asyncio.create_task(view.ask_permission("write_file", {"path": "a.txt", "content": "x"}, request("t9")))
    await asyncio.sleep(0.01)
    gesture(view.permission)
    assert await task == expected
    assert _part(view, 0, ToolCard).input == {"path": "a.txt", "content": "x"}


async def test_permission_deny_through_the_kernel_fast_path_reads_the_typed_reason() -> None:
    view = make_view()
    task = asyncio.create_task(view.ask_permission("python", {"code": "rm()"}, request()))
    await asyncio.sleep(0.01)
    p = view.permission
    # What the kernel's shell-channel thread sees: the Text edit, then the click, before the
    # main thread has applied the edit to the widget.
    assert not waiting.handle_comm_msg(p.reason.model_id, {"method": "update", "state": {"value": "too risky"}})
    assert p.reason.value == ""
    assert waiting.handle_comm_msg(p.deny_button.model_id, CLICK) is True
    assert await task == Deny("too risky")
    assert "denied: too risky" in view.transcript()
    assert p.deny_button.model_id not in waiting.pending_buttons()


async def test_permission_abort_denies_and_interrupt_propagates() -> None:
    abort = asyncio.Event()
    view = make_view(abort=abort)
    task = asyncio.create_task(view.ask_permission("python", {"code": "x"}, request()))
    await asyncio.sleep(0.01)
    abort.set()
    result = await task
    assert isinstance(result, Deny) and "aborted" in result.reason
    assert view.permission.allow_button.disabled

    view2 = make_view()
    task2 = asyncio.create_task(view2.ask_permission("python", {"code": "x"}, request("t2")))
    await asyncio.sleep(0.01)
    task2.cancel()  # the kernel interrupt
    with pytest.raises(asyncio.CancelledError):
        await task2
    assert view2.permission.allow_button.disabled
    assert "not run: stopped before a decision (interrupted)" in view2.permission._status.value
    # The card and the saved transcript say so too, not "? permission asked" (issue 34).
    assert "permission asked" not in view2.transcript() and "permission asked" not in view2.static_html()
    assert "permission: ✗ not run: stopped before a decision (interrupted)" in view2.transcript()
    assert "(interrupted)" in view2.transcript().splitlines()[1]  # the card's status line
    assert "permission: ✗ not run: stopped before a decision (aborted)" in view.transcript()


async def test_retry_countdown_and_buttons_call_the_callbacks() -> None:
    calls: list[str] = []
    view = make_view(on_retry_now=lambda: calls.append("now"), on_cancel=lambda: calls.append("cancel"))
    view.handle(ev.RetryScheduled(attempt=2, max_attempts=3, delay_s=4.0, error_kind="overloaded",
                                  message="Overloaded", status=529))
    status = view.retry_status
    assert "overloaded (529): Overloaded — retry 2/3" in status._label.value
    first = status.progress.value
    await asyncio.sleep(0.45)  # the ticker task refreshes the bar
    assert status.progress.value < first
    status.retry_button.click()
    status.cancel_button.click()  # after a choice, further presses are ignored
    assert calls == ["now"]
    await asyncio.sleep(0.25)
    assert status.retry_button.disabled
    view.handle(ev.ApiRequestStarted(request=1, attempt=2))
    assert status.outcome == "retrying" and status.progress.value == 0.0
    assert "retry 2/3" in view.transcript()


def test_an_error_event_mid_stream_is_not_shown_with_the_streams_200_as_its_status() -> None:
    """An ``overloaded_error`` event in a stream that began "200 OK": the retry line read
    "overloaded (200)", a success code as the failure's."""
    view = make_view()
    view.handle(ev.RetryScheduled(attempt=1, max_attempts=3, delay_s=0.3, error_kind="overloaded",
                                  message="Overloaded", status=200))
    assert "overloaded (in the stream): Overloaded — retry 1/3" in view.transcript()
    failed = FailurePrompt(ev.ApiRequestFailed(error_kind="overloaded", message="Overloaded", status=200, attempts=4))
    assert "(200)" not in failed.headline and "overloaded (in the stream)" in failed.headline


def test_a_finished_retry_says_its_jittered_wait_in_tenths_of_a_second() -> None:
    view = make_view()
    view.handle(ev.RetryScheduled(attempt=1, max_attempts=3, delay_s=1.818573, error_kind="overloaded",
                                  message="Overloaded", status=529))
    view.handle(ev.ApiRequestStarted(request=1, attempt=2))
    assert "(waited up to 1.8 s; retrying)" in view.transcript()
    assert "1.81857" not in view.transcript() and "1.81857" not in view.static_html()


async def test_retry_cancel_then_done_aborted() -> None:
    calls: list[str] = []
    view = make_view(on_cancel=lambda: calls.append("cancel"))
    view.handle(ev.RetryScheduled(attempt=1, delay_s=2.0, error_kind="rate_limit", message="slow down", status=429))
    view.retry_status.cancel()
    view.handle(ev.Done(reason="aborted"))
    assert calls == ["cancel"] and view.retry_status.outcome == "cancelled"


async def test_api_failure_prompt_with_new_session() -> None:
    new_sessions: list[int] = []
    view = make_view(on_new_session=lambda: new_sessions.append(1))
    event = ev.ApiRequestFailed(error_kind="context_window_exceeded", message="prompt is too long",
                                status=400, attempts=1, can_shorten=False)
    view.handle(event)
    task = asyncio.create_task(view.ask_api_failure(event))
    await asyncio.sleep(0.01)
    failure = view.failure
    assert len(view.parts) == 1  # the same card got the buttons
    assert failure.new_session_button in failure._buttons.children
    failure.new_session_button.click()
    assert await task == "cancel"
    assert new_sessions == [1] and failure.retry_button.disabled

    view.handle(e2 := ev.ApiRequestFailed(error_kind="server", message="boom", status=500, attempts=4))
    task = asyncio.create_task(view.ask_api_failure(e2))
    await asyncio.sleep(0.01)
    assert view.failure.new_session_button not in view.failure._buttons.children
    assert waiting.handle_comm_msg(view.failure.retry_button.model_id, CLICK)
    assert await task == "retry"


def test_done_adds_the_per_request_table_and_transcript() -> None:
    view = make_view()
    view.handle(ev.TextDelta(text="Hello **world**"))
    view.handle(ev.RequestCompleted(record=record()))
    view.handle(ev.Done(reason="end_turn", totals=ev.Totals(requests=1, cost_usd=0.0042)))
    table = _part(view, -1, TableBlock)
    assert list(table.df["request"]) == [1]
    assert "text/html" in table.widget.outputs[0]["data"]
    text = view.transcript()
    assert "■ done: end_turn — this run 1 request(s)" in text and "API requests of this run" in text
    html = view.static_html()
    assert "<strong>world</strong>" in html and "<table" in html


@pytest.fixture
def shell() -> Iterator[Any]:
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    saved = ip.display_pub
    ip.display_pub = CapturingDisplayPublisher()
    try:
        yield ip
    finally:
        ip.display_pub = saved


def test_display_then_finish_replaces_the_widgets_with_the_static_transcript(shell: Any) -> None:
    view = make_view()
    view.display()
    view.handle(ev.TextDelta(text="answer"))
    view.handle(ev.Done(reason="end_turn"))
    bundle = view.finish()
    first, last = shell.display_pub.outputs[0], shell.display_pub.outputs[-1]
    assert "application/vnd.jupyter.widget-view+json" in first["data"]
    assert last["update"] is True
    assert last["transient"]["display_id"] == first["transient"]["display_id"]
    # The finished run no longer depends on widget state: static renderers and Lab show the same.
    assert "application/vnd.jupyter.widget-view+json" not in last["data"]
    assert last["data"]["text/plain"] == bundle["text/plain"] == view.transcript()
    assert "answer" in last["data"]["text/html"]
    assert view.finish() == bundle and len(shell.display_pub.outputs) == 2  # idempotent


def test_finish_without_display_publishes_plain_and_html(shell: Any) -> None:
    view = make_view()
    view.handle(ev.TextDelta(text="hi"))
    view.finish()
    (out,) = shell.display_pub.outputs
    assert set(out["data"]) == {"text/plain", "text/html"}
    assert "hi" in out["data"]["text/plain"]


def test_show_execution_puts_rich_outputs_in_the_matching_card() -> None:
    from nbagent.notebook.executor import ExecutionRecord
    from nbagent.tools.executor import ExecutionResult

    view = make_view()
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": "plot()"}))
    png = "iVBORw0KGgo="
    view.show_execution(ExecutionRecord("plot()", ExecutionResult(), 0.0, 0.1,
                                        ({"data": {"image/png": png, "text/plain": "<Figure>"}, "metadata": {}},)))
    card = _part(view, 0, ToolCard)
    assert card._rich.outputs[0]["data"]["image/png"] == png
    assert "[output] <Figure>" in view.transcript()
    assert f"data:image/png;base64,{png}" in view.static_html()
    view.show_execution(ExecutionRecord("other()", ExecutionResult(rich={"text/html": "<b>x</b>"}), 0.0, 0.1))
    assert len(card.outputs) == 1  # no card ran that code


async def test_the_reason_box_syncs_once_and_enter_denies_with_the_whole_reason() -> None:
    view = make_view()
    task = asyncio.create_task(view.ask_permission("python", {"code": "rm()"}, request()))
    await asyncio.sleep(0.01)
    p = view.permission
    # One update with the whole value (on Enter / blur), never one per keystroke.
    assert p.reason.continuous_update is False
    submit = {"method": "custom", "content": {"event": "submit"}}
    # Enter arrives before the value: the decision waits a moment and reads the whole reason.
    assert waiting.handle_comm_msg(p.reason.model_id, submit) is False
    waiting.handle_comm_msg(p.reason.model_id, {"method": "update", "state": {"value": "No code please"}})
    assert await asyncio.wait_for(task, 2) == Deny("No code please")
    assert "denied: No code please" in view.transcript()


async def test_enter_on_the_widget_route_denies() -> None:
    view = make_view()
    task = asyncio.create_task(view.ask_permission("python", {"code": "x"}, request()))
    await asyncio.sleep(0.01)
    p = view.permission
    p.reason.value = "not today"
    p._on_reason_msg(p.reason, {"event": "submit"}, [])
    assert await asyncio.wait_for(task, 2) == Deny("not today")


def test_an_interrupted_run_marks_partial_text_and_shows_the_cost_so_far() -> None:
    view = make_view()
    view.handle(ev.TextDelta(text="Half a sent"))
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": "while True: pass"}))
    view.interrupted(session_cost=0.0123)
    text = view.transcript()
    assert "Half a sent\n  [interrupted]" in text
    assert "python (interrupted)" in text or "interrupted" in _part(view, 1, ToolCard).status
    assert "interrupted — session spent so far $0.0123" in text
    assert view.header.cost == 0.0123


def test_waiting_for_the_first_token_shows_elapsed_time_and_cancel() -> None:
    clock = FakeClock()
    cancelled: list[bool] = []
    view = make_view(clock=clock, on_cancel=lambda: cancelled.append(True))
    view.handle(ev.ApiRequestStarted(request=1))
    clock.t += 12
    view.tick()
    assert view.activity.text() == "waiting for the first token (12 s)"
    assert view.activity.widget.layout.display == "flex"
    view.activity.cancel_button.click()
    assert cancelled == [True]
    view.handle(ev.TextDelta(text="hi"))
    assert view.activity.what is None and view.activity.widget.layout.display == "none"



def test_a_stop_click_arriving_after_the_run_ended_stops_nothing() -> None:
    """The front-end may send a click before it sees the button disabled; the session's Stop it
    would call then ends whatever run the session has next (Run All's next agent cell)."""
    clock = FakeClock()
    stopped: list[bool] = []
    view = make_view(clock=clock, on_cancel=lambda: stopped.append(True))
    view.handle(ev.ApiRequestStarted(request=1))
    view.finish()
    view.activity.cancel_button.click()
    assert stopped == []

async def test_a_tool_shows_its_running_time_and_its_recorded_duration_when_done() -> None:
    clock = FakeClock()
    view = make_view(clock=clock)
    view.handle(ev.ApiRequestStarted(request=1))
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": "slow()"}))
    view.handle(ev.RequestCompleted())
    view.handle(ev.PermissionAsked(tool_use_id="t1", name="python", input={"code": "slow()"}))
    task = asyncio.create_task(view.ask_permission("python", {"code": "slow()"}, request("t1")))
    await asyncio.sleep(0.01)
    clock.t += 17  # the user reads the code for 17 s before clicking
    view.permission.allow()
    await task
    clock.t += 4
    view.tick()
    card = _part(view, 0, ToolCard)
    assert card.status == "running (4 s)" and view.activity.text() == "running python (4 s)"
    clock.t += 0.25
    # The engine's figure (the run alone, the permission wait excluded): what a replay shows too.
    view.handle(ev.ToolResult(tool_use_id="t1", name="python", content="ok", duration_s=4.25))
    assert card.status == "done in 4.25 s"
    assert view.activity.what is None



@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads a thread's signal mask in Linux's /proc")
async def test_the_clock_that_ticks_while_the_code_blocks_leaves_the_interrupt_to_the_main_thread() -> None:
    """A SIGINT the kernel hands to the clock's thread only sets Python's flag: a ``time.sleep(30)`` of
    the model's code on the main thread then slept on to its end after ■ (once in CI)."""
    view = make_view()
    view.handle(ev.ApiRequestStarted(request=1))
    view.start_tool(view.card("t1", "python"))
    try:
        clock = next(t for t in threading.enumerate() if t.name == "nbagent-clock")
        assert clock.native_id is not None and _sigint_blocked_in(clock.native_id), "the clock's thread takes SIGINT"
    finally:
        view.finish()


def _sigint_blocked_in(native_id: int) -> bool:
    status = Path(f"/proc/self/task/{native_id}/status").read_text()
    blocked = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigBlk")), 16)
    return bool(blocked & (1 << (signal.SIGINT - 1)))

def test_colours_come_from_the_theme_with_light_fallbacks() -> None:
    import re

    from nbagent.notebook.view.render import STYLE, highlight

    for name, style in STYLE.items():
        assert "var(--jp-" in style, name
    box = highlight("for i in range(3):\n    print(i)")
    assert "var(--jp-layout-color0" in box and "var(--jp-content-font-color1" in box  # the page: see STYLE["code"]
    # No fixed token colours (they assumed a white page): only the box's themed colours.
    assert not re.search(r'<span style="color', box)
    assert "print" in box


def test_bypass_mode_is_shown_in_red_on_every_run_and_other_modes_are_named() -> None:
    from nbagent.notebook.view.header import Header

    bypass = Header("m", "simulated", 200_000, 160_000, 0.0, permission_mode="bypass")
    assert "BYPASS" in bypass._title.value and "error-color" in bypass._title.value
    assert "BYPASS" in bypass.plain()
    assert "plan mode" in Header("m", "simulated", 200_000, 160_000, 0.0, permission_mode="plan").plain()
    default = Header("m", "simulated", 200_000, 160_000, 0.0)
    assert "BYPASS" not in default._title.value and "mode" not in default.plain()


def test_the_model_id_keeps_one_line_unless_longer_than_a_narrow_row() -> None:
    from nbagent.notebook.view.header import Header

    # The e2e check is tests/e2e/test_live_header_layout.py; an ARN would run out of a narrow row whole.
    assert "white-space:nowrap" in Header("claude-sonnet-4-5-20250929", "x", None, None, 0.0)._title.value
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5"
    assert "overflow-wrap:anywhere" in Header(arn, "x", None, None, 0.0)._title.value


def test_a_web_search_the_api_ran_shows_its_sources_in_the_tool_card() -> None:
    view = AgentView(model="m", provider="simulated", context_window=200_000, max_allowed=160_000)
    view.handle(ev.ToolUseDelta(tool_use_id="srv_1", name="web_search", partial_json='{"query": "nbagent"}'))
    view.handle(ev.ServerToolResult(tool_use_id="srv_1", name="web_search", input={"query": "nbagent"},
                                    sources=("A — https://example.org/a", "B — https://example.org/b")))
    text = view.transcript()
    assert "web_search" in text and "https://example.org/a" in text and "run by the API" in text


def test_unpriced_requests_never_show_as_zero_dollars() -> None:
    from nbagent.display.format import fmt_total_cost

    assert fmt_total_cost(0.0, 3, 3) == "unknown (3 request(s) without prices)"
    assert fmt_total_cost(0.0123, 1, 3) == "≥ $0.0123 (1 request(s) without prices)"
    assert fmt_total_cost(0.0123, 0, 3) == "$0.0123"
    view = make_view()
    view.handle(ev.RequestCompleted(record=record(cost=None)))
    assert "session spent unknown (1 request(s) without prices)" in view.header.plain()
    view.handle(ev.RequestCompleted(record=record(request=2, cost=0.0042)))
    assert "session spent ≥ $0.0042 (1 request(s) without prices)" in view.header.plain()


def test_streamed_text_is_sent_append_only_and_settled_chunks_never_again() -> None:
    import json


    sent: dict[str, int] = {}

    def publish(c: Any, msg_type: str, data: Any = None, *a: Any, **k: Any) -> None:
        sent[c.comm_id] = sent.get(c.comm_id, 0) + len(json.dumps(data, default=str))

    clock = FakeClock()
    view = make_view(clock=clock)
    paragraph = "word " * 30 + "\n\n"  # 152 chars
    text = paragraph * 200
    # The class the widgets' comms really have: an earlier test in the process may have put a
    # kernel's Comm class in place of the DummyComm.
    comm_class = type(view.widget.comm)
    orig = comm_class.publish_msg
    comm_class.publish_msg = publish  # type: ignore[method-assign]
    try:
        settled: dict[str, int] = {}
        for at in range(0, len(text), 20):
            clock.t += 0.01
            view.handle(ev.TextDelta(text=text[at:at + 20]))
            block = _part(view, 0, TextBlock)
            chunks = [o for g in block.widget.children for o in g.children][:-1]
            for out in chunks:  # once a chunk has settled, its widget is never sent again
                settled.setdefault(out.comm.comm_id, sent[out.comm.comm_id])
                assert sent[out.comm.comm_id] == settled[out.comm.comm_id]
        view.flush()
    finally:
        comm_class.publish_msg = orig  # type: ignore[method-assign]
    assert block.shown() == text and len(settled) > 20
    assert sum(sent.values()) <= 3 * len(text)


def test_a_denied_call_is_labelled_denied_not_error() -> None:
    view = AgentView(model="m", provider="simulated", context_window=200_000, max_allowed=160_000)
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": "1"}))
    view.handle(ev.PermissionDenied(tool_use_id="t1", name="python", input={"code": "1"}, reason="not now"))
    view.handle(ev.ToolResult(tool_use_id="t1", name="python", content="The user denied this python call: not now",
                              is_error=True))
    text = view.transcript()
    assert "[tool] python (denied)" in text and "error in" not in text


def test_an_aborted_run_ends_like_an_interrupted_one_short_and_with_its_tool_marked() -> None:
    """Stop (or ■ on the nbagent kernel) ends the engine's run with Done("aborted"): the same short
    ending as a cancelled cell on ipykernel — the running tool marked, one line, no table."""
    view = make_view()
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": "slow()"}))
    view.handle(ev.RequestCompleted(record=record()))
    view.handle(ev.Done(reason="aborted", totals=ev.Totals(requests=1, spent_usd=0.0042, spent_requests=1)))
    text = view.transcript()
    assert "[tool] python (interrupted)" in text
    assert "■ interrupted — session spent so far $0.0042" in text
    assert "done: aborted" not in text and "API requests of this run" not in text


def test_a_run_stopped_mid_answer_on_a_model_without_prices_says_unknown_not_zero() -> None:
    """The first request of a session on a model without prices, stopped with ■ after its answer
    began: billed (its price unknown), no record; the line read "session spent so far $0.0000"."""
    stopped = ev.Totals(spent_requests=1, spent_unpriced_requests=1)
    for end in ("done", "cancel"):
        view = make_view()
        view.handle(ev.TextDelta(text="Half a sent"))
        if end == "done":
            view.handle(ev.Done(reason="aborted", totals=stopped))
        else:
            view.interrupted(session_cost=0.0, unpriced=1)
        text = view.transcript()
        assert "interrupted — session spent so far unknown (1 request(s) without prices)" in text, text
        assert "$0.0000" not in text


async def test_a_rate_limit_wait_reads_as_a_wait_not_a_failure_with_send_now_and_cancel() -> None:
    calls: list[str] = []
    view = make_view(on_retry_now=lambda: calls.append("now"), on_cancel=lambda: calls.append("cancel"))
    view.handle(ev.RateLimitWait(delay_s=12.0, reason="retry_after", dimension="requests", remaining=0, limit=50))
    status = view.retry_status
    label = status._label.value
    assert "waiting for the shared rate limit (12 s)" in label and "0 of 50 requests left" in label
    assert "failed" not in label and "retry 1/3" not in label
    assert STYLE["muted"] in label  # not the warning colour of a failure
    assert status.retry_button.description == "Send now" and status.cancel_button.description == "Cancel"
    status.cancel_button.click()
    assert calls == ["cancel"]
    view.handle(ev.Done(reason="aborted"))
    assert status.outcome == "cancelled"
    assert "waiting for the shared rate limit (12 s)" in view.transcript()
