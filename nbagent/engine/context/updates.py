"""Stored context updates: timestamped edits of history blocks, and their file.

History itself is never edited. What the model sees differently (a truncation notice, a file read
replaced by a notice) is recorded here as ``message index → (edit type, block index → updates)``,
each update ``[timestamp, "text", [new_text], metadata]`` in timestamp order, and applied when a
request is built. Timestamps make checkpoint rollback possible: dropping every update newer than
``ts`` restores exactly what the model saw then. Persisted as ``context_history.json`` in Cline's
nested-array shape, which keeps insertion order.
"""

from __future__ import annotations

import bisect
import json
import os
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Iterator, Sequence

from ..contracts.errors import CorruptFileError
from ..contracts.json_types import JSONArray, JSONValue
from ..disk.persist import atomic_write_text, read_json

CONTEXT_HISTORY_FILE = "context_history.json"

TRUNCATION_NOTICE = (
    "[NOTE] Some previous conversation history with the user has been removed to maintain optimal "
    "context window length. The initial user task has been retained for continuity, while "
    "intermediate conversation history has been removed. Keep this in mind as you continue "
    "assisting the user. Pay special attention to the user's latest messages."
)
CONTINUE_NOTICE = "[Continue assisting the user!]"
DUPLICATE_FILE_READ_NOTICE = (
    "[[NOTE] This file read has been removed to save space in the context window. Refer to the "
    "latest file read for the most up to date version of this file.]"
)


class EditType(IntEnum):
    """Why a message was edited (Cline's numbering, stored in the file)."""

    UNDEFINED = 0  # truncation notices
    NO_FILE_READ = 1
    READ_FILE_TOOL = 2
    ALTER_FILE_TOOL = 3  # write_file / edit_file
    FILE_MENTION = 4  # <file_content path="…"> in user text


@dataclass(frozen=True, slots=True)
class ContextUpdate:
    """One edit of one block: ``[ts, kind, content, metadata]`` on disk.

    ``kind`` is ``"text"`` (the only kind Cline and nbagent write); ``content[0]`` is the new text.
    For file mentions ``metadata`` is ``((replaced paths…), (all paths in the block…))``.
    """

    ts: float
    kind: str
    content: tuple[str, ...]
    metadata: tuple[tuple[str, ...], ...] = ()

    @property
    def text(self) -> str:
        """The replacement text."""
        return self.content[0] if self.content else ""

    def to_json(self) -> JSONArray:
        """``[ts, kind, [content…], [[metadata…]…]]``."""
        metadata: JSONArray = [list[JSONValue](m) for m in self.metadata]
        return [self.ts, self.kind, list[JSONValue](self.content), metadata]


class _MessageEdits:
    """The updates of one message: its edit type and, per block, updates in timestamp order."""

    __slots__ = ("edit_type", "blocks")

    def __init__(self, edit_type: int) -> None:
        self.edit_type = edit_type
        self.blocks: dict[int, list[ContextUpdate]] = {}


