"""Running one tool call for the loop: validate, permit, run, and always answer.

Whatever the model sent (an unknown tool, a malformed input, a tool that raises), the caller gets
exactly one ``tool_result`` block appended to ``answered`` for the call, and events describing what
happened. Only an abort (:class:`Aborted`) or a cancellation leaves this function early; the
block for the interrupted call is appended first, so the history can still be repaired.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Mapping

from ..contracts.abort import Aborted, AbortGuard
from ..contracts.config import DEFAULT_TOOL_CAPTURE_LIMIT
from ..contracts.events import Event, Notice, PermissionAsked, PermissionDenied, ToolResult, ToolUse
from ..contracts.hooks import NO_HOOKS, Hooks, RewriteInput, ToolCall
from ..contracts.messages import ToolResultBlockParam, ToolUseBlockParam, error_result
from ..contracts.permissions import Allow, Deny, PermissionGate
from ..contracts.protected import resolve_tool_path
from ..contracts.tool_api import ToolContext, ToolInputError, ToolLike, ToolOutput, limit_output, truncate_middle
from .sanitize import Sanitizer, TooDeepError, replaced_notice

NOT_RUN = "Not run: the run was stopped before this tool call."
NO_SECRETS = Sanitizer()  # still replaces invalid characters
INTERRUPTED = "Interrupted: the user stopped the run while this tool was running."


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


async def run_tool_call(
    use: ToolUseBlockParam,
    *,
    tools: Mapping[str, ToolLike],
    gate: PermissionGate,
    guard: AbortGuard,
    make_context: Callable[[str], ToolContext],
    turn: int,
    output_limit: int,
    answered: list[ToolResultBlockParam],
    hooks: Hooks = NO_HOOKS,
    sanitizer: Sanitizer = NO_SECRETS,
    capture_limit: int = DEFAULT_TOOL_CAPTURE_LIMIT,
) -> AsyncIterator[Event]:
    """Validate, permit and run one ``tool_use`` block; appends its result block to ``answered``.

    ``hooks`` run around the call (``pre_tool_use`` before the gate, ``post_tool_use`` after the
    result). Unknown tools, invalid input, denials (by a hook, the mode or the user) and tool
    failures become ``is_error`` results the model can act on; nothing but :class:`Aborted` / ``CancelledError`` escapes.
    """
    uid = str(use.get("id", ""))
    raw_name, raw = use.get("name", ""), use.get("input")
    name = raw_name if isinstance(raw_name, str) else ""
    yield ToolUse(tool_use_id=uid, name=name, input=raw)

    def fail(message: str) -> ToolResult:
        answered.append(error_result(uid, message))
        return ToolResult(tool_use_id=uid, name=name, content=message, is_error=True)

    started = time.perf_counter()
    tool = tools.get(name)
    if tool is None:
        shown = name if isinstance(raw_name, str) else _short(raw_name)
        yield fail(f"Unknown tool {shown!r}. Available tools: {', '.join(sorted(tools)) or 'none'}.")
        return
    if isinstance(raw, (dict, Mapping)) and "_unparsed_input" in raw:
        yield fail(f"Your output was cut (max_tokens) before this {name} call's input was complete, so it "
                   "was not run. Send the call again, shorter or split into smaller steps.")
        return
    try:
        tool_input = await _validated(tool, raw, guard)
    except (Aborted, asyncio.CancelledError):
        answered.append(error_result(uid, NOT_RUN))
        raise
    except ToolInputError as exc:
        yield fail(str(exc))
        return
    except Exception as exc:  # a validator that raises something else is still the model's bad input
        yield fail(f"Invalid input for tool {name!r}: {type(exc).__name__}: {exc}")
        return
    tool_input = with_resolved_path(tool, tool_input, gate.cwd)
    call = ToolCall(tool_use_id=uid, name=name, input=tool_input, read_only=bool(getattr(tool, "read_only", False)),
                    turn=turn)
    # An abort pressed before this call answers it "not run" on either path (the slow one checks in its armed regions).
    permitted = [] if guard.is_set else _permitted_at_once(tool, call, gate, hooks)
    if not permitted:
        async for event in _permit(tool, call, gate=gate, guard=guard, hooks=hooks, permitted=permitted,
                                   answered=answered):
            yield event
        if not permitted:
            return
    tool_input = permitted[0]
    try:
        with guard.armed():
            out = await tool.run(tool_input, make_context(uid))
    except (Aborted, asyncio.CancelledError):  # the Stop button, or the kernel's interrupt
        answered.append(error_result(uid, INTERRUPTED))
        raise
    except Exception as exc:  # a tool bug must not break the loop; the model hears about it
        out = ToolOutput(content=f"{name} failed: {type(exc).__name__}: {exc}", is_error=True)
    out, replaced = _sanitized(_normalised(out, name), sanitizer, capture_limit)
    if replaced:
        yield Notice(level="warning", message=replaced_notice(replaced, f"the output of {name}"))
    out = limit_output(out, output_limit)
    content: Any = out.content
    display = out.display  # bounded by _sanitized (or the content, which is)
    block: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": uid, "content": content}
    if out.is_error:
        block["is_error"] = True
    answered.append(block)
    text = content if isinstance(content, str) else "\n".join(
        str(b.get("text", "")) for b in content if isinstance(b, (dict, Mapping)))
    result = ToolResult(tool_use_id=uid, name=name, content=text, is_error=bool(out.is_error),
                        duration_s=time.perf_counter() - started, display=display)
    yield result
    warning = await hooks.post_tool_use(call, tool_input, result)
    if warning:
        yield Notice(level="warning", message=warning)


async def _validated(tool: ToolLike, raw: Any, guard: AbortGuard) -> dict[str, Any]:
    """``tool.validate(raw)``; in a worker thread for a tool whose schema comes from elsewhere
    (``validates_slowly``, MCP): a catastrophic regex then spins there, and an abort is not delayed."""
    if not getattr(tool, "validates_slowly", False):
        return tool.validate(raw)
    with guard.armed():
        return await asyncio.to_thread(tool.validate, raw)


def with_resolved_path(tool: ToolLike, tool_input: dict[str, Any], cwd: Path | None) -> dict[str, Any]:
    """``tool_input`` with its ``path`` resolved once (``~``, ``..``, symlinks), for a tool that
    declares ``resolves_path``: the hooks, the permission check and the tool then see the same
    file (a hook's prefix guard on ``sub/../secrets`` would otherwise see what is not written)."""
    raw = tool_input.get("path")
    if not getattr(tool, "resolves_path", False) or not isinstance(raw, str) or not raw or cwd is None:
        return tool_input
    try:
        return {**tool_input, "path": str(resolve_tool_path(raw, cwd))}
    except (OSError, RuntimeError, ValueError):  # the tool refuses it with its own message
        return tool_input


def _permitted_at_once(tool: ToolLike, call: ToolCall, gate: PermissionGate, hooks: Hooks) -> list[dict[str, Any]]:
    """``[input]`` when the call may run with no hook to hear and no one to ask (the gate's rules
    allow it: most calls), else ``[]`` for :func:`_permit` to decide, with its events."""
    if "pre_tool_use" in hooks.by_name:
        return []
    tool_input = dict(call.input)
    return [tool_input] if gate.allows_at_once(tool, tool_input) else []


async def _permit(tool: ToolLike, call: ToolCall, *, gate: PermissionGate, guard: AbortGuard, hooks: Hooks,
                  permitted: list[dict[str, Any]], answered: list[ToolResultBlockParam]) -> AsyncIterator[Event]:
    """The hook, then the gate: appends the input to run to ``permitted``, or answers a denial."""
    uid, name, tool_input = call.tool_use_id, call.name, dict(call.input)
    try:
        with guard.armed():
            hook = await hooks.pre_tool_use(call)
    except Aborted:
        answered.append(error_result(uid, NOT_RUN))
        raise
    if isinstance(hook, RewriteInput):
        try:
            tool_input = await _validated(tool, dict(hook.input), guard)
        except (Aborted, asyncio.CancelledError):
            answered.append(error_result(uid, NOT_RUN))
            raise
        except Exception as exc:  # noqa: BLE001 - a bad rewrite is a denial, like a failing hook
            hook = Deny(f"the pre_tool_use hook rewrote the input into an invalid one ({exc}); not run")
    if isinstance(hook, Deny):
        gate.record_denial(name, tool_input, hook.reason, tool_use_id=uid, turn=call.turn)
        yield PermissionDenied(tool_use_id=uid, name=name, input=tool_input, reason=hook.reason)
        message = f"A pre_tool_use hook denied this {name} call: {hook.reason}"
        answered.append(error_result(uid, message))
        yield ToolResult(tool_use_id=uid, name=name, content=message, is_error=True)
        return
    preapproved = isinstance(hook, Allow)
    asked = gate.will_ask(tool, tool_input, preapproved=preapproved)  # a protected file asks even then
    if asked:
        yield PermissionAsked(tool_use_id=uid, name=name, input=tool_input)
    try:
        with guard.armed():
            decision = await gate.check(tool, uid, tool_input, call.turn, preapproved=preapproved)
    except Aborted:
        answered.append(error_result(uid, NOT_RUN))
        raise
    if isinstance(decision, Deny):
        yield PermissionDenied(tool_use_id=uid, name=name, input=tool_input, reason=decision.reason)
        # "The user" only when a person was asked: a mode, a hook or a headless run is not a user.
        who = f"The user denied this {name} call" if asked else f"This {name} call was not allowed"
        message = who + (f": {decision.reason}" if decision.reason else ".")
        answered.append(error_result(uid, message))
        yield ToolResult(tool_use_id=uid, name=name, content=message, is_error=True)
        return
    permitted.append(tool_input)


def _normalised(out: Any, name: str) -> ToolOutput:
    """What a tool returned as a :class:`ToolOutput` whose content is text or content blocks."""
    if not isinstance(out, ToolOutput):
        return ToolOutput(content=f"{name} returned {type(out).__name__}, not a ToolOutput", is_error=True)
    if not isinstance(out.content, (str, list)):
        return ToolOutput(content=str(out.content), is_error=out.is_error, display=out.display)
    return out


def _sanitized(out: ToolOutput, sanitizer: Sanitizer, capture_limit: int) -> tuple[ToolOutput, int]:
    """The output as it may enter history and disk: cut to ``capture_limit`` (a tool or server that
    does not bound what it returns must not fill memory and the task folder), then secrets
    redacted and invalid characters replaced; with the count of the latter."""
    content: Any = out.content
    if isinstance(content, str):
        content = truncate_middle(content, capture_limit)
    display, n_display = (sanitizer.text(truncate_middle(out.display, capture_limit)) if out.display is not None
                          else (None, 0))
    try:
        content, n = sanitizer.value(content)
    except TooDeepError as exc:
        content, n = f"The tool's result was {exc}; not kept.", 0
        return ToolOutput(content=content, is_error=True, display=display), n_display
    return ToolOutput(content=content, is_error=out.is_error, display=display), n + n_display
