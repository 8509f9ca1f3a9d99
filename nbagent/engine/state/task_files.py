"""What a task folder's files must look like, checked on load.

A file that loads must also work: a string ``cost_usd``, a ``text: null`` block or a repeated
tool id would otherwise load and then fail every later run (a ``TypeError``, a 400 on each request)
with no word about which file is wrong. The ``check_*`` functions raise
:class:`~nbagent.engine.contracts.errors.CorruptFileError` naming the file and the field instead.

Records (request records, turn marks, events, usage, spent) are validated through their own frozen
dataclasses, the same ones the writer serialises (see :mod:`~nbagent.engine.contracts.saved`);
unknown keys in them are refused. Message blocks are the API's and keep whatever keys it sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, Optional, Union, cast

import pydantic

from ..context.window import RequestUsage
from ..contracts.errors import CorruptFileError
from ..contracts.events import Event, RequestRecord, Totals, events_from_json
from ..contracts.json_types import JSONValue
from ..contracts.messages import Message
from ..contracts.saved import NonNegInt, first_error, saved_record, validate_saved
from .sent import SavedSent
from .totals import Spent

HISTORY_FILE = "api_conversation_history.json"
UI_FILE = "ui_messages.json"
CONTEXT_FILE = "context_history.json"
SESSION_FILE = "session.json"
REQUESTS_FILE = "requests.json"
COMPACTIONS_FILE = "compactions.json"
SENT_FILE = "sent_requests.json"
MARKS_FILE = "turn_marks.json"
NOTES_FILE = "notes.md"  # the agent's notes (engine/loop/notes.py): its file, not the session's state
TASK_FILES = (HISTORY_FILE, UI_FILE, CONTEXT_FILE, SESSION_FILE, REQUESTS_FILE, COMPACTIONS_FILE, SENT_FILE,
              MARKS_FILE, NOTES_FILE)
"""Every file of a task folder (not its lock file, nor a writer's temp files): what a copy copies."""
FORMAT_VERSION = 2
"""2: the turn marks left ``session.json`` for ``turn_marks.json`` (version 1 folders still load)."""

_STRICT = pydantic.ConfigDict(strict=True, extra="forbid")
# Message blocks keep whatever keys the API sent (citations, cache_control, …): only the fields the
# loop relies on are checked, the rest is the API's and is sent back as it came.
_BLOCK = pydantic.ConfigDict(strict=True, extra="allow")
_Range = tuple[int, int]  # a JSON array of two ints (validated in JSON mode: see saved.validate_saved)


@saved_record
@dataclass(frozen=True, slots=True)
class TurnMark:
    """Where the session stood at the end of a turn: what rollback restores."""

    turn: NonNegInt
    history_len: NonNegInt
    deleted_range: tuple[int, int] | None
    ts: int
    records_len: NonNegInt
    previous_usage: RequestUsage | None = None
    """The session's previous usage then (the object itself: a copy per turn added up)."""
    last_blocks: NonNegInt | None = None
    """Blocks of the last message then (a later prompt may be merged into it; rollback trims it)."""
    notes: str | None = None
    """The agent's notes file (``notes.md``) as this turn began, kept only when it differs from the
    text the last earlier mark kept: None is "unchanged since" (or no notes in the session yet). A
    rollback past this turn restores it (see :meth:`Session.notes_before`)."""
    __omit_when_default__: ClassVar[tuple[str, ...]] = ("notes",)
    """``notes`` is written only when set: a folder of an earlier version is written back byte for byte."""


class SessionMeta(pydantic.BaseModel):
    """``session.json``: the envelope :meth:`SessionStore.save_meta` writes, its records the engine's
    own dataclasses (one schema each, see :mod:`~nbagent.engine.contracts.saved`)."""

    model_config = _STRICT
    version: int = 1
    model: Optional[str] = None
    deleted_range: Optional[_Range] = None
    totals: Optional[Totals] = None  # written for a reader of the file; load recomputes it
    records_len: Optional[NonNegInt] = None
    marks: Optional[list[TurnMark]] = None  # folders of earlier versions kept them here (now turn_marks.json)
    last_ts: int = 0
    previous_usage: Optional[dict[str, NonNegInt]] = None
    spent: Optional[Spent] = None  # absent in folders of earlier versions: their records' sum
    records: Optional[list[RequestRecord]] = None  # folders of earlier versions kept them here
    compactions: Optional[list[object]] = None  # likewise (parsed by the session: RollbackPoint)
    allowed_always: Optional[list[str]] = None  # "Allow always" answers; absent in earlier folders: none
    allowed_always_signature: Optional[str] = None  # by this user's key (see disk/user_key); else dropped


class _TextBlock(pydantic.BaseModel):
    model_config = _BLOCK
    type: Literal["text"]
    text: str = pydantic.Field(pattern=r"\S")  # the API rejects empty and whitespace-only text


class _ToolUseBlock(pydantic.BaseModel):
    model_config = _BLOCK
    type: Literal["tool_use"]
    id: str = pydantic.Field(min_length=1)
    name: str  # whatever the model sent is kept as sent (the loop answered it with an error)
    input: object = None


class _ToolResultBlock(pydantic.BaseModel):
    model_config = _BLOCK
    type: Literal["tool_result"]
    tool_use_id: str = pydantic.Field(min_length=1)
    content: Union[str, list[dict[str, object]]] = ""
    is_error: bool = False


class _OtherBlock(pydantic.BaseModel):
    """Images, thinking and whatever else the API sends: only the type is checked."""

    model_config = _BLOCK
    type: str = pydantic.Field(min_length=1)


_KNOWN: dict[str, type[pydantic.BaseModel]] = {"text": _TextBlock, "tool_use": _ToolUseBlock, "tool_result": _ToolResultBlock}


class _MessageModel(pydantic.BaseModel):
    model_config = _BLOCK
    role: Literal["user", "assistant"]
    content: Union[str, list[dict[str, object]]]

    @pydantic.field_validator("content")
    @classmethod
    def _blocks(cls, content: Union[str, list[dict[str, object]]]) -> Union[str, list[dict[str, object]]]:
        if isinstance(content, str):
            if not content.strip():
                raise ValueError("empty text")
            return content
        if not content:
            raise ValueError("no content blocks")
        for i, block in enumerate(content):
            match block:  # the known kinds have their own model; any other only needs a type
                case {"type": "text" | "tool_use" | "tool_result" as kind}:
                    model = _KNOWN[kind]
                case {"type": kind}:
                    model = _OtherBlock
                case _:
                    kind, model = None, _OtherBlock
            try:
                model.model_validate(block)
            except pydantic.ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(x) for x in err.get("loc", ()))
                raise ValueError(f"block {i} ({kind!r}) {where}: {err.get('msg')}") from None
        return content


