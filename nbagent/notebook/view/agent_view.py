"""``AgentView``: renders the engine's event stream with stock ipywidgets (no custom JS).

``view.handle(event)`` is the single entry point for events; ``ask_permission`` and
``ask_api_failure`` are the two questions the loop can ask the user. Widgets change only from the
event loop that runs the agent (``handle``, the two ``ask_*`` coroutines and the retry countdown
task); click handlers only resolve decisions or call the thread-safe callbacks the view was given.

Every output also has text/plain and static HTML faces: ``transcript()`` / ``static_html()``, and
``finish()`` puts both into the view's display output (next to the widget view), so nbconvert,
GitHub and terminals show a readable transcript.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal, Mapping

import ipywidgets as w

from ...display.format import terminal_text
from ...display.html import NO_TEX, esc
from ...engine.contracts import events as ev
from ...engine.contracts.events import Event, RequestRecord
from ...engine.contracts.permissions import Allow, Deny, PermissionRequest
from . import questions
from .body import Part, RunBody
from .handlers import HANDLERS
from .header import Header
from .progress import TICK_S, Activity
from .prompts import RUN_CLASS, PermissionPrompt
from .render import STYLE
from .retry import FailurePrompt, RetryStatus
from .text import TextBlock, ThinkingBlock
from .tools import ToolCard

if TYPE_CHECKING:
    from IPython.display import DisplayHandle

    from ..executor import ExecutionRecord

STREAM_KINDS = frozenset({"text_delta", "thinking_delta", "tool_use_delta"})
MIN_INTERVAL = 0.05  # at most 20 stream updates per second


class AgentView:
    """The live view of one agent run (one ``%%agent`` cell)."""

    def __init__(
        self,
        *,
        model: str = "",
        provider: str = "simulated",
        context_window: int | None = None,
        max_allowed: float | None = None,
        session_cost: float = 0.0,
        recorded_spend: float = 0.0,
        session_unpriced: int = 0,
        permission_mode: str = "default",
        context_policy: str = "",
        on_retry_now: Callable[[], object] | None = None,
        on_cancel: Callable[[], object] | None = None,
        on_new_session: Callable[[], object] | None = None,
        cell_shown: Callable[[], Awaitable[bool]] | None = None,
        abort: asyncio.Event | None = None,
        show_table: bool = True,
        min_interval: float = MIN_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.on_retry_now, self.on_cancel, self.on_new_session = on_retry_now, on_cancel, on_new_session
        self.cell_shown = cell_shown  # False: the cell showing this view left the notebook
        self.abort, self.show_table = abort, show_table
        self.clock = clock
        self.records: list[RequestRecord] = []
        self.attempted = 0  # requests sent, retries included (a failed one has no record)
        self.cancelled = False  # the user clicked Cancel (the run ends as cancelled, not interrupted)
        self.done: ev.Done | None = None
        self.finished = False
        self._cards: dict[str, ToolCard] = {}
        self.prompts_shown: list[PermissionPrompt] = []  # every permission prompt of the run, in order
        self.failures_shown: list[FailurePrompt] = []  # every failed request's card, in order
        self._retries: list[RetryStatus] = []
        self._ticker: asyncio.Task[None] | None = None
        self._handle: DisplayHandle | None = None
        self.header = Header(model, provider, context_window, max_allowed, session_cost, permission_mode,
                             context_policy, recorded_spend, session_unpriced)
        self.gauge = self.header.gauge
        self.body = RunBody(min_interval, clock)
        self.activity = Activity(on_cancel, clock=clock)
        self._tools_to_run: list[ToolCard] = []  # this request's calls, in the order they run
        self._progress: asyncio.Task[None] | None = None
        self._last_tick = time.monotonic()
        self._finished_event = threading.Event()  # ends the clock thread
        self.widget = w.VBox([self.header.widget, self.body.widget, self.activity.widget])
        # While the run lasts the live widget is on the page (finish() replaces it with the static
        # transcript): the front-end marks one still there when its kernel restarts as never finished.
        self.widget.add_class(RUN_CLASS)

    # --- the public surface -------------------------------------------------------------------

    @property
    def permission(self) -> PermissionPrompt:
        """The latest permission prompt (``view.permission.allow()`` etc.)."""
        if not self.prompts_shown:
            raise LookupError("no permission prompt has been shown yet")
        return self.prompts_shown[-1]

    @property
    def failure(self) -> FailurePrompt:
        """The latest failed-request card (``view.failure.retry()`` / ``.cancel()``)."""
        if not self.failures_shown:
            raise LookupError("no request has failed yet")
        return self.failures_shown[-1]

    @property
    def retry_status(self) -> RetryStatus:
        """The latest retry countdown (``view.retry_status.retry_now()`` / ``.cancel()``)."""
        if not self._retries:
            raise LookupError("no retry has been scheduled yet")
        return self._retries[-1]

    def cancel_run(self) -> None:
        """Cancel clicked on a retry's countdown (thread-safe: a flag, then the engine's abort)."""
        self.cancelled = True
        if self.on_cancel is not None:
            self.on_cancel()

    def handle(self, event: Event) -> None:
        """Render one engine event (call from the agent coroutine)."""
        kind = event.kind
        if kind in STREAM_KINDS and self.activity.what is not None:
            self.activity.stop()  # tokens are arriving: the wait is over
        if kind not in STREAM_KINDS:
            self.flush()
            if kind not in ("retry_scheduled", "rate_limit_wait", "notice"):  # whatever follows a wait ends it
                aborted = kind == "done" and getattr(event, "reason", "") == "aborted"
                self._end_retry("retrying" if kind == "api_request_started" else "cancelled" if aborted else "ended")
        # Kinds this view does not know (a newer engine) are kept out of the way, not fatal.
        handler = HANDLERS.get(kind)
        if handler is not None:
            handler(self, event)

    async def ask_permission(self, tool_name: str, tool_input: Mapping[str, object],
                             request: PermissionRequest | None = None) -> Allow | Deny:
        """Show a permission prompt for a tool call and wait for the user's answer (a ``can_use_tool``
        callback; see :func:`.questions.ask_permission`)."""
        return await questions.ask_permission(self, tool_name, tool_input, request)

    async def ask_api_failure(self, event: ev.ApiRequestFailed) -> Literal["retry", "cancel"]:
        """Offer **Retry** / **Cancel** (and *Start new session*) for a failed request (an
        ``on_api_failure`` callback; see :func:`.questions.ask_api_failure`)."""
        return await questions.ask_api_failure(self, event)

    def interrupted(self, session_cost: float | None = None, unpriced: int = 0) -> None:
        """The run was interrupted (■): mark what was streaming, show the cost so far, one line.

        Called by the front-end when the run's generator was cancelled: the engine then yields no
        ``Done``, so the view closes the run itself (partial text greyed and labelled, running
        tools marked, the header's cost brought up to date). ``unpriced``: the session's billed
        requests without prices (``Totals.spent_unpriced_requests``), a stopped one's included.
        """
        if self.done is not None:
            return  # the run had already ended (e.g. Done("aborted") before the cancellation)
        self.activity.stop()
        for part in self.body.request_parts:
            if isinstance(part, (TextBlock, ThinkingBlock)) and not part.interrupted:
                part.interrupt("interrupted by the user")
        for card in self._cards.values():
            if card.result is None and card.denied is None:
                card.set_status("interrupted")
        self.body.close_request()
        self._end_retry("cancelled")
        if session_cost is not None:
            self.header.update(cost=session_cost)
        if unpriced > self.header.unpriced:  # never "$0.0000" for a stopped request nobody could price
            self.header.update(unpriced=unpriced)
        # Short: the cell's error line (outcome.INTERRUPTED_LINE) says what happens next.
        self.body.line(f"interrupted — session spent so far {self.header.cost_text()}{self.header.recorded_note()}", icon="■",
                       style=STYLE["interrupted"])

    def flush(self) -> None:
        """Send pending stream updates now (the last update is never dropped)."""
        self.body.flush()

    def show_execution(self, record: ExecutionRecord) -> None:
        """Show what the python tool's code displayed (plots, HTML) in its card.

        Meant as a :class:`~nbagent.notebook.executor.ShellExecutor` ``on_execute`` hook (it runs
        on the agent's loop); the card is the latest python call whose code matches.
        """
        outputs = list(getattr(record, "displays", ()))
        rich = getattr(getattr(record, "result", None), "rich", None)
        if rich and not outputs:
            outputs = [{"data": rich, "metadata": {}}]
        if not outputs:
            return
        for card in reversed(list(self._cards.values())):
            if isinstance(card.input, dict) and card.input.get("code") == record.code:
                card.add_outputs(outputs)
                return

    def tick(self) -> None:
        """Refresh the retry countdown, the activity line and a running tool's clock."""
        self._last_tick = time.monotonic()
        if self._retries:
            self._retries[-1].tick()
        self.activity.tick()
        for card in self._tools_to_run:
            if card.started is not None and card.result is None:
                card.set_status(f"running ({self.clock() - card.started:.0f} s)")

    def _ensure_progress(self) -> None:
        if self._progress is not None or self.finished:
            return
        if threading.current_thread() is not threading.main_thread():
            # A worker-thread loop (the fallback path, run_sync): a ticker there blocked the
            # kernel's click path in the kernel tests; the line then updates with each event only.
            return
        try:
            self._progress = asyncio.get_running_loop().create_task(self._run_progress())
        except RuntimeError:
            self._progress = None  # no loop (plain tests): tick() can be called by hand
            return
        from ..user_code_interrupt import sigint_kept_from_new_threads

        with sigint_kept_from_new_threads():  # alive while the model's code blocks: ■ must not land here
            threading.Thread(target=self._tick_while_blocked, name="nbagent-clock", daemon=True).start()

    async def _run_progress(self) -> None:
        while not self.finished:
            await asyncio.sleep(TICK_S)
            self.tick()

    def _tick_while_blocked(self) -> None:
        """Tick from a thread when the loop cannot: the python tool's code runs on the kernel's
        main thread and blocks the loop, so its clock stayed at "(0 s)" for the whole call."""
        while not self._finished_event.wait(TICK_S) and self.done is None:  # a view never finished stops too
            if time.monotonic() - self._last_tick > 2 * TICK_S:
                self.tick()  # widget updates are thread-safe (ipykernel's iopub thread sends them)

    def start_tool(self, card: ToolCard) -> None:
        """Start a call's clock (it runs now: after its Allow, or at its turn in the request)."""
        card.started = self.clock()
        card.set_status("running (0 s)")
        self.activity.start(f"running {card.name}")
        self._ensure_progress()

    def start_next_tool(self) -> None:
        """Start the clock of the next call that will run (one at a time, in order)."""
        for card in self._tools_to_run:
            if card.result is None and card.denied is None:
                if card.started is None and card.prompt is None:
                    self.start_tool(card)
                return
        self.activity.stop()

    def transcript(self) -> str:
        """The run as plain text (what terminals and nbconvert's text exporters show), its control
        characters marked (:func:`~nbagent.display.format.terminal_text`): the model's text and a file it
        read reached a terminal IPython's screen as they were, escapes and all."""
        return terminal_text("\n".join([self.header.plain(), *(p.plain() for p in self.parts)]))

    def static_html(self) -> str:
        """The run as static HTML (no widgets needed)."""
        body = "".join(p.html() for p in self.parts)
        return (f'<div class="nbagent-transcript {NO_TEX}" style="font-family:sans-serif">'
                f'<div style="{STYLE["muted"]}">{esc(self.header.plain())}</div>{body}</div>')

    def display(self) -> DisplayHandle | None:
        """Display the live view (with fallbacks) and remember the handle for :meth:`finish`."""
        from IPython.display import display

        self._handle = display(self, display_id=True)
        return self._handle

    def finish(self) -> dict[str, str]:
        """Flush, close the run and publish the final fallbacks; returns the plain/HTML bundle.

        If the view was shown with :meth:`display`, its output is replaced in place by the static
        transcript (text/plain + HTML): the run is over, nothing in it needs a live widget any
        more, and a saved notebook then reads the same in JupyterLab, nbconvert, GitHub and a
        terminal, with no dependency on widget state. Otherwise a ``display_data`` with the two is
        published.
        """
        self.flush()
        self._end_retry("stopped")
        self.activity.close()
        self._finished_event.set()
        if self._progress is not None:
            self._progress.cancel()
        bundle = {"text/plain": self.transcript(), "text/html": self.static_html()}
        if self.finished:
            return bundle
        self.finished = True
        from IPython import get_ipython

        if get_ipython() is None:  # plain Python: nothing to publish to; the bundle is returned
            return bundle
        if self._handle is not None:
            self._handle.update(bundle, raw=True)
        else:
            from IPython.display import display

            display(bundle, raw=True)
        return bundle

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, object]:
        data = dict(self.widget._repr_mimebundle_() or {})
        data["text/plain"] = self.transcript()
        data["text/html"] = self.static_html()
        return data

    @property
    def session_cost(self) -> float:
        """The session's cost so far, as the header shows it."""
        return self.header.cost

    # --- what the event handlers change (handlers.py uses these, ``body`` and the parts' own API) --

    @property
    def parts(self) -> list[Part]:
        """Everything the run shows, in order (lines, blocks, cards, prompts)."""
        return self.body.parts

    @property
    def stream_updates(self) -> int:
        """Widget pushes of streamed content so far (at most one per ``min_interval``)."""
        return self.body.stream_updates

    def begin_request(self) -> None:
        """A request is being sent: the previous one is closed and the wait for a token shows."""
        self.attempted += 1
        self.body.close_request()
        self._tools_to_run = []
        self.activity.start("waiting for the first token")
        self._ensure_progress()

    def run_tools_of_request(self) -> None:
        """The request is complete: its tool calls run next, one at a time, in order."""
        self._tools_to_run = [p for p in self.body.request_parts if isinstance(p, ToolCard)]
        self.body.close_request()
        self.start_next_tool()

    def schedule_retry(self, event: ev.RetryScheduled | ev.RateLimitWait) -> RetryStatus:
        """Show a retry's countdown (with Retry now / Cancel) and tick it on the running loop."""
        self._end_retry("retrying")
        status = self.body.add(RetryStatus(event, self.on_retry_now, self.cancel_run, clock=self.clock))
        self._retries.append(status)
        try:
            self._ticker = asyncio.get_running_loop().create_task(status.run_ticker())
        except RuntimeError:
            self._ticker = None
        return status


    def card(self, tool_use_id: str, name: str) -> ToolCard:
        """The card of a tool call, made (as part of the current request) on first mention."""
        card = self._cards.get(tool_use_id)
        if card is None:
            card = self._cards[tool_use_id] = self.body.add(ToolCard(tool_use_id, name), of_request=True)
        return card

    def show_failure(self, event: ev.ApiRequestFailed) -> FailurePrompt:
        """Show a failed request's card (its Retry / Cancel ask only if the loop asks)."""
        prompt = self.body.add(FailurePrompt(event, self.on_new_session))
        self.failures_shown.append(prompt)
        return prompt

    def _end_retry(self, outcome: str) -> None:
        if self._retries and self._retries[-1].outcome is None:
            status = self._retries[-1]
            status.end("cancelled" if status.pressed == "cancel" else outcome)
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
