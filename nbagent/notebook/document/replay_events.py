"""A recorded turn's events, rebuilt from its task folder for a replay: the logged events of the
turn's last run, with each request's streamed text put back before its completion (stream deltas
are not logged)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from ...engine.contracts.events import Event
    from ...engine.contracts.message_types import Message
    from ...engine.state.folder_load import SessionSnapshot
    from ...engine.state.session import Session


def assistant_messages(session: Session | SessionSnapshot, turn: int) -> list[Message]:
    """The assistant messages ``turn`` added to the history (none for a turn the marks do not hold)."""
    marks = {m.turn: m for m in session.marks}
    if turn not in marks:
        return []
    start = marks[turn - 1].history_len if turn - 1 in marks else 0
    return [m for m in session.history[start:marks[turn].history_len] if m.get("role") == "assistant"]


def last_run_events(events: Sequence[Event], turn: int) -> list[Event]:
    """The events of the last run of ``turn``: from after the previous ``Done`` to its ``Done``."""
    from ...engine.contracts import events as ev

    runs: list[list[Event]] = [[]]
    for event in events:
        runs[-1].append(event)
        if isinstance(event, ev.Done):
            runs.append([])
    of_turn = [r for r in runs if any(isinstance(e, ev.ApiRequestStarted) and e.turn == turn for e in r)]
    return of_turn[-1] if of_turn else []


def _deltas(message: Message) -> list[Event]:
    """The streamed text and thinking of one assistant message, as one delta per block."""
    from ...engine.contracts import events as ev

    out: list[Event] = []
    content = message.get("content") or []
    for i, block in enumerate(content if isinstance(content, list) else []):
        match block:
            case {"type": "text", "text": str() as text} if text:
                out.append(ev.TextDelta(index=i, text=text))
            case {"type": "thinking", "thinking": str() as thinking} if thinking:
                out.append(ev.ThinkingDelta(index=i, text=thinking))
    return out


def turn_events(session: Session, turn: int) -> list[Event]:
    """The events a live run of ``turn`` showed, rebuilt from the task folder: the logged events,
    with each request's text put back before its completion (stream deltas are not logged)."""
    from ...engine.contracts import events as ev
    from ...engine.loop.compaction import COMPACT_KEEP

    messages = iter(assistant_messages(session, turn))
    out: list[Event] = []
    for event in last_run_events(session.events, turn):
        if isinstance(event, ev.RequestCompleted) and event.record is not None and event.record.keep != COMPACT_KEEP:
            message = next(messages, None)
            if message is not None:
                out.extend(_deltas(message))
        out.append(event)
    return out


__all__ = ["assistant_messages", "last_run_events", "turn_events"]
