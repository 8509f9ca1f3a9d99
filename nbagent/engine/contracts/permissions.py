"""Who may run which tool: decisions, the ``can_use_tool`` callback, the session gate, the audit log.

The default policy (query-engine spec): read-only tools run without asking (except a read of a file
that holds credentials, :mod:`.credentials`), everything else asks the user through
``can_use_tool``. With no one to ask (a headless script) a non-read-only tool is denied with a
message that says how to permit it. "Allow always" lives in one :class:`PermissionGate` — one
session — which tells the session (``on_always``) so that the task folder keeps it: a resumed
session does not ask again about a tool the user already allowed.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Awaitable, Callable, Iterable, Literal, Mapping, Protocol, Union, runtime_checkable

from .config import DEFAULT_PERMISSION_MODE
from .credentials import secret_read_reason, secret_write_reason
from .errors import NbAgentError
from .events import ApiRequestFailed, ApiRequestStarted, Event, PermissionDenied, RequestCompleted
from .json_types import JSONValue
from .protected import MAX_WRITTEN_CHECKED, protected_reason, resolve_tool_path, written_paths
from .tool_api import ToolInput, ToolLike


@dataclass(frozen=True)
class Allow:
    """Run the tool; with ``always`` the gate stops asking about this tool for the rest of the session."""

    always: bool = False


@dataclass(frozen=True)
class Deny:
    """Do not run the tool; ``reason`` is shown to the user and sent to the model.

    ``ends_turn``, when set, also ends the turn there, with that line as the run's error: for a
    question nobody could answer (a prompt no page shows), where going on would send the model more
    requests nobody sees, and let it ask again. The call still gets its ``tool_result``.
    """

    reason: str
    ends_turn: str = ""


class TurnEnded(NbAgentError):
    """A permission answer ended the turn (:attr:`Deny.ends_turn`): the message is the run's error."""


PermissionDecision = Union[Allow, Deny]


@dataclass(frozen=True)
class PermissionRequest:
    """Everything a ``can_use_tool`` callback (or a prompt widget) needs to decide.

    ``reason_asked`` says why the user is asked at all (e.g. "write_file is not read-only" or
    "path outside cwd").
    """

    tool_use_id: str
    tool_name: str
    input: Mapping[str, JSONValue]
    read_only: bool
    turn: int
    reason_asked: str


CanUseTool = Callable[[str, ToolInput, PermissionRequest], Awaitable[PermissionDecision]]
"""``async (tool_name, tool_input, request) -> Allow | Deny``: the user's (or a policy's) answer."""


FailureChoice = Literal["retry", "cancel"]
OnApiFailure = Callable[[ApiRequestFailed], Awaitable[FailureChoice]]


@runtime_checkable
class Asker(Protocol):
    """Who the loop asks while a run is in progress: the notebook's widgets, a console, a policy.

    ``ask_permission`` decides a tool call that is neither read-only nor allowed;
    ``ask_api_failure`` decides what happens after a request failed for good. Both may wait for
    a person; an abort of the run cancels the wait.
    """

    async def ask_permission(self, tool_name: str, tool_input: ToolInput,
                             request: PermissionRequest) -> PermissionDecision: ...

    async def ask_api_failure(self, event: ApiRequestFailed) -> FailureChoice: ...


class CallbackAsker:
    """An :class:`Asker` from two plain callbacks (scripts); a missing one answers as headless:
    no ``can_use_tool`` → the gate denies with a reason, no ``on_api_failure`` → cancel."""

    def __init__(self, can_use_tool: CanUseTool | None = None, on_api_failure: OnApiFailure | None = None) -> None:
        self.can_use_tool = can_use_tool
        self.on_api_failure = on_api_failure

    async def ask_permission(self, tool_name: str, tool_input: ToolInput,
                             request: PermissionRequest) -> PermissionDecision:
        if self.can_use_tool is None:
            return Deny(f"No one to approve {tool_name!r}.")
        return await self.can_use_tool(tool_name, tool_input, request)

    async def ask_api_failure(self, event: ApiRequestFailed) -> FailureChoice:
        if self.on_api_failure is None:
            return "cancel"
        return "retry" if await self.on_api_failure(event) == "retry" else "cancel"


