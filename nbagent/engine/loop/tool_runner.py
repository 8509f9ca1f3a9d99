"""Running one tool call for the loop: validate, permit, run, and always answer.

Whatever the model sent (an unknown tool, a malformed input, a tool that raises), the caller gets
exactly one :class:`ToolAnswer` for the call (the ``tool_result`` block), and events describing
what happened. Only an abort (:class:`Aborted`), a cancellation, or a denial that ends the turn
(:class:`TurnEnded`: nobody could answer) leaves this function early; the answer for the call is
yielded first, so the history can still be repaired.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping, Union

from ..api_facts.images import refused_image, sniffed_media_type
from ..contracts.abort import Aborted, AbortGuard
from ..contracts.config import DEFAULT_TOOL_CAPTURE_LIMIT, MAX_JSON_DEPTH
from ..contracts.events import CallPreview, Event, Notice, PermissionAsked, PermissionDenied, ToolResult, ToolUse
from ..contracts.hooks import NO_HOOKS, Hooks, RewriteInput, ToolCall
from ..contracts.json_types import JSONObject
from ..contracts.messages import ToolResultBlockParam, ToolUseBlockParam, error_result
from ..contracts.permissions import Allow, Deny, PermissionGate, TurnEnded
from ..contracts.protected import resolve_tool_path
from ..contracts.tool_api import PreviewsCalls, ToolContext, ToolInputError, ToolLike, ToolOutput, limit_output, truncate_middle
from ..disk.json_depth import MAX_FILE_DEPTH, text_depth_exceeds
from .sanitize import Sanitizer, TooDeepError, replaced_notice
from .traceback_secrets import with_quoted_literals
from .user_rules import hook_denied

NOT_RUN = "Not run: the run was stopped before this tool call."
NO_SECRETS = Sanitizer()  # still replaces invalid characters
INTERRUPTED = "Interrupted: the user stopped the run while this tool was running."


@dataclass(frozen=True)
class ToolAnswer:
    """The ``tool_result`` block answering one call. Not an event: the loop keeps it for the next
    user message. It comes before the :class:`ToolResult` event that shows it (or before the
    abort), so a consumer that stops listening after the event still has the answer."""

    block: ToolResultBlockParam


@dataclass(frozen=True)
class _Permitted:
    """:func:`_permit`'s last item when the call may run: the input to run it with."""

    input: JSONObject


ToolItem = Union[Event, ToolAnswer]
"""What :func:`run_tool_call` yields: events to pass on, and the call's one answer."""
Describe = Callable[[JSONObject], Awaitable[Union[CallPreview, None]]]
"""What a call will change, for the permission question (:func:`_describer`)."""


