"""Receive widget clicks while a cell is still running.

Measured on ipykernel 7.4 (see the notebook-and-kernel spec): a click's ``comm_msg`` reaches a cell
that *awaits*, but click handlers may run off the main thread (JupyterLab routes widget comms over
subshells; the nbagent kernel's fast path runs on the shell-channel thread). So:

- a :class:`Decision` is resolved once, under a ``threading.Lock``, from any thread, and handed to
  the event loop with ``call_soon_threadsafe``;
- :func:`wait_for_decision` waits with a short tick, because a bare ``await future`` cannot be
  interrupted (ipykernel #881); the kernel interrupt arrives as ``CancelledError`` and is re-raised;
- a process-wide registry maps prompt-button model ids to decisions, so the kernel can resolve a
  decision on the shell-channel thread (:func:`handle_comm_msg`) even when the cell is blocked.

What the kernel's interrupt sets to abort a running agent is in :mod:`.aborts`.
"""

from __future__ import annotations

import asyncio
import collections
import threading
from typing import Any, Awaitable, Callable, Generic, Literal, TypeVar, Union, overload

T = TypeVar("T")


class _Unset:
    """The type of :data:`_UNSET`: no value decided yet (None may be a decided value)."""


_UNSET = _Unset()


class WaitAborted(Exception):
    """The abort event was set before the decision arrived."""


class WaitUnseen(Exception):
    """The prompt left every page while waiting (reloaded or closed): no click can come."""


SHOWN_EVERY_S = 5.0
"""How often a wait asks whether its prompt is still shown (a reload leaves the kernel waiting)."""


NO_PAGE_S = 30.0
LEFT_PAGE = "left_page"
"""Set (true) on a ``shown`` check that found its cell deleted from the page, run again there while it
ran, or the page reloaded (opened again) since it ran it: a page is open and runs the user's other
cells, so a stop there must end the turn without failing the cell (a failure aborts the kernel's
queue: the cells below, the new run, or a cell the user ran in the reloaded page)."""
"""How long a prompt is still taken as shown while no page of the notebook answers (a reload, a
dropped connection coming back); past it, every tab of the notebook was closed and the prompt,
shown nowhere, is given up (denied, or Retry / Cancel cancelled) rather than keep the kernel Busy."""