class ContextHistoryUpdates:
    """All stored updates of one session (see the module docstring).

    Every change bumps a per-message version, so request builders can reuse edited copies of
    messages whose updates did not change.
    """

    def __init__(self) -> None:
        self._messages: dict[int, _MessageEdits] = {}
        self._versions: dict[int, int] = {}
        self._clock = 0
        self._sorted: list[int] | None = []
        self._dropped = 0

    # -- reading -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._messages)

    def __contains__(self, message_index: object) -> bool:
        return message_index in self._messages

    def __iter__(self) -> Iterator[int]:
        return iter(self._messages)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContextHistoryUpdates):
            return NotImplemented
        return self.to_json() == other.to_json()

    def __repr__(self) -> str:
        return f"ContextHistoryUpdates({self.to_json()!r})"

    def edit_type(self, message_index: int) -> int | None:
        """The message's edit type, or None when it has no updates."""
        entry = self._messages.get(message_index)
        return entry.edit_type if entry is not None else None

    def block_updates(self, message_index: int) -> dict[int, tuple[ContextUpdate, ...]]:
        """Block index → that block's updates (oldest first) for one message (a copy)."""
        entry = self._messages.get(message_index)
        if entry is None:
            return {}
        return {b: tuple(u) for b, u in entry.blocks.items()}

    def latest(self, message_index: int, block_index: int) -> ContextUpdate | None:
        """The update that wins for this block (the newest), or None."""
        entry = self._messages.get(message_index)
        updates = entry.blocks.get(block_index) if entry is not None else None
        return updates[-1] if updates else None

    def latest_by_block(self, message_index: int) -> dict[int, ContextUpdate]:
        """Block index → winning update, for one message."""
        entry = self._messages.get(message_index)
        if entry is None:
            return {}
        return {b: u[-1] for b, u in entry.blocks.items() if u}

    def version(self, message_index: int) -> int:
        """A number that changes whenever this message's updates change (0 = never had any)."""
        return self._versions.get(message_index, 0)

    @property
    def dropped(self) -> int:
        """How many times updates were dropped (:meth:`truncate_after`): an update never goes
        otherwise, so while this stays the same a replaced block stays replaced."""
        return self._dropped

    @property
    def clock(self) -> int:
        """A number that changes whenever any update changes."""
        return self._clock

    def indices_between(self, start: int, stop: int) -> list[int]:
        """Sorted message indices with updates in ``[start, stop)``."""
        if self._sorted is None:
            self._sorted = sorted(self._messages)
        lo = bisect.bisect_left(self._sorted, start)
        hi = bisect.bisect_left(self._sorted, stop)
        return self._sorted[lo:hi]

    def indices_with_edit_type(self, *edit_types: int) -> frozenset[int]:
        """Message indices whose edit type is one of ``edit_types``."""
        return frozenset(i for i, e in self._messages.items() if e.edit_type in edit_types)

    # -- changing ------------------------------------------------------------------------------

    def _touch(self, message_index: int) -> None:
        self._clock += 1
        self._versions[message_index] = self._clock

    def add(
        self,
        message_index: int,
        block_index: int,
        ts: float,
        text: str,
        *,
        edit_type: int = EditType.UNDEFINED,
        metadata: Sequence[Sequence[str]] = (),
    ) -> ContextUpdate:
        """Record that ``block_index`` of ``message_index`` reads ``text`` from ``ts`` on.

        A message keeps the edit type of its first update. Updates stay in timestamp order; equal
        timestamps keep insertion order.
        """
        update = ContextUpdate(ts, "text", (text,), tuple(tuple(m) for m in metadata))
        self._insert(message_index, int(edit_type), block_index, update)
        return update

    def _insert(self, message_index: int, edit_type: int, block_index: int, update: ContextUpdate) -> None:
        entry = self._messages.get(message_index)
        if entry is None:
            entry = self._messages[message_index] = _MessageEdits(edit_type)
            self._sorted = None
        updates = entry.blocks.setdefault(block_index, [])
        if not updates or updates[-1].ts <= update.ts:
            updates.append(update)
        else:
            updates.insert(bisect.bisect_right([u.ts for u in updates], update.ts), update)
        self._touch(message_index)

    def truncate_after(self, ts: float) -> bool:
        """Drop every update with a timestamp strictly greater than ``ts``, then empty blocks and
        messages. Returns whether anything was dropped."""
        changed = False
        for message_index in list(self._messages):
            entry = self._messages[message_index]
            for block_index in list(entry.blocks):
                updates = entry.blocks[block_index]
                keep = bisect.bisect_right([u.ts for u in updates], ts)
                if keep < len(updates):
                    changed = True
                    self._dropped += 1
                    self._touch(message_index)
                    del updates[keep:]
                if not updates:
                    del entry.blocks[block_index]
            if not entry.blocks:
                del self._messages[message_index]
                self._sorted = None
                self._touch(message_index)
        return changed

    def copy(self) -> "ContextHistoryUpdates":
        """An independent copy (updates are immutable, so only the containers are copied)."""
        return ContextHistoryUpdates.from_json(self.to_json())

    def as_of(self, ts: float) -> "ContextHistoryUpdates":
        """A copy holding only the updates at or before ``ts`` (what a rollback to ``ts`` keeps)."""
        snapshot = self.copy()
        snapshot.truncate_after(ts)
        return snapshot

    # -- JSON ----------------------------------------------------------------------------------

    def to_json(self) -> JSONArray:
        """``[[message_index, [edit_type, [[block_index, [update…]]…]]]…]`` in insertion order."""
        return [[i, [e.edit_type, _blocks_json(e)]] for i, e in self._messages.items()]

    @classmethod
    def from_json(cls, data: JSONValue) -> "ContextHistoryUpdates":
        """Rebuild from :meth:`to_json` output; raises ValueError on any other shape."""
        out = cls()
        for entry in _as_list(data, "the top level"):
            raw_index, inner = _pair(entry, "a message entry")
            raw_type, blocks = _pair(inner, f"message {raw_index}")
            message_index = _require_int(raw_index, "a message index")
            edit_type = _require_int(raw_type, f"the edit type of message {message_index}")
            for block in _as_list(blocks, f"the blocks of message {message_index}"):
                raw_block, updates = _pair(block, f"a block of message {message_index}")
                block_index = _require_int(raw_block, f"a block index of message {message_index}")
                for raw in _as_list(updates, f"the updates of block {message_index}.{block_index}"):
                    out._insert(message_index, edit_type, block_index, _update_from_json(raw))
        return out