def _short(value: object, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _refused(uid: str, name: str, message: str) -> list[ToolItem]:
    """A call answered with an error without running: the answer, then the event showing it."""
    return [ToolAnswer(error_result(uid, message)), ToolResult(tool_use_id=uid, name=name, content=message, is_error=True)]


def _cannot_start(use: ToolUseBlockParam, name: str, tool: ToolLike | None, tools: Mapping[str, ToolLike]) -> str | None:
    """Why the call cannot even be validated (an unknown tool, an input cut by max_tokens), or None."""
    if tool is None:
        raw_name = use.get("name", "")
        shown = name if isinstance(raw_name, str) else _short(raw_name)
        return f"Unknown tool {shown!r}. Available tools: {', '.join(sorted(tools)) or 'none'}."
    raw = use.get("input")
    if isinstance(raw, (dict, Mapping)) and "_unparsed_input" in raw:
        if text_depth_exceeds(str(raw["_unparsed_input"]), MAX_FILE_DEPTH):  # whole, but kept unparsed: too deep
            return TooDeepError(MAX_JSON_DEPTH).refusal()
        return (f"Your output was cut (max_tokens) before this {name} call's input was complete, so it "
                "was not run. Send the call again, shorter or split into smaller steps.")
    return None


async def run_tool_call(
    use: ToolUseBlockParam,
    *,
    tools: Mapping[str, ToolLike],
    gate: PermissionGate,
    guard: AbortGuard,
    make_context: Callable[[str], ToolContext],
    turn: int,
    output_limit: int,
    hooks: Hooks = NO_HOOKS,
    sanitizer: Sanitizer = NO_SECRETS,
    capture_limit: int = DEFAULT_TOOL_CAPTURE_LIMIT,
    refresh: Callable[[], Sanitizer] | None = None,
) -> AsyncIterator[ToolItem]:
    """Validate, permit and run one ``tool_use`` block; yields its events and one :class:`ToolAnswer`.

    ``hooks`` run around the call (``pre_tool_use`` before the gate, ``post_tool_use`` after the
    result). Unknown tools, invalid input, denials (by a hook, the mode or the user) and tool
    failures become ``is_error`` results the model can act on; nothing but :class:`Aborted` / ``CancelledError`` escapes.
    ``refresh`` makes the sanitizer again after a tool that ran code in the kernel (``runs_in_kernel``):
    the credential variables that code made are secrets for its own output.
    """
    uid = str(use.get("id", ""))
    raw_name, raw = use.get("name", ""), use.get("input")
    name = raw_name if isinstance(raw_name, str) else ""
    yield ToolUse(tool_use_id=uid, name=name, input=raw)
    tool = tools.get(name)
    why = _cannot_start(use, name, tool, tools)
    if why is not None or tool is None:
        for item in _refused(uid, name, why or ""):
            yield item
        return
    try:
        checked = await _checked_input(tool, raw, guard, name)
    except (Aborted, asyncio.CancelledError):
        yield ToolAnswer(error_result(uid, NOT_RUN))
        raise
    if isinstance(checked, str):
        for item in _refused(uid, name, checked):
            yield item
        return
    call = ToolCall(tool_use_id=uid, name=name, input=with_resolved_path(tool, checked, gate.cwd),
                    read_only=bool(getattr(tool, "read_only", False)), turn=turn)
    permitted: JSONObject | None = None
    describe = _describer(tool, lambda: make_context(uid), sanitizer, capture_limit)
    async for decided in _permission(tool, call, gate=gate, guard=guard, hooks=hooks, describe=describe):
        if isinstance(decided, _Permitted):
            permitted = decided.input
        else:
            yield decided
    if permitted is None:
        return
    async for item in _run_permitted(tool, call, permitted, make_context, guard=guard, hooks=hooks,
                                     sanitizer=sanitizer, limits=(output_limit, capture_limit),
                                     refresh=refresh if getattr(tool, "runs_in_kernel", False) else None):
        yield item


async def _run_permitted(tool: ToolLike, call: ToolCall, tool_input: JSONObject,
                         make_context: Callable[[str], ToolContext], *, guard: AbortGuard,
                         hooks: Hooks, sanitizer: Sanitizer, limits: tuple[int, int],
                         refresh: Callable[[], Sanitizer] | None = None) -> AsyncIterator[ToolItem]:
    """Run a permitted call: its answer (what enters history, bounded and sanitised), its
    :class:`ToolResult`, then the ``post_tool_use`` hook's warning."""
    uid, name = call.tool_use_id, call.name
    output_limit, capture_limit = limits
    started = time.perf_counter()  # the run only: a permission prompt's wait is the user's, not the tool's
    try:
        with guard.armed():
            out = await tool.run(tool_input, _after_code(make_context(uid), refresh))
    except (Aborted, asyncio.CancelledError):  # the Stop button, or the kernel's interrupt
        yield ToolAnswer(error_result(uid, INTERRUPTED))
        raise
    except Exception as exc:  # a tool bug must not break the loop; the model hears about it
        out = ToolOutput(content=f"{name} failed: {type(exc).__name__}: {exc}", is_error=True)
    if refresh is not None:  # `cfg = dotenv_values(".env"); print(cfg)`: its passwords are secrets now
        sanitizer = refresh()
        sanitizer = with_quoted_literals(sanitizer, out.content)  # a traceback quotes your modules' lines
    out, replaced = _sanitized(_normalised(out, name), sanitizer, capture_limit)
    if replaced:
        yield Notice(level="warning", message=replaced_notice(replaced, f"the output of {name}"))
    out = limit_output(out, output_limit)
    # The tool's blocks go into the tool_result as it made them (ToolOutput's contract says dicts).
    content: Any = out.content
    display = out.display  # bounded by _sanitized (or the content, which is)
    block: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": uid, "content": content}
    if out.is_error:
        block["is_error"] = True
    yield ToolAnswer(block)
    text = content if isinstance(content, str) else "\n".join(
        str(b.get("text", "")) for b in content if isinstance(b, (dict, Mapping)))
    result = ToolResult(tool_use_id=uid, name=name, content=text, is_error=bool(out.is_error),
                        duration_s=time.perf_counter() - started, display=display)
    yield result
    warning = await hooks.post_tool_use(call, tool_input, result)
    if warning:
        yield Notice(level="warning", message=warning)


async def _checked_input(tool: ToolLike, raw: object, guard: AbortGuard, name: str) -> JSONObject | str:
    """The validated input, or the message refusing it (the model's bad input, whatever the
    validator raised); an abort or a cancellation propagates."""
    try:
        return await _validated(tool, raw, guard)
    except (Aborted, asyncio.CancelledError):
        raise
    except ToolInputError as exc:
        return str(exc)
    except Exception as exc:  # a validator that raises something else is still the model's bad input
        return f"Invalid input for tool {name!r}: {type(exc).__name__}: {exc}"


async def _validated(tool: ToolLike, raw: object, guard: AbortGuard) -> JSONObject:
    """``tool.validate(raw)``; in a worker thread for a tool whose schema comes from elsewhere
    (``validates_slowly``, MCP): a catastrophic regex then spins there, and an abort is not delayed."""
    if not getattr(tool, "validates_slowly", False):
        return tool.validate(raw)
    with guard.armed():
        return await asyncio.to_thread(tool.validate, raw)


def with_resolved_path(tool: ToolLike, tool_input: JSONObject, cwd: Path | None) -> JSONObject:
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


def _describer(tool: ToolLike, make_context: Callable[[], ToolContext], sanitizer: Sanitizer, limit: int) -> Describe:
    """The tool's ``preview`` (:class:`PreviewsCalls`) bounded and redacted like a result (it may
    quote the user's text, and it enters the event log); None for a tool without one or one that
    failed: the question then shows the input alone."""

    def clean(text: str | None) -> str | None:
        # Redacted before it is cut: a secret the cut would split no longer matches its value.
        return None if text is None else truncate_middle(sanitizer.text(text)[0], limit)

    async def describe(tool_input: JSONObject) -> CallPreview | None:
        if not isinstance(tool, PreviewsCalls):
            return None
        try:
            shown = await tool.preview(tool_input, make_context())
        except (Aborted, asyncio.CancelledError):
            raise
        except Exception:  # noqa: BLE001 - a preview is a courtesy: the user is asked all the same
            return None
        if not isinstance(shown, CallPreview):
            return None
        return dataclasses.replace(shown, summary=clean(shown.summary) or "", before=clean(shown.before),
                                   after=clean(shown.after), refusal=clean(shown.refusal))

    return describe


async def _permission(tool: ToolLike, call: ToolCall, *, gate: PermissionGate, guard: AbortGuard,
                      hooks: Hooks, describe: Describe) -> AsyncIterator[ToolItem | _Permitted]:
    """Whether the call may run: :class:`_Permitted` at once when the rules allow it, else what
    :func:`_permit` decides (with its events, and the answer of a denial)."""
    # An abort pressed before this call answers it "not run" on either path (the slow one checks in its armed regions).
    at_once = None if guard.is_set else _permitted_at_once(tool, call, gate, hooks)
    if at_once is not None:
        yield _Permitted(at_once)
        return
    async for decided in _permit(tool, call, gate=gate, guard=guard, hooks=hooks, describe=describe):
        yield decided


def _permitted_at_once(tool: ToolLike, call: ToolCall, gate: PermissionGate, hooks: Hooks) -> JSONObject | None:
    """The input to run when the call may run with no hook to hear and no one to ask (the gate's
    rules allow it: most calls), else None for :func:`_permit` to decide, with its events."""
    if "pre_tool_use" in hooks.by_name:
        return None
    tool_input = dict(call.input)
    return tool_input if gate.allows_at_once(tool, tool_input) else None


async def _permit(tool: ToolLike, call: ToolCall, *, gate: PermissionGate, guard: AbortGuard,
                  hooks: Hooks, describe: Describe) -> AsyncIterator[ToolItem | _Permitted]:
    """The hook, then the gate: ends with :class:`_Permitted` (the input to run), or answers a denial."""
    uid, name, tool_input = call.tool_use_id, call.name, dict(call.input)
    try:
        with guard.armed():
            hook = await hooks.pre_tool_use(call)
    except Aborted:
        yield ToolAnswer(error_result(uid, NOT_RUN))
        raise
    if isinstance(hook, RewriteInput):
        try:
            tool_input = await _validated(tool, dict(hook.input), guard)
        except (Aborted, asyncio.CancelledError):
            yield ToolAnswer(error_result(uid, NOT_RUN))
            raise
        except Exception as exc:  # noqa: BLE001 - a bad rewrite is a denial, like a failing hook
            hook = Deny(f"the pre_tool_use hook rewrote the input into an invalid one ({exc}); not run")
    if isinstance(hook, Deny):
        gate.record_denial(name, tool_input, hook.reason, tool_use_id=uid, turn=call.turn)
        yield PermissionDenied(tool_use_id=uid, name=name, input=tool_input, reason=hook.reason)
        for item in _refused(uid, name, hook_denied(name, hook.reason)):
            yield item
        return
    preapproved = isinstance(hook, Allow)
    asked = gate.will_ask(tool, tool_input, preapproved=preapproved)  # a protected file asks even then
    if asked:
        try:
            with guard.armed():
                preview = await describe(tool_input)
        except Aborted:
            yield ToolAnswer(error_result(uid, NOT_RUN))
            raise
        if preview is not None and preview.refusal:  # it would fail once allowed: nobody is asked
            for item in _refused(uid, name, preview.refusal):
                yield item
            return
        yield PermissionAsked(tool_use_id=uid, name=name, input=tool_input, preview=preview)
    try:
        with guard.armed():
            decision = await gate.check(tool, uid, tool_input, call.turn, preapproved=preapproved)
    except Aborted:
        yield ToolAnswer(error_result(uid, NOT_RUN))
        raise
    if isinstance(decision, Deny):
        yield PermissionDenied(tool_use_id=uid, name=name, input=tool_input, reason=decision.reason)
        # "The user" only when a person was asked: a mode, a hook or a headless run is not a user.
        who = f"The user denied this {name} call" if asked else f"This {name} call was not allowed"
        for item in _refused(uid, name, who + (f": {decision.reason}" if decision.reason else ".")):
            yield item
        if decision.ends_turn:  # nobody could answer: answered above, and nothing more is sent
            raise TurnEnded(decision.ends_turn)
        return
    yield _Permitted(tool_input)


def _normalised(out: object, name: str) -> ToolOutput:
    """What a tool returned as a :class:`ToolOutput` whose content is text or content blocks."""
    if not isinstance(out, ToolOutput):
        return ToolOutput(content=f"{name} returned {type(out).__name__}, not a ToolOutput", is_error=True)
    if not isinstance(out.content, (str, list)):
        return ToolOutput(content=str(out.content), is_error=out.is_error, display=out.display)
    return out


def _after_code(ctx: ToolContext, refresh: Callable[[], Sanitizer] | None) -> ToolContext:
    """``ctx`` whose ``redact`` reads the secrets again at its first use, once the code ran (a
    tool that runs code in the kernel redacts what it ran: notebook_run's outputs, written into the
    cell and saved, held a credential variable that cell made)."""
    if refresh is None:
        return ctx
    made: list[Sanitizer] = []

    def redact(text: str) -> str:
        if not made:
            made.append(refresh())
        return made[0].redact(text)

    return dataclasses.replace(ctx, redact=redact)


def _sanitized(out: ToolOutput, sanitizer: Sanitizer, capture_limit: int) -> tuple[ToolOutput, int]:
    """The output as it may enter history and disk: secrets redacted and invalid characters
    replaced (before any cut: a secret cut in two would no longer match its value), then cut to
    ``capture_limit`` (a tool or server that does not bound what it returns must not fill the
    task folder); with the count of replaced characters."""
    display, n_display = sanitizer.text(out.display) if out.display is not None else (None, 0)
    if display is not None:
        display = truncate_middle(display, capture_limit)
    raw = out.content if isinstance(out.content, str) else [_within_api_limits(block) for block in out.content]
    try:
        content, n = sanitizer.value(raw)  # an image the API refuses is not scanned for secrets either
    except TooDeepError as exc:
        content, n = f"The tool's result was {exc}; not kept.", 0
        return ToolOutput(content=content, is_error=True, display=display), n_display
    if isinstance(content, str):
        content = truncate_middle(content, capture_limit)
    return ToolOutput(content=content, is_error=out.is_error, display=display), n + n_display


def _within_api_limits(block: JSONObject) -> JSONObject:
    """``block``, or for an image the API would refuse (a tool's 18 MB PNG: a 400 for this request and,
    the block staying in the history, for every one after it) a text saying what became of it; one
    labelled as another format (an MCP server's PNG as ``image/jpeg``: refused alike) relabelled."""
    if block.get("type") != "image":
        return block
    why = refused_image(block)
    if why is not None:
        return {"type": "text", "text": why}
    source, media = block.get("source"), sniffed_media_type(block)
    if media is None or not isinstance(source, dict) or source.get("media_type") == media:
        return block
    return {**block, "source": {**source, "media_type": media}}
