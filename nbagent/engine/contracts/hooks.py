"""Hooks: the user's code called at fixed points of the loop (Claude Agent SDK style).

``Agent(hooks={"pre_tool_use": fn, ...})`` takes a :class:`HookMap`, a TypedDict whose keys are the
hook names and whose values have the hook's signature, so a type checker catches a misspelt name or
a hook with the wrong parameters; ``Hooks.from_mapping`` checks the same at run time. Each hook may
be a plain function or a coroutine function. A ``pre_tool_use`` hook sees the call (:class:`ToolCall`) and
answers ``None`` (no opinion: the permission gate decides), :class:`~.permissions.Allow` (run
without asking; the deny list and the permission mode still hold), :class:`~.permissions.Deny`
(not run, the reason goes to the model and the audit log) or :class:`RewriteInput` (run with new
input, validated again). A hook that raises never crashes the loop: for ``pre_tool_use`` it is a
denial that shows the error; for the others it becomes a warning notice.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from typing import Awaitable, Callable, Mapping, TypedDict, Union, cast

from .abort import Aborted
from .errors import NbAgentError
from .events import Done, ToolResult
from .json_types import JSONValue
from .messages import MessageParam
from .permissions import Allow, Deny

HOOK_NAMES = ("pre_tool_use", "post_tool_use", "pre_request", "pre_compact", "on_done")
"""``pre_tool_use(call)``, ``post_tool_use(call, result)``, ``pre_request(turn, request_no)``,
``pre_compact(turn, hidden_messages)``, ``on_done(done)``."""

Hook = Callable[..., object]
"""Any one hook, whatever its name: what :class:`Hooks` stores and calls (its signature depends on
the name; :class:`HookMap` spells each one out)."""


class UnknownHookError(NbAgentError, ValueError):
    """A hooks mapping names an event nbagent does not have."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(f"unknown hook(s) {', '.join(names)}; hooks are: {', '.join(HOOK_NAMES)}")


@dataclass(frozen=True)
class ToolCall:
    """What a ``pre_tool_use`` / ``post_tool_use`` hook sees of one tool call."""

    tool_use_id: str
    name: str
    input: Mapping[str, JSONValue]
    read_only: bool
    turn: int


@dataclass(frozen=True)
class RewriteInput:
    """A ``pre_tool_use`` answer: run the tool with ``input`` instead (validated like the model's)."""

    input: Mapping[str, JSONValue]


PreToolDecision = Union[None, Allow, Deny, RewriteInput]

# The hooks' signatures. A hook may be sync or async (an awaitable result is awaited); what an
# observing hook returns is ignored, hence ``object``.
PreToolUseHook = Callable[[ToolCall], Union[PreToolDecision, Awaitable[PreToolDecision]]]
"""``pre_tool_use(call)``: before the permission gate; answers None, Allow, Deny or RewriteInput."""
PostToolUseHook = Callable[[ToolCall, ToolResult], object]
"""``post_tool_use(call, result)``: after the tool ran; ``call.input`` is the input it ran with."""
PreRequestHook = Callable[[int, int], object]
"""``pre_request(turn, request_no)``: before each API request (``request_no`` counts the session's)."""
PreCompactHook = Callable[[int, list[MessageParam]], object]
"""``pre_compact(turn, hidden_messages)``: before a compaction summarises ``hidden_messages``."""
OnDoneHook = Callable[[Done], object]
"""``on_done(done)``: after a run ended, with its ``Done`` event."""


class HookMap(TypedDict, total=False):
    """The hooks an Agent takes, by name: ``Agent(hooks={"pre_tool_use": guard})``. Every key is optional."""

    pre_tool_use: PreToolUseHook
    post_tool_use: PostToolUseHook
    pre_request: PreRequestHook
    pre_compact: PreCompactHook
    on_done: OnDoneHook


class HookFailed(NbAgentError):
    """A hook raised or answered something it may not; the message names the hook and the error."""


