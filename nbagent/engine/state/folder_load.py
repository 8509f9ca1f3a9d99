"""Loading a task folder (its layout: :mod:`~nbagent.engine.state.store`) into a
:class:`SessionSnapshot`: every file read and checked (a corrupt one raises
:class:`~nbagent.engine.contracts.errors.CorruptFileError` naming it, untouched), and the figures
``session.json`` keeps as of ``records_len`` requests brought up to date from the logs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from ..context.updates import ContextHistoryUpdates, load_updates, updates_text
from ..contracts.errors import CorruptFileError
from ..contracts.events import Event, RequestRecord
from ..contracts.json_types import JSONValue
from ..contracts.messages import Message, history_problems
from ..disk.append_log import Reformatted, read_log
from ..disk.persist import read_json
from .grants import trusted_grants
from .sent import SavedSent, matching_records
from .task_files import (
    COMPACTIONS_FILE,
    HISTORY_FILE,
    MARKS_FILE,
    REQUESTS_FILE,
    SENT_FILE,
    SESSION_FILE,
    UI_FILE,
    SessionMeta,
    TurnMark,
    check_events,
    check_history,
    check_marks,
    check_meta,
    check_records,
    check_sent,
)
from .totals import Spent

_Loaded = TypeVar("_Loaded")


@dataclass
class SessionSnapshot:
    """Everything loaded from a task folder."""

    history: list[Message] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    model: str | None = None
    deleted_range: tuple[int, int] | None = None
    records: list[RequestRecord] = field(default_factory=list)
    marks: list[TurnMark] = field(default_factory=list)
    marks_in_meta: bool = False
    """The marks came from ``session.json`` (a folder of an earlier version): the first save of the
    marks writes ``turn_marks.json`` whole, then ``session.json`` without them."""
    last_ts: int = 0
    previous_usage: dict[str, int] | None = None
    updates: ContextHistoryUpdates = field(default_factory=ContextHistoryUpdates)
    compactions: list[object] = field(default_factory=list)
    """What rollback needs to undo each compaction (parsed by the session: RollbackPoint)."""
    compactions_file: str = COMPACTIONS_FILE
    """The file the compactions came from (``session.json`` in folders of earlier versions)."""
    whole_logs: frozenset[str] = frozenset()
    """The logs read whole, in this version's layout: the session appends to them as they are."""
    notices: list[str] = field(default_factory=list)
    """What loading repaired (a torn last line dropped), to be told to the user once."""
    spent: Spent | None = None
    """What ``session.json`` says was billed up to ``records_len`` records (None: an earlier version)."""
    records_len: int | None = None
    reformatted: frozenset[str] = frozenset()
    """Logs whose items loaded but not in the form appends need: the session rewrites them on load."""
    allowed_always: tuple[str, ...] = ()
    """Tools the user allowed "always" in the session (none in folders of earlier versions)."""
    sent: list[SavedSent] = field(default_factory=list)
    """What each request sent (none for requests made by earlier versions, which did not save it)."""


class _Logs:
    """Reads the folder's logs, noting which loaded whole (the session appends to them as they are)
    and which must be rewritten in nbagent's form (reformatted by an editor)."""

    def __init__(self, task_dir: Path) -> None:
        self.task_dir = task_dir
        self.notices: list[str] = []
        self.whole: set[str] = set()
        self.reformatted: set[str] = set()

    def read(self, name: str, load: Callable[[Path, list[str]], _Loaded]) -> _Loaded:
        before = len(self.notices)
        items = load(self.task_dir / name, self.notices)
        if len(self.notices) == before:
            self.whole.add(name)
        elif isinstance(self.notices[-1], Reformatted):
            self.reformatted.add(name)
        return items


def load_folder(task_dir: Path) -> SessionSnapshot:
    """Load ``task_dir`` (see :meth:`SessionStore.load <nbagent.engine.state.store.SessionStore.load>`)."""
    if not task_dir.is_dir():
        raise FileNotFoundError(f"no session folder at {task_dir}")
    logs = _Logs(task_dir)
    history = logs.read(HISTORY_FILE, _load_history)
    events = logs.read(UI_FILE, _load_events)
    updates = load_updates(task_dir)  # raises CorruptFileError naming context_history.json
    meta_path = task_dir / SESSION_FILE
    meta = read_json(meta_path, default={})
    if not isinstance(meta, dict):
        raise CorruptFileError(meta_path, "expected a JSON object")
    checked = check_meta(meta_path, meta)
    # Folders written before the request and compaction logs kept both in session.json.
    records = checked.records if checked.records is not None else logs.read(REQUESTS_FILE, _load_records)
    compactions = checked.compactions if checked.compactions is not None else logs.read(COMPACTIONS_FILE, read_log)
    if not isinstance(compactions, list):
        raise CorruptFileError(meta_path, "bad session data: compactions is not a list")
    # Folders of version 1 kept the turn marks in session.json; the marks log then is not theirs.
    marks = checked.marks if checked.marks is not None else logs.read(MARKS_FILE, _load_marks)
    snap = _snapshot(checked, history, records, compactions, marks)
    snap.marks_in_meta = checked.marks is not None
    snap.allowed_always = trusted_grants(task_dir, checked, history, updates_text(updates), compactions, marks,
                                         logs.notices)
    saved_sent = logs.read(SENT_FILE, _load_sent)
    snap.sent = matching_records(saved_sent, snap.records)
    snap.events, snap.updates, snap.notices = events, updates, logs.notices
    if "compactions" in meta:
        snap.compactions_file = SESSION_FILE
    # Items dropped as they loaded (marks beyond the history, lines of rolled-back requests, a
    # stale compaction point): the file must say so, so it is written whole, not appended to.
    for name, kept, loaded in ((MARKS_FILE, snap.marks, marks), (SENT_FILE, snap.sent, saved_sent),
                               (COMPACTIONS_FILE, snap.compactions, compactions)):
        if len(kept) < len(loaded):
            logs.whole.discard(name)
    snap.whole_logs, snap.reformatted = frozenset(logs.whole), frozenset(logs.reformatted)
    return snap


