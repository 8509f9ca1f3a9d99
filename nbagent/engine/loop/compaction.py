"""Summarising compaction (the spec's auto-condense): one request summarises what would be hidden.

The hidden part is history ``[2, k)`` where ``k`` is the last user message that is a prompt (not
tool results), so no ``tool_use`` loses its result. The summary replaces that part as one marked
text block at the start of message ``k``: the model then sees the task (messages 0-1), the
summary, and everything from the latest prompt on. Inside one long turn (one prompt, then
hundreds of tool calls) there is no such prompt: the cut is then mid-turn, as Claude Code's, at
the last tool-result message before the latest call, whose results the summary takes in too
(:func:`~nbagent.engine.state.compactions.folded`); the latest call and its results stay whole.
The summary request is a row of the turn table
(``keep="compact"``) with its cost. A summary is never summarised again right away (at least
:data:`MIN_HIDDEN` other messages must be hidden). A failure raises :class:`CompactionFailed`; the
loop then reports it and the ordinary truncation applies.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import AsyncIterator, Mapping, Sequence

from ..api_facts.cost import cost_of
from ..api_facts.models import ModelInfo
from ..api_facts.tokens import TokenCounter
from ..context import get_context_window_info
from ..contracts.config import SessionConfig
from ..contracts.context_policy import ContextPolicy
from ..contracts.errors import NbAgentError
from ..contracts.events import ContextAction, Event, Notice, RequestCompleted, RequestRecord
from ..contracts.hooks import Hooks
from ..contracts.messages import Message, blocks, is_tool_result, message_text, tool_uses
from ..contracts.provider import MessageComplete, ModelRequest, Provider
from ..state.compactions import SUMMARY_MARK, compacted, folded
from ..state.session import Session

COMPACT_SYSTEM = (
    "nbagent-compaction: You summarise a conversation between a user and a coding/data agent so that "
    "the agent can continue without it. Keep facts, decisions, file names, variable names, results "
    "and open questions; drop chatter. Answer with the summary only."
)
MESSAGE_HEADER = "--- message {index} ({role}) ---"
MIN_HIDDEN = 2
COMPACT_KEEP = "compact"


NOTHING_TO_COMPACT = ("Nothing to compact: too few messages since the task or the last summary; no request sent, "
                      "the history is as it was.")


class CompactionFailed(NbAgentError):
    """The summary could not be made (nothing to compact, or the request failed); the reason says which."""


@dataclass(frozen=True)
class Compaction:
    """A summary ready to replace ``history[2:end+1]`` (see
    :func:`~nbagent.engine.state.compactions.compacted`), and the request that made it;
    ``through`` is the last message it stands for (``end - 1``, or ``end`` when cut mid-turn)."""

    end: int
    summary: str
    record: RequestRecord
    through: int


def hidden_end(history: Sequence[Message]) -> int | None:
    """``k``: where the summary ends, or None when fewer than :data:`MIN_HIDDEN` messages that are
    not a previous summary would be folded (see :func:`~nbagent.engine.state.compactions.folded`).

    The last prompt message (user, without tool results) if it is > 2; else, inside one long
    turn, the last tool-result message whose next message calls tools (a mid-turn cut: the latest
    call and its results stay whole)."""
    already = 1 if len(history) > 2 and _is_summary(history[2]) else 0
    for end in (_prompt_end(history), _mid_turn_end(history)):
        if end is not None and len(folded(history, end)) - already >= MIN_HIDDEN:
            return end
    return None


def _prompt_end(history: Sequence[Message]) -> int | None:
    for k in range(len(history) - 1, 2, -1):
        message = history[k]
        if message.get("role") == "user" and not any(is_tool_result(b) for b in blocks(message)):
            return k
    return None


def _mid_turn_end(history: Sequence[Message]) -> int | None:
    for k in range(len(history) - 2, 2, -1):
        message, after = history[k], history[k + 1]
        if message.get("role") == "user" and any(is_tool_result(b) for b in blocks(message)) \
                and after.get("role") == "assistant" and tool_uses(after):
            return k
    return None


def _is_summary(message: Message) -> bool:
    return any(str(b.get("text", "")).startswith(SUMMARY_MARK) for b in blocks(message))


def transcript(messages: Sequence[Message], start: int, instructions: str | None) -> str:
    """The text the summariser reads: each hidden message under a numbered header."""
    parts = [MESSAGE_HEADER.format(index=start + i, role=m.get("role")) + "\n" + message_text(m).strip()
             for i, m in enumerate(messages)]
    ask = "Summarise the conversation above." + (f" Instructions: {instructions}" if instructions else "")
    return "\n\n".join([*parts, ask])


async def summarise(
    history: Sequence[Message], *, provider: Provider, model: str, max_tokens: int, turn: int,
    request_no: int, context_window: int, prices: Mapping[str, ModelInfo] | None = None,
    instructions: str | None = None,
) -> Compaction:
    """One summary request over what compaction would hide; raises :class:`CompactionFailed`."""
    end = hidden_end(history)
    if end is None:
        raise CompactionFailed("nothing to compact: too few messages since the task (or only a summary)")
    started, ts = time.perf_counter(), int(time.time() * 1000)
    hidden = folded(history, end)
    # No cache breakpoints: this prompt is sent once and no later request starts with it, so a
    # cache write (1.25x the input price) bought nothing (notebook 05's summary row: "cache write
    # 2,280, cache read 0"); the policy explorer prices it as uncached input too.
    request = ModelRequest(model=model, system=COMPACT_SYSTEM, tools=[], max_tokens=max_tokens,
                           messages=[{"role": "user", "content": transcript(hidden, 2, instructions)}],
                           without=frozenset({"cache_control"}))
    complete: MessageComplete | None = None
    try:
        async for chunk in provider.stream(request):
            if isinstance(chunk, MessageComplete):
                complete = chunk
    except Exception as exc:  # noqa: BLE001 - any failure falls back to truncation
        raise CompactionFailed(f"the summary request failed ({type(exc).__name__}: {exc})") from exc
    summary = message_text(complete.message).strip() if complete is not None else ""
    if complete is None or not summary:
        raise CompactionFailed("the summary request returned no text")
    info = get_context_window_info(context_window)
    u = complete.usage
    record = RequestRecord(
        turn=turn, request=request_no, model=complete.model or model, usage=u, cost_usd=cost_of(u, model, prices),
        context_tokens=u.prompt_tokens, max_allowed=info.max_allowed_size, context_window=info.context_window,
        deleted_range=None, keep=COMPACT_KEEP, file_read_saving=None, retries=0, stop_reason=complete.stop_reason,
        duration_s=time.perf_counter() - started, ts=ts)
    return Compaction(end=end, summary=summary, record=record, through=1 + len(hidden))


__all__ = ["COMPACT_SYSTEM", "MESSAGE_HEADER", "COMPACT_KEEP", "NOTHING_TO_COMPACT", "CompactionFailed", "Compaction",
           "compacted_notice", "hidden_end", "transcript", "summarise"]


async def compact_session(session: Session, provider: Provider, hooks: Hooks, config: SessionConfig, *, turn: int,
                          context_window: int, instructions: str | None) -> AsyncIterator[Event]:
    """Compact ``session`` now: the ``pre_compact`` hook, one summary request, the summary in the
    history and its record in the table; a failure is a warning and ordinary truncation applies."""
    end = hidden_end(session.history)
    warning = await hooks.notify("pre_compact", turn, folded(session.history, end) if end else [])
    if warning:
        yield Notice(level="warning", message=warning)
    try:
        # The summary's size is bounded by the summary layer's option when the policy has it.
        policy = ContextPolicy.parse(config.context)  # stored parsed: returned as it is
        bound = policy.options.summary_tokens if policy.has("summary") else config.max_tokens
        made = await summarise(session.history, provider=provider, model=config.compact_model or config.model,
                               max_tokens=min(bound, config.max_tokens), turn=turn, request_no=len(session.records) + 1,
                               context_window=context_window, prices=config.prices, instructions=instructions)
    except CompactionFailed as exc:
        yield Notice(level="warning", message=f"Compaction failed: {exc}. Ordinary truncation applies instead.")
        return
    before = _sent_tokens(session)
    after = TokenCounter().count_request(compacted(session.history, made.end, made.summary))
    record = dataclasses.replace(made.record, context_actions=(ContextAction(
        layer="summary", tokens_removed=max(before - after, 0), detail=f"messages 2-{made.through} summarised"),))
    made = dataclasses.replace(made, record=record)
    session.compact(made.end, made.summary, made.record)
    yield RequestCompleted(record=made.record)
    yield Notice(level="info", message=compacted_notice(made, before, _sent_tokens(session)))


def _sent_tokens(session: Session) -> int:
    """Estimated tokens of the history as the next request sends it (hidden range applied)."""
    return TokenCounter().count_request(session.context.get_truncated_messages(session.history, session.deleted_range))


def compacted_notice(made: Compaction, before: int, after: int) -> str:
    """What compaction did, gained and cost: a summary that saves little (a large message 2, which
    is always kept, say) should be visible as such, next to the price of the summary request."""
    u = made.record.usage
    cost = "at unknown cost" if made.record.cost_usd is None else f"for ${made.record.cost_usd:.4f}"
    # A lesson's short turns can summarise to more than they were: "Compacted" alone read as a saving.
    grew = (" The summary is no shorter than the messages it replaced, so it saved nothing: compaction pays "
            "off once the earlier turns are long.") if after >= before else ""
    return (f"Compacted messages 2-{made.through} into a summary: history {before:,} → {after:,} tokens "
            f"(estimated), summary request {cost} ({u.prompt_tokens:,} in, {u.output_tokens:,} out).{grew}")