def _blocks_json(edits: _MessageEdits) -> JSONArray:
    return [[b, [u.to_json() for u in ups]] for b, ups in edits.blocks.items()]


def _as_list(value: JSONValue, what: str) -> JSONArray:
    if not isinstance(value, list):
        raise ValueError(f"{what} is not an array")
    return value


def _pair(value: JSONValue, what: str) -> tuple[JSONValue, JSONValue]:
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"{what} is not a two-element array")
    return value[0], value[1]


def _require_int(value: JSONValue, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{what} is not an integer: {value!r}")
    return value


def _update_from_json(raw: JSONValue) -> ContextUpdate:
    if not isinstance(raw, list) or len(raw) != 4:
        raise ValueError(f"an update is not [ts, kind, content, metadata]: {raw!r}")
    ts, kind, content, metadata = raw
    if not isinstance(ts, (int, float)) or isinstance(ts, bool):
        raise ValueError(f"an update's timestamp is not a number: {ts!r}")
    if not isinstance(kind, str):
        raise ValueError(f"an update's kind is not a string: {kind!r}")
    if not isinstance(content, list) or not all(isinstance(c, str) for c in content):
        raise ValueError("an update's content is not an array of strings")
    if not isinstance(metadata, list) or not all(
        isinstance(m, list) and all(isinstance(s, str) for s in m) for m in metadata
    ):
        raise ValueError("an update's metadata is not an array of string arrays")
    return ContextUpdate(ts, kind, tuple(str(c) for c in content),
                         tuple(tuple(str(s) for s in m) for m in metadata if isinstance(m, list)))


# -- the file --------------------------------------------------------------------------------


def updates_text(updates: ContextHistoryUpdates) -> str:
    """What ``context_history.json`` holds for ``updates``."""
    return json.dumps(updates.to_json(), ensure_ascii=False, separators=(",", ":"))


def save_updates(updates: ContextHistoryUpdates, task_dir: str | os.PathLike[str]) -> Path:
    """Write ``context_history.json`` into ``task_dir`` atomically; returns its path."""
    path = Path(task_dir) / CONTEXT_HISTORY_FILE
    atomic_write_text(path, updates_text(updates))
    return path


def load_updates(task_dir: str | os.PathLike[str]) -> ContextHistoryUpdates:
    """Read ``context_history.json`` from ``task_dir`` (no file means no updates).

    A file that cannot be read back raises :class:`CorruptFileError` naming it; the file is never
    touched.
    """
    path = Path(task_dir) / CONTEXT_HISTORY_FILE
    missing = object()
    data = read_json(path, default=missing)  # raises CorruptFileError for bytes that are not JSON
    if data is missing:
        return ContextHistoryUpdates()
    try:
        return ContextHistoryUpdates.from_json(data)
    except (ValueError, RecursionError) as exc:
        raise CorruptFileError(path, str(exc)) from exc
