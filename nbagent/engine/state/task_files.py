"""What a task folder's ``session.json``, request log and history must look like: pydantic models checked on load.

A file that loads must also work: a string ``cost_usd``, a ``text: null`` block or a repeated
tool id would otherwise load and then fail every later run (a ``TypeError``, a 400 on each request)
with no word about which file is wrong. :func:`check_meta` and :func:`check_history` raise
:class:`~nbagent.engine.contracts.errors.CorruptFileError` naming the file and the field instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

import pydantic

from ..contracts.errors import CorruptFileError

_STRICT = pydantic.ConfigDict(strict=True, extra="allow")
_NonNegInt = pydantic.NonNegativeInt
_Range = Annotated[list[int], pydantic.Field(min_length=2, max_length=2)]  # JSON has lists, not tuples
# Money spent: NaN, an infinity or a negative sum would switch a budget off (every comparison
# with NaN is false), so a file holding one is refused.
_Cost = Annotated[float, pydantic.Field(ge=0, allow_inf_nan=False)]
_Usage = dict[str, _NonNegInt]


class _UsageModel(pydantic.BaseModel):
    model_config = _STRICT
    input_tokens: _NonNegInt = 0
    output_tokens: _NonNegInt = 0
    cache_creation_input_tokens: _NonNegInt = 0
    cache_read_input_tokens: _NonNegInt = 0
    cache_creation_1h: _NonNegInt = 0


class _RecordModel(pydantic.BaseModel):
    model_config = _STRICT
    turn: _NonNegInt
    request: _NonNegInt
    model: str
    usage: _UsageModel
    cost_usd: Optional[_Cost]
    context_tokens: int
    max_allowed: float
    context_window: int
    deleted_range: Optional[_Range]
    keep: Optional[str]
    file_read_saving: Optional[float]
    retries: _NonNegInt
    stop_reason: Optional[str]
    duration_s: float
    ts: int
    estimated_input_tokens: int = 0


class _MarkModel(pydantic.BaseModel):
    model_config = _STRICT
    turn: _NonNegInt
    history_len: _NonNegInt
    deleted_range: Optional[_Range]
    ts: int
    records_len: _NonNegInt
    previous_usage: Optional[_Usage] = None
    last_blocks: Optional[_NonNegInt] = None


class _SpentModel(pydantic.BaseModel):
    """Every request billed in the session up to ``records_len`` (rolled-back ones included)."""

    model_config = _STRICT
    requests: _NonNegInt = 0
    cost_usd: _Cost = 0.0
    budget_usd: _Cost = 0.0
    unpriced_requests: _NonNegInt = 0


class _MetaModel(pydantic.BaseModel):
    model_config = _STRICT
    version: int = 1
    model: Optional[str] = None
    deleted_range: Optional[_Range] = None
    records: list[_RecordModel] = []
    marks: list[_MarkModel] = []
    last_ts: int = 0
    previous_usage: Optional[_Usage] = None
    records_len: Optional[_NonNegInt] = None
    spent: Optional[_SpentModel] = None  # absent in folders of earlier versions: their records' sum


class _TextBlock(pydantic.BaseModel):
    model_config = _STRICT
    type: Literal["text"]
    text: str = pydantic.Field(pattern=r"\S")  # the API rejects empty and whitespace-only text


class _ToolUseBlock(pydantic.BaseModel):
    model_config = _STRICT
    type: Literal["tool_use"]
    id: str = pydantic.Field(min_length=1)
    name: str  # whatever the model sent is kept as sent (the loop answered it with an error)
    input: Any = None


class _ToolResultBlock(pydantic.BaseModel):
    model_config = _STRICT
    type: Literal["tool_result"]
    tool_use_id: str = pydantic.Field(min_length=1)
    content: Union[str, list[dict[str, Any]]] = ""
    is_error: bool = False


class _OtherBlock(pydantic.BaseModel):
    """Images, thinking and whatever else the API sends: only the type is checked."""

    model_config = _STRICT
    type: str = pydantic.Field(min_length=1)


_KNOWN: dict[str, type[pydantic.BaseModel]] = {"text": _TextBlock, "tool_use": _ToolUseBlock, "tool_result": _ToolResultBlock}


class _MessageModel(pydantic.BaseModel):
    model_config = _STRICT
    role: Literal["user", "assistant"]
    content: Union[str, list[dict[str, Any]]]

    @pydantic.field_validator("content")
    @classmethod
    def _blocks(cls, content: Any) -> Any:
        if isinstance(content, str):
            if not content.strip():
                raise ValueError("empty text")
            return content
        if not content:
            raise ValueError("no content blocks")
        for i, block in enumerate(content):
            try:
                _KNOWN.get(str(block.get("type")), _OtherBlock).model_validate(block)
            except pydantic.ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(x) for x in err.get("loc", ()))
                raise ValueError(f"block {i} ({block.get('type')!r}) {where}: {err.get('msg')}") from None
        return content


_HISTORY = pydantic.TypeAdapter(list[_MessageModel])


def _first_error(path: Path, exc: pydantic.ValidationError) -> CorruptFileError:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ())) or "(top level)"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return CorruptFileError(path, f"field {loc}: {err.get('msg')}{more}")


def check_meta(path: Path, meta: Any) -> None:
    """Raise :class:`CorruptFileError` naming the field when ``session.json`` has a wrong type."""
    try:
        _MetaModel.model_validate(meta)
    except pydantic.ValidationError as exc:
        raise _first_error(path, exc) from None


_RECORDS = pydantic.TypeAdapter(list[_RecordModel])


def check_records(path: Path, records: Any) -> None:
    """Raise :class:`CorruptFileError` naming the record and field of a malformed request log."""
    try:
        _RECORDS.validate_python(records)
    except pydantic.ValidationError as exc:
        raise _first_error(path, exc) from None


def check_history(path: Path, history: Any) -> None:
    """Raise :class:`CorruptFileError` naming the message and field of a malformed history."""
    try:
        _HISTORY.validate_python(history)
    except pydantic.ValidationError as exc:
        raise _first_error(path, exc) from None