def permission_callback(asker: Asker | None) -> CanUseTool | None:
    """What the gate calls for ``asker`` (None: no one to ask, so the gate denies with a reason)."""
    if asker is None or (isinstance(asker, CallbackAsker) and asker.can_use_tool is None):
        return None
    return asker.ask_permission


async def cancel_on_failure(event: ApiRequestFailed) -> FailureChoice:
    """The headless answer to a failed request: give up."""
    return "cancel"


@dataclass(frozen=True)
class PermissionDenial:
    """One denied tool call, kept for audit. ``ts`` is milliseconds since the epoch."""

    tool: str
    input: object
    reason: str
    ts: int
    tool_use_id: str = ""
    turn: int = 0


def denials_in(events: Iterable[Event]) -> list[PermissionDenial]:
    """The denials an event log records: a resumed session's audit log (an Agent resumed from its
    task folder, a notebook's replayed session) keeps the ones its runs recorded. The log has no
    time of its own for a denial: each gets its turn and the time of the request that asked for the
    tool (0 when none completed)."""
    found: list[PermissionDenial] = []
    turn = ts = 0
    for event in events:
        if isinstance(event, ApiRequestStarted):
            turn = event.turn
        elif isinstance(event, RequestCompleted) and event.record is not None:
            turn, ts = event.record.turn, event.record.ts
        elif isinstance(event, PermissionDenied):
            found.append(PermissionDenial(tool=event.name, input=event.input, reason=event.reason, ts=ts,
                                          tool_use_id=event.tool_use_id, turn=turn))
    return found


async def allow_all(tool_name: str, tool_input: ToolInput, request: PermissionRequest) -> PermissionDecision:
    """A ``can_use_tool`` that allows every call (trusted scripts, tests)."""
    return Allow()


async def deny_all(tool_name: str, tool_input: ToolInput, request: PermissionRequest) -> PermissionDecision:
    """A ``can_use_tool`` that denies every call that would otherwise need asking."""
    return Deny(f"{tool_name} was denied by the deny_all policy")


PLAN_MODE_PROMPT = (
    "You are in plan mode: only read-only tools run; any other tool call is denied. Investigate, "
    "then answer with a step-by-step plan for the user to approve instead of making changes."
)
PLAN_MODE_OFF_PROMPT = (
    "Plan mode is over: tools run again as the user's permission settings allow (some may ask first)."
)