class HookInterrupted(Aborted):
    """A ``KeyboardInterrupt`` (Ctrl-C, the kernel's interrupt) arrived while a hook ran: the run is
    aborted like with the Stop button, and its history is left valid."""

    def __init__(self, name: str) -> None:
        NbAgentError.__init__(self, f"the {name} hook was interrupted (KeyboardInterrupt)")


@dataclass(frozen=True)
class Hooks:
    """The session's hooks by event name (empty: no hooks). Build it with :meth:`from_mapping`."""

    by_name: Mapping[str, Hook] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, hooks: "HookMap | Mapping[str, Hook] | Hooks | None") -> "Hooks":
        """Check names and callables; ``None`` gives no hooks."""
        if isinstance(hooks, Hooks):
            return hooks
        # A HookMap is a plain dict at run time; its values are checked below like any mapping's.
        hooks = dict(cast("Mapping[str, Hook]", hooks or {}))
        unknown = sorted(set(hooks) - set(HOOK_NAMES))
        if unknown:
            raise UnknownHookError(unknown)
        for name, fn in hooks.items():
            if not callable(fn):
                raise TypeError(f"hook {name!r} must be callable, got {type(fn).__name__}")
        return cls(by_name=hooks)

    def __bool__(self) -> bool:
        return bool(self.by_name)

    async def call(self, name: str, *args: object) -> object:
        """Call hook ``name`` (sync or async); its failure raises :class:`HookFailed`. No hook: None."""
        fn = self.by_name.get(name)
        if fn is None:
            return None
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:  # noqa: BLE001 - the user's code: report, never crash the loop
            raise HookFailed(f"the {name} hook failed ({type(exc).__name__}: {exc})") from exc
        except SystemExit as exc:  # sys.exit() in a hook is a bug in the hook, not a way to end the process
            raise HookFailed(f"the {name} hook raised SystemExit({exc.code!r}); a hook cannot end the process") from exc
        except KeyboardInterrupt as exc:  # Ctrl-C while the hook ran: the user's abort of the run
            raise HookInterrupted(name) from exc
        return result

    async def notify(self, name: str, *args: object) -> str | None:
        """Call an observing hook; returns a warning message if it failed (None: fine or absent)."""
        if name not in self.by_name:  # the usual case, on every request and tool call
            return None
        try:
            await self.call(name, *args)
        except HookFailed as exc:
            return f"{exc}; the run continues."
        except HookInterrupted as exc:
            if name == "on_done":  # the run is over: nothing is left to abort
                return f"{exc}."
            raise
        return None

    async def pre_tool_use(self, call: ToolCall) -> PreToolDecision:
        """The ``pre_tool_use`` answer for ``call``; a failure or a wrong answer is a :class:`Deny`."""
        if "pre_tool_use" not in self.by_name:
            return None
        try:
            answer = await self.call("pre_tool_use", call)
        except HookFailed as exc:
            return Deny(f"{exc}; not run")
        if answer is None or isinstance(answer, (Allow, Deny, RewriteInput)):
            return answer
        return Deny(f"the pre_tool_use hook returned {answer!r}, not None, Allow, Deny or RewriteInput; not run")

    async def post_tool_use(self, call: ToolCall, tool_input: Mapping[str, JSONValue], result: object) -> str | None:
        """Tell the ``post_tool_use`` hook that ``call`` ran with ``tool_input`` (maybe rewritten);
        a warning message if the hook failed."""
        if "post_tool_use" not in self.by_name:
            return None
        return await self.notify("post_tool_use", replace(call, input=tool_input), result)


NO_HOOKS = Hooks()

__all__ = ["HOOK_NAMES", "Hook", "HookMap", "Hooks", "NO_HOOKS", "ToolCall", "RewriteInput", "PreToolDecision",
           "PreToolUseHook", "PostToolUseHook", "PreRequestHook", "PreCompactHook", "OnDoneHook",
           "HookFailed", "HookInterrupted", "UnknownHookError"]
