"""What a compaction does to the history, and what undoes it (saved in ``compactions.json``).

The loop's summary request is in :mod:`nbagent.engine.loop.compaction`; the session applies and
rolls back compactions through this module, and the truncation explorer compacts through
:func:`compacted` too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence, TypedDict, cast

from ..contracts.json_types import JSONArray
from ..contracts.messages import ContentBlock, Message, TextBlockParam, blocks, is_tool_result, tool_uses
from ..disk.persist import dumps_line

if TYPE_CHECKING:  # typing.NotRequired is 3.11+
    from typing_extensions import NotRequired

SUMMARY_MARK = "[Summary of the earlier conversation, written by nbagent's compaction]"

def summary_text(summary: str) -> str:
    """The marked text block the model sees in place of the summarised messages."""
    return f"{SUMMARY_MARK}\n{summary}"


def summary_message(summary: str, history: Sequence[Message], end: int) -> Message:
    """Message ``end`` with the marked summary before its blocks; when the task's reply (message 1)
    called tools, their results (from message 2) come first, so every call keeps its answer.

    Message ``end`` is a user message: a prompt, or (a cut inside one long turn) tool results. Its
    tool results answer message ``end - 1``, which the summary replaces, so they go too (they are
    summarised, see :func:`folded`): a ``tool_result`` without its ``tool_use`` is refused by the API."""
    answers = [b for b in blocks(history[2]) if is_tool_result(b)] if tool_uses(history[1]) else []
    text = TextBlockParam(type="text", text=summary_text(summary))
    rest = [b for b in blocks(history[end]) if not is_tool_result(b)]
    return {"role": "user", "content": [*answers, text, *rest]}


def folded(history: Sequence[Message], end: int) -> list[Message]:
    """What a summary at ``end`` stands for (what the summariser reads): messages ``2..end-1``,
    then message ``end``'s tool results, if it has any (a mid-turn cut; :func:`summary_message`
    drops them)."""
    results: list[ContentBlock] = [b for b in blocks(history[end]) if is_tool_result(b)]
    answers: list[Message] = [{"role": "user", "content": results}] if results else []
    return [*history[2:end], *answers]


def compacted(history: Sequence[Message], end: int, summary: str) -> list[Message]:
    """The history after a compaction (``history`` is not changed): the task pair, then
    :func:`summary_message` in place of messages ``2..end``, then everything after ``end``.
    The session and the truncation explorer both compact through this function."""
    return [*history[:2], summary_message(summary, history, end), *history[end + 1:]]


class SavedRollbackPoint(TypedDict):
    """One line of ``compactions.json`` (:meth:`RollbackPoint.to_json`)."""

    turns: list[int]
    replaced: list[Message]
    updates: JSONArray
    records: NotRequired[int]


@dataclass(frozen=True)
class RollbackPoint:
    """What undoes one compaction, kept in ``compactions.json`` (one line each) so that a resumed
    session rolls back across it exactly: the turns marked before it, the messages it replaced
    (``history[2:end+1]`` then) and the context manager's updates then (their JSON form).
    ``records`` is how many requests were recorded before it (None in folders of earlier
    versions): what the requests up to there saw is rebuilt with it undone (``%agent saw``)."""

    turns: tuple[int, ...]
    replaced: tuple[Message, ...]
    updates: JSONArray
    records: int | None = None

    def restore(self, history: Sequence[Message]) -> list[Message]:
        """``history`` without this compaction (undo later ones first): messages 0-1, the replaced
        messages, then everything after the summary message."""
        return [*history[:2], *self.replaced, *history[3:]]

    def to_json(self) -> SavedRollbackPoint:
        out = SavedRollbackPoint(turns=list(self.turns), replaced=list(self.replaced), updates=self.updates)
        if self.records is not None:
            out["records"] = self.records
        return out

    @classmethod
    def from_json(cls, data: object) -> "RollbackPoint":
        """From :meth:`to_json` output; raises ValueError on any other shape."""
        if not isinstance(data, dict):
            raise ValueError("a compaction entry is not an object")
        turns, replaced, updates = data.get("turns"), data.get("replaced"), data.get("updates")
        if not (isinstance(turns, list) and all(isinstance(t, int) for t in turns)):
            raise ValueError("a compaction's turns are not a list of integers")
        if not (isinstance(replaced, list) and replaced and all(isinstance(m, dict) for m in replaced)):
            raise ValueError("a compaction's replaced messages are not a non-empty list of messages")
        if not isinstance(updates, list):
            raise ValueError("a compaction's context updates are not a list")
        records = data.get("records")
        if records is not None and (not isinstance(records, int) or isinstance(records, bool) or records < 0):
            raise ValueError("a compaction's request count is not a non-negative integer")
        # The replaced messages are only checked to be objects here: a rollback puts them back in
        # the history, whose own check (check_history) refuses a malformed one on the next load.
        return cls(turns=tuple(turns), replaced=tuple(cast("list[Message]", replaced)), updates=updates, records=records)


def point_line(point: RollbackPoint) -> str:
    """One point as ``compactions.json`` writes it (one line)."""
    return dumps_line(point.to_json())


def as_of_request(points: Sequence[RollbackPoint], request: int,
                  history: Sequence[Message]) -> tuple[Sequence[Message], JSONArray | None]:
    """``history`` as request number ``request`` indexed it: the compactions recorded after it
    undone (latest first), and the context manager's updates then (JSON; None: the current ones)."""
    later = [p for p in points if p.records is not None and p.records >= request]
    for point in reversed(later):
        history = point.restore(history)
    return history, (later[0].updates if later else None)