_HISTORY = pydantic.TypeAdapter(list[_MessageModel])


def _first_error(path: Path, exc: pydantic.ValidationError) -> CorruptFileError:
    return CorruptFileError(path, first_error(exc))


def check_meta(path: Path, meta: JSONValue) -> SessionMeta:
    """``session.json`` validated; :class:`CorruptFileError` naming the field when it is wrong."""
    try:
        return SessionMeta.model_validate_json(json.dumps(meta))  # JSON mode: see saved.validate_saved
    except pydantic.ValidationError as exc:
        raise _first_error(path, exc) from None


def _validated(path: Path, shape: object, lines: JSONValue) -> Any:
    """``lines`` validated as ``shape``; :class:`CorruptFileError` naming the line and field when not."""
    try:
        return validate_saved(shape, lines)
    except pydantic.ValidationError as exc:
        raise _first_error(path, exc) from None


def check_records(path: Path, records: JSONValue) -> list[RequestRecord]:
    """The request log validated; :class:`CorruptFileError` naming the record and field when not."""
    result: list[RequestRecord] = _validated(path, list[RequestRecord], records)
    return result


def check_marks(path: Path, lines: JSONValue) -> list[TurnMark]:
    """The turn-mark log validated; :class:`CorruptFileError` naming the mark and field when not."""
    result: list[TurnMark] = _validated(path, list[TurnMark], lines)
    return result


def check_sent(path: Path, lines: JSONValue) -> list[SavedSent]:
    """The sent-request log validated; :class:`CorruptFileError` naming the line and field when not
    (a first line without the system prompt too: nothing before it to take it from)."""
    result: list[SavedSent] = _validated(path, list[SavedSent], lines)
    if result and (result[0].system is None or result[0].tools is None):
        raise CorruptFileError(path, "field 0: the first request has no system prompt or tools")
    return result


def check_events(path: Path, events: list[JSONValue]) -> list[Event]:
    """The event log validated; :class:`CorruptFileError` naming the event and field when not."""
    try:
        return events_from_json(events)
    except pydantic.ValidationError as exc:
        raise CorruptFileError(path, f"bad event: {first_error(exc)}") from None


def check_history(path: Path, history: list[JSONValue]) -> list[Message]:
    """``history`` as messages; :class:`CorruptFileError` naming the message and field of a malformed one."""
    try:
        _HISTORY.validate_python(history)
    except pydantic.ValidationError as exc:
        raise _first_error(path, exc) from None
    return cast("list[Message]", history)  # each item just validated as a message (_MessageModel)