def _snapshot(meta: SessionMeta, history: list[Message], records: list[RequestRecord],
              compactions: Sequence[object], all_marks: list[TurnMark]) -> SessionSnapshot:
    """The session.json fields, checked against the logs (they are newer where they say more: a
    turn's end does not rewrite session.json, and a crash between writes is repaired)."""
    last_ts, previous_usage = max([meta.last_ts, *(m.ts for m in all_marks)]), meta.previous_usage
    described = meta.records_len
    if described is not None and len(records) > described:
        # Requests completed after session.json was last written: the newest is "previous".
        last = records[-1]
        previous_usage = {"ts": last.ts, **{k: int(v) for k, v in dataclasses.asdict(last.usage).items()
                                            if k in _PREVIOUS_USAGE_FIELDS}}
        last_ts = max(last_ts, last.ts)
    # Files are written one by one; after a crash between writes, keep the range within history.
    deleted_range = meta.deleted_range
    if deleted_range and deleted_range[1] >= len(history):
        deleted_range = (2, max(1, len(history) - 1)) if len(history) > 2 else None
    points = _applied(compactions, history)
    # Turn marks beyond the history are dropped (their log may lead it after a crash), except
    # those of turns before a compaction (they describe the history it replaced).
    compacted_turns = {t for c in points if isinstance(c, dict) for t in _turns(c)}
    marks = [m for m in all_marks if m.history_len <= len(history) or m.turn in compacted_turns]
    return SessionSnapshot(
        history=history, model=meta.model, deleted_range=deleted_range, records=list(records), marks=marks,
        last_ts=last_ts, previous_usage=previous_usage, compactions=points, spent=meta.spent, records_len=described,
    )


def _turns(point: dict[str, object]) -> list[object]:
    """A saved compaction point's turns (checked when the session parses the point)."""
    turns = point.get("turns", ())
    return list(turns) if isinstance(turns, (list, tuple)) else []


def _applied(points: Sequence[object], history: list[Message]) -> list[object]:
    """The compaction points the history reflects. A point is written before the history it
    compacts, and a rollback restores the history before it drops the point: after a crash in
    between, the newest point may describe a compaction the history does not have (its replaced
    messages are still in place), and applying it on a rollback would corrupt the history."""
    points = list(points)
    while points and isinstance(points[-1], dict):
        replaced = points[-1].get("replaced")
        if not isinstance(replaced, list) or not replaced:
            break  # not a point nbagent wrote: the session's own check names the file
        # A compacted history has its summary at index 2; without the compaction (not done yet, or
        # undone by a rollback that may also have cut the history shorter) the first replaced
        # message is there, or the history is too short to hold one.
        if len(history) > 2 and history[2] != replaced[0]:
            break
        points.pop()
    return points


_PREVIOUS_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _read_list(path: Path, notices: list[str], what: str) -> list[JSONValue]:
    lines = read_log(path, notices)
    if not isinstance(lines, list):
        raise CorruptFileError(path, f"expected a list of {what}")
    return lines


def _load_records(path: Path, notices: list[str]) -> list[RequestRecord]:
    return check_records(path, _read_list(path, notices, "request records"))


def _load_marks(path: Path, notices: list[str]) -> list[TurnMark]:
    return check_marks(path, _read_list(path, notices, "turn marks"))


def _load_sent(path: Path, notices: list[str]) -> list[SavedSent]:
    return check_sent(path, _read_list(path, notices, "sent requests"))


def _load_history(path: Path, notices: list[str]) -> list[Message]:
    history = read_log(path, notices)
    if not isinstance(history, list) or not all(
        isinstance(m, dict) and m.get("role") in ("user", "assistant")
        and isinstance(m.get("content"), (str, list)) for m in history
    ):
        raise CorruptFileError(path, "expected a list of messages")
    messages = check_history(path, history)
    try:
        problems = history_problems(messages, allow_trailing_tool_use=True) if messages else []
    except Exception as exc:  # noqa: BLE001 - malformed blocks: the file is corrupt, not the loader
        raise CorruptFileError(path, f"invalid conversation: {type(exc).__name__}: {exc}") from None
    if problems:
        raise CorruptFileError(path, "invalid conversation: " + problems[0])
    return messages


def _load_events(path: Path, notices: list[str]) -> list[Event]:
    raw_events = read_log(path, notices)
    if not isinstance(raw_events, list):
        raise CorruptFileError(path, "expected a list of events")
    return check_events(path, raw_events)