class Decision(Generic[T]):
    """A value decided once, from any thread, and awaited on an asyncio loop.

    The loop is the one running when the decision is created (or the first loop that waits on it).
    ``resolve`` returns ``False`` when a value was already set, so concurrent clicks (the kernel
    fast path and the normal widget route) are harmless.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._value: T | _Unset = _UNSET
        if loop is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
        self._loop = loop
        # Created on the loop's thread only (by __init__ on a running loop, or by the waiter).
        self._future: asyncio.Future[T] | None = loop.create_future() if loop is not None else None

    @property
    def resolved(self) -> bool:
        """Whether a value has been set."""
        return self._done.is_set()

    @property
    def value(self) -> T:
        """The decided value; ``LookupError`` if it is not decided yet."""
        value = self._value
        if not self._done.is_set() or isinstance(value, _Unset):
            raise LookupError("decision not made yet")
        return value

    def resolve(self, value: T) -> bool:
        """Set the value (thread-safe). Returns ``False`` if it was already set."""
        with self._lock:
            if not isinstance(self._value, _Unset):
                return False
            self._value = value
            self._done.set()
            loop, fut = self._loop, self._future
        if loop is not None and fut is not None:
            try:
                loop.call_soon_threadsafe(_set_result, fut, value)
            except RuntimeError:  # the loop is closed: nobody is waiting on it any more
                pass
        return True

    def wait_sync(self, timeout: float | None = None) -> bool:
        """Block the calling thread until decided (for synchronous waits); ``True`` if decided."""
        return self._done.wait(timeout)

    def _future_on(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[T]:
        with self._lock:
            if self._future is None or self._loop is not loop:
                future: asyncio.Future[T] = loop.create_future()
                self._loop, self._future = loop, future
                if not isinstance(self._value, _Unset):
                    future.set_result(self._value)
            return self._future


def _set_result(fut: asyncio.Future[T], value: T) -> None:
    if not fut.done():
        fut.set_result(value)


async def wait_for_decision(decision: Decision[T], *, abort: asyncio.Event | None = None, tick: float = 0.1,
                            shown: Callable[[], Awaitable[bool]] | None = None,
                            shown_every: float | None = None) -> T:
    """Wait until ``decision`` is resolved and return its value.

    Waits in ``tick``-second slices so a kernel interrupt (which arrives as ``CancelledError``) is
    seen within one tick; the cancellation is never swallowed. Raises :class:`WaitAborted` when
    ``abort`` is set first, and :class:`WaitUnseen` when ``shown`` (asked every ``shown_every``
    seconds, :data:`SHOWN_EVERY_S` by default) says the prompt is no longer on any page.
    """
    loop = asyncio.get_running_loop()
    fut = decision._future_on(loop)
    every = SHOWN_EVERY_S if shown_every is None else shown_every
    check_at = loop.time() + every
    try:
        while not fut.done():
            if abort is not None and abort.is_set():
                raise WaitAborted("aborted while waiting for a decision")
            await asyncio.wait({fut}, timeout=tick)
            if shown is not None and not fut.done() and loop.time() >= check_at:
                if not await shown() and not decision.wait_sync(0):  # a click during the check still counts
                    raise WaitUnseen("the prompt is no longer shown on any page")
                check_at = loop.time() + every
        return fut.result()
    finally:
        # The future belongs to the decision: never cancel it here (a late click must still be
        # able to resolve it harmlessly); just drop the fast-path routes that lead to it.
        unregister_decision(decision)


# --- prompt buttons (the kernel's shell-channel fast path) -------------------------------------

# Process-wide on purpose: the kernel resolves a click on its shell-channel thread from nothing but
# the comm's widget model id, with no view or session at hand, and model ids are unique per process.
_registry_lock = threading.Lock()
_buttons: dict[str, tuple[object, Callable[[], bool]]] = {}
"""Button model id → (the decision it resolves, for :func:`unregister_decision`; the call resolving it)."""
_texts: dict[str, str | None] = {}
_early_clicks: collections.deque[str] = collections.deque(maxlen=64)  # clicks of not-yet-registered buttons


@overload
def register_button(button_model_id: str, decision: Decision[T], value: Callable[[], T], *,
                    factory: Literal[True]) -> None: ...


@overload
def register_button(button_model_id: str, decision: Decision[T], value: T, *, factory: Literal[False] = False) -> None: ...


def register_button(button_model_id: str, decision: Decision[T], value: Any, *, factory: bool = False) -> None:
    """Route a click of the widget ``button_model_id`` to ``decision.resolve(value)``.

    With ``factory=True``, ``value`` is called at click time (e.g. to read a reason field).
    """
    # ``value`` is a T or makes one (the overloads say which): one parameter, two shapes.
    make: Callable[[], T] = value if factory else lambda: value

    def resolve() -> bool:
        return not decision.resolved and decision.resolve(make())

    with _registry_lock:
        _buttons[button_model_id] = (decision, resolve)
        early = button_model_id in _early_clicks
        if early:
            _early_clicks.remove(button_model_id)
    if early:  # clicked between the widget's comm_open and this registration
        resolve_by_button(button_model_id)


def register_text(text_model_id: str) -> None:
    """Track the value of a Text widget from its ``update`` comm messages on the shell thread.

    The click that follows an edit is seen by the shell-channel thread before the main thread has
    applied the edit to the widget, so the fast path keeps its own copy (:func:`observed_text`).
    """
    with _registry_lock:
        _texts.setdefault(text_model_id, None)


def observed_text(text_model_id: str) -> str | None:
    """The latest value seen for a registered Text widget, or ``None`` if none was seen."""
    with _registry_lock:
        return _texts.get(text_model_id)


def unregister_decision(decision: object) -> None:
    """Drop every button route that leads to ``decision``."""
    with _registry_lock:
        for key in [k for k, (d, _) in _buttons.items() if d is decision]:
            del _buttons[key]


def unregister_text(text_model_id: str) -> None:
    """Stop tracking a Text widget."""
    with _registry_lock:
        _texts.pop(text_model_id, None)


def pending_buttons() -> list[str]:
    """Model ids of the buttons currently routed (for tests and diagnostics)."""
    with _registry_lock:
        return list(_buttons)


def resolve_by_button(model_id: str) -> bool:
    """Resolve the decision behind a registered button; ``False`` if unknown or already decided."""
    with _registry_lock:
        entry = _buttons.get(model_id)
        if entry is None:
            # A widget's comm_open reaches the front-end as it is built, before its button is
            # registered: a click that fast is kept and applied by register_button.
            _early_clicks.append(model_id)
            return False
    _, resolve = entry
    return resolve()


def is_click(data: object) -> bool:
    """Whether a comm message's ``data`` is a widget button click."""
    return (
        isinstance(data, dict)
        and data.get("method") == "custom"
        and isinstance(data.get("content"), dict)
        and data["content"].get("event") == "click"
    )