def _inside(path: object, cwd: Path | None) -> bool:
    if not isinstance(path, str) or not path or cwd is None:
        return False
    try:  # resolved as the tools resolve it (``~`` too), so the check is about the file they write
        resolve_tool_path(path, cwd).relative_to(cwd.resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def decide_by_mode(mode: str, tool: ToolLike, tool_input: Mapping[str, JSONValue] | None,
                   cwd: Path | None, task_dir: Path | None = None) -> PermissionDecision | None:
    """What the permission ``mode`` alone decides for a call (None: the allow list / the user decide).

    Read-only tools run in every mode, except a read of a file that holds credentials
    (:mod:`.credentials`), which asks in every mode but ``bypass``. ``plan`` denies every other
    tool; ``bypass`` allows it; ``accept_edits`` allows a file-editing tool (``edits_files``) whose
    ``path`` is inside ``cwd`` and is an ordinary file of the project (:mod:`.protected`: the others
    always ask).
    """
    if getattr(tool, "read_only", False):
        if mode != "bypass" and secret_read_reason(tool, tool_input, cwd) is not None:
            return None  # the user decides, each time (PermissionGate.protected_reason)
        return Allow()
    if mode == "plan":
        return Deny(f"plan mode: {tool.name} is not read-only, so it does not run while planning "
                    "(%agent permissions default, or permission_mode='default', to let it run)")
    if mode == "bypass":
        return Allow()
    path = (tool_input or {}).get("path")
    if mode == "accept_edits" and getattr(tool, "edits_files", False) and _inside(path, cwd) \
            and protected_reason(path, cwd, task_dir) is None and secret_write_reason(path, cwd) is None:
        return Allow()
    return None


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class PermissionGate:
    """The session's permission policy: static allow/deny lists, remembered "always", denial log.

    ``allow`` / ``deny`` are tool names. ``deny`` wins over everything, including read-only tools,
    ``allow`` and the permission ``mode`` (see :func:`decide_by_mode`); the mode decides before
    ``allow`` and "always" (``plan`` denies even an allowed tool). One gate belongs to one session:
``always`` seeds the answers a resumed session kept, ``on_always(name)`` hears each new one.
    """

    def __init__(
        self,
        can_use_tool: CanUseTool | None = None,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        *,
        always: Iterable[str] = (),
        on_always: Callable[[str], None] | None = None,
        denials: Iterable[PermissionDenial] = (),
    ) -> None:
        self.can_use_tool = can_use_tool
        self.allow: frozenset[str] = frozenset(allow)
        self.deny: frozenset[str] = frozenset(deny)
        self.mode: str = DEFAULT_PERMISSION_MODE
        self.cwd: Path | None = None
        self.task_dir: Path | None = None
        """The session's task folder: writes into it always ask (see :mod:`.protected`)."""
        self._always: set[str] = set(always)
        self._on_always = on_always
        self._denials: list[PermissionDenial] = list(denials)

    # -- what the session knows --------------------------------------------------------------

    @property
    def denials(self) -> tuple[PermissionDenial, ...]:
        """Every denial so far, oldest first (a snapshot: later denials do not appear in it)."""
        return tuple(self._denials)

    @property
    def allowed_always(self) -> frozenset[str]:
        """Tools the user allowed "always" in this session."""
        return frozenset(self._always)

    def allow_always(self, tool_name: str) -> None:
        """Stop asking about ``tool_name`` for the rest of this session (as an "Allow always" click)."""
        if tool_name not in self._always:
            self._always.add(tool_name)
            if self._on_always is not None:
                self._on_always(tool_name)

    # -- policy -------------------------------------------------------------------------------

    def protected_reason(self, tool: ToolLike, tool_input: Mapping[str, JSONValue] | None) -> str | None:
        """Why this call always asks: it writes a file that is not an ordinary file of the project,
        or reads one that holds credentials (None: it does neither)."""
        if self.mode == "bypass":
            return None
        if getattr(tool, "read_only", False):
            return secret_read_reason(tool, tool_input, self.cwd)
        # A tool's own reason to ask each time, where no path tells it (notebook_edit's Markdown cell
        # that makes the page fetch from the web).
        own = getattr(tool, "always_asks", None)
        if callable(own) and isinstance(why := own(tool_input or {}), str):
            return why
        written = written_paths(tool, tool_input)
        if written is None:
            return f"the call names more than {MAX_WRITTEN_CHECKED} files, more than are checked"
        return next((why for path in written
                     if (why := protected_reason(path, self.cwd, self.task_dir) or secret_write_reason(path, self.cwd))),
                    None)

    def denied(self, name: str) -> Deny | None:
        """The deny list's answer for tool ``name`` (None: not on it). It holds in every mode."""
        if name in self.deny:
            return Deny(f"{name} is denied by this session's configuration (deny={sorted(self.deny)!r})")
        return None

    def _decide_without_asking(self, tool: ToolLike, tool_input: Mapping[str, JSONValue] | None = None,
                               *, preapproved: bool = False) -> PermissionDecision | None:
        name = tool.name
        if (denied := self.denied(name)) is not None:
            return denied
        mode_decision = decide_by_mode(self.mode, tool, tool_input, self.cwd, self.task_dir)
        if mode_decision is not None:
            return mode_decision
        protected = self.protected_reason(tool, tool_input)
        if protected is not None:
            # Neither the allow list, "always" nor a hook's Allow covers it: the user decides each time.
            if self.can_use_tool is None:
                return Deny(f"Not run: {protected}, and this session has no way to ask the user. Pass a "
                            "can_use_tool=... that allows it, or use permission_mode='bypass', to permit it.")
            return None
        if preapproved or name in self.allow or name in self._always:
            return Allow()
        if self.can_use_tool is None:
            return Deny(
                f"No one to approve {name!r}: it is not read-only and this session has no way to ask "
                f"the user. Pass allow=[{name!r}] or can_use_tool=... to permit it."
            )
        return None

    def allows_at_once(self, tool: ToolLike, tool_input: Mapping[str, JSONValue]) -> bool:
        """Whether :meth:`check` would allow this call by the rules alone (no one asked, nothing to record)."""
        return isinstance(self._decide_without_asking(tool, tool_input), Allow)

    def will_ask(self, tool: ToolLike, tool_input: Mapping[str, JSONValue] | None = None, *,
                 preapproved: bool = False) -> bool:
        """Whether :meth:`check` would call ``can_use_tool`` for this tool (emit ``PermissionAsked`` first)."""
        return self._decide_without_asking(tool, tool_input, preapproved=preapproved) is None

    async def check(
        self,
        tool: ToolLike,
        tool_use_id: str,
        tool_input: Mapping[str, JSONValue],
        turn: int,
        *,
        reason: str | None = None,
        preapproved: bool = False,
    ) -> PermissionDecision:
        """Decide whether ``tool`` may run with ``tool_input``; every denial is recorded.

        ``reason`` overrides the ``reason_asked`` shown to the user; ``preapproved`` (a hook said
        allow) skips asking, but the deny list and the permission mode still hold. A
        ``can_use_tool`` that raises, or returns something other than Allow/Deny, counts as a
        denial: a broken callback must not crash the loop, and must not silently allow.
        ``CancelledError`` (an abort while the user is being asked) propagates.
        """
        decision = self._decide_without_asking(tool, tool_input, preapproved=preapproved)
        if decision is None:
            reason = self.protected_reason(tool, tool_input) or reason
            decision = await self._ask(tool, tool_use_id, tool_input, turn, reason)
        if isinstance(decision, Deny):
            self.record_denial(tool.name, tool_input, decision.reason, tool_use_id=tool_use_id, turn=turn)
        elif decision.always:
            self.allow_always(tool.name)
        return decision

    async def _ask(
        self, tool: ToolLike, tool_use_id: str, tool_input: Mapping[str, JSONValue], turn: int, reason: str | None
    ) -> PermissionDecision:
        assert self.can_use_tool is not None
        read_only = bool(getattr(tool, "read_only", False))
        request = PermissionRequest(
            tool_use_id=tool_use_id,
            tool_name=tool.name,
            input=dict(tool_input),
            read_only=read_only,
            turn=turn,
            reason_asked=reason or f"{tool.name} is not read-only",
        )
        try:
            # A copy, so a callback that edits its argument cannot change what the tool runs.
            answer: object = self.can_use_tool(tool.name, dict(tool_input), request)
            if inspect.isawaitable(answer):  # tolerate plain functions as well as coroutines
                answer = await answer
        except Exception as exc:  # noqa: BLE001 - any callback failure is a denial, never a crash
            return Deny(f"The permission check for {tool.name!r} failed ({type(exc).__name__}: {exc}); not run.")
        if isinstance(answer, (Allow, Deny)):
            return answer
        return Deny(f"The permission check for {tool.name!r} returned {answer!r}, not Allow or Deny; not run.")

    def record_denial(
        self, tool: str, tool_input: object, reason: str, *, tool_use_id: str = "", turn: int = 0
    ) -> PermissionDenial:
        """Add a denial to the audit log (the loop may record denials decided elsewhere too)."""
        # Copy a mapping so the audit record does not change if the caller's dict does.
        recorded = dict(tool_input) if isinstance(tool_input, Mapping) else tool_input
        denial = PermissionDenial(
            tool=tool, input=recorded, reason=reason, ts=_now_ms(), tool_use_id=tool_use_id, turn=turn
        )
        self._denials.append(denial)
        return denial


__all__ = [
    "Asker", "CallbackAsker", "FailureChoice", "OnApiFailure", "cancel_on_failure", "permission_callback",
    "Allow", "Deny", "TurnEnded", "PermissionDecision", "PermissionRequest", "CanUseTool", "PermissionDenial",
    "PermissionGate", "allow_all", "deny_all", "denials_in", "decide_by_mode", "PLAN_MODE_PROMPT", "PLAN_MODE_OFF_PROMPT",
]