def is_submit(data: object) -> bool:
    """Whether a comm message's ``data`` is Enter pressed in a Text widget."""
    return (
        isinstance(data, dict)
        and data.get("method") == "custom"
        and isinstance(data.get("content"), dict)
        and data["content"].get("event") == "submit"
    )


#: How long an Enter waits before deciding. The front-end sends Enter's ``submit`` and the box's
#: value (its ``change`` event) as two messages in either order; deciding a moment later reads the
#: whole reason whichever came first.
SUBMIT_GRACE_S = 0.3


def submit_soon(model_id: str, delay: float = SUBMIT_GRACE_S) -> None:
    """Resolve the decision routed from ``model_id`` after ``delay`` seconds (any thread)."""
    timer = threading.Timer(delay, resolve_by_button, args=(model_id,))
    timer.daemon = True
    timer.start()


_actions: dict[str, Callable[[], object]] = {}


def register_action(button_model_id: str, action: Callable[[], object]) -> None:
    """Run ``action`` (thread-safe, quick) when the kernel's fast path sees a click of this button:
    Stop must act while the model's code blocks the main thread, where the click's normal route waits."""
    with _registry_lock:
        _actions[button_model_id] = action


def unregister_action(button_model_id: str) -> None:
    """Forget a button's action (unknown ids are ignored)."""
    with _registry_lock:
        _actions.pop(button_model_id, None)


def _run_action(comm_id: str) -> bool:
    with _registry_lock:
        action = _actions.get(comm_id)
    if action is None:
        return False
    action()
    return True


CommHandler = Callable[[dict[str, object], Union[str, None]], object]
"""Takes a comm message's ``data`` and the sending client's session."""

_comm_handlers: dict[str, CommHandler] = {}
_close_handlers: dict[str, Callable[[], object]] = {}


def register_comm_handler(comm_id: str, handler: CommHandler, on_close: Callable[[], object] | None = None) -> None:
    """Give every message of the comm ``comm_id`` to ``handler(data, session)`` on the fast path
    too (thread-safe, quick): the notebook bridge's replies must arrive while the agent cell still
    runs, and its hello says which page (client session) sent it. ``on_close``: called when the
    front-end closes the comm (one without the comm's target closes it at once)."""
    with _registry_lock:
        _comm_handlers[comm_id] = handler
        if on_close is not None:
            _close_handlers[comm_id] = on_close


def unregister_comm_handler(comm_id: str) -> None:
    """Forget a comm's handlers (unknown ids are ignored)."""
    with _registry_lock:
        _comm_handlers.pop(comm_id, None)
        _close_handlers.pop(comm_id, None)


def handle_comm_close(comm_id: object) -> bool:
    """The kernel fast path for a ``comm_close`` from the front-end: ``True`` if a registered
    comm's ``on_close`` ran (the message still takes its normal route afterwards)."""
    if not isinstance(comm_id, str):
        return False
    with _registry_lock:
        on_close = _close_handlers.get(comm_id)
    if on_close is None:
        return False
    on_close()
    return True


def handle_comm_msg(comm_id: object, data: object, session: str | None = None) -> bool:
    """The kernel fast path: note Text edits, resolve clicks of registered buttons, hand the
    bridge's messages to its handler (with ``session``, the sending client's).

    Tiny and non-blocking; returns ``True`` if a decision was resolved. The message still takes
    its normal route afterwards (the widget's own handler then finds the decision already made).
    """
    if not isinstance(comm_id, str) or not isinstance(data, dict):
        return False
    with _registry_lock:
        handler = _comm_handlers.get(comm_id)
    if handler is not None:
        handler(data, session)
        return True
    if data.get("method") == "update":
        state = data.get("state")
        if isinstance(state, dict) and "value" in state:
            with _registry_lock:
                if comm_id in _texts:
                    _texts[comm_id] = str(state["value"])
        return False
    if is_click(data):
        return _run_action(comm_id) or resolve_by_button(comm_id)
    if is_submit(data) and comm_id in pending_buttons():
        submit_soon(comm_id)
    return False
