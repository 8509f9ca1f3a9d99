"""Structured file-read de-duplication (better than Cline).

Cline finds file reads with regexes over its own tool-result text. nbagent knows its tools, so a
*file read* is one of:

- the ``tool_result`` of a ``read_file`` tool_use (path from ``input["path"]``, normalised);
- the final content of a ``write_file`` (its ``input["content"]``) or ``edit_file`` (its
  ``tool_result`` content) tool_use;
- a ``<file_content path="…">…</file_content>`` mention in the text of a user message.

What carries no file content is not a read: failed tool calls (``is_error``), a ``read_file``
answered "… is unchanged since the read at turn N; …" (``nbagent.engine.context.file_state``), and an
``edit_file`` result of one line — nbagent's ``edit_file`` answers "Edited x: replaced 1
occurrence…", and letting that supersede an earlier full read would leave the model with no copy
of the file. An ``edit_file`` result that returns the final content (several lines) counts. For
every path read two or more times after the hidden range, all but
the last occurrence are replaced by :data:`DUPLICATE_FILE_READ_NOTICE`. A ``read_file`` with extra
arguments (an offset, a line range) is a *partial* read: only a later whole-file read or a later
read with the same arguments supersedes it. Reads are ordered as they happened: by turn, then by
the order of the tool calls, then mentions.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Literal, Mapping, Sequence, cast

from ..contracts.messages import (
    ContentBlock,
    Message,
    TextBlockParam,
    ToolResultBlockParam,
    is_text,
    is_tool_result,
    is_tool_use,
    tool_result_text,
)
from .request import RequestMemo, edited_message, replace_block_text
from .updates import DUPLICATE_FILE_READ_NOTICE, ContextHistoryUpdates, EditType

READ_TOOLS = frozenset({"read_file"})
WRITE_TOOLS = frozenset({"write_file"})
EDIT_TOOLS = frozenset({"edit_file"})
_PATH_KEYS = ("path", "file_path")
_MENTION = re.compile(r'<file_content path="([^"]*)">([\s\S]*?)</file_content>')
# nbagent's read_file answer for a file the model already saw unchanged (FileStateCache.check_read):
# one line, no content to keep.
UNCHANGED_READ = re.compile(r"[^\n]*\bis unchanged since the read at turn \d+\b[^\n]*")

Target = Literal["tool_result", "tool_use", "mention"]


@dataclass(frozen=True, slots=True)
class FileRead:
    """One occurrence of a file's content in the history."""

    path: str  # normalised with os.path.normpath
    scope: str | None  # None: the whole file; else the extra read_file arguments, as JSON
    message_index: int
    block_index: int
    edit_type: int
    target: Target
    raw_path: str = ""  # mentions: the path as written (kept in the replacement)
    match: str = ""  # mentions: the whole <file_content …>…</file_content> text
    ordinal: int = 0  # mentions: earlier mentions of the same path in the same block
    replaceable: bool = True  # False for mentions in string content, which is never edited


@dataclass(frozen=True)
class DedupOutcome:
    """What one de-duplication pass changed."""

    replaced: frozenset[int]  # message indices that got a new update
    characters_saved: int  # may be negative: a notice longer than a tiny file


class FileReadCache:
    """Reads found per user message (keyed by the identity of that message and the one before)
    and character counts per message object.

    The pass runs whenever truncation is considered; with the cache it costs a dictionary lookup
    per kept message instead of re-parsing every tool result and mention. Holding the objects
    keeps their ids from being reused while cached.
    """

    __slots__ = ("_by_index", "_chars")

    def __init__(self) -> None:
        self._by_index: dict[int, tuple[Message | None, Message, bool, tuple[FileRead, ...]]] = {}
        self._chars: dict[int, tuple[Message, int]] = {}

    def reads(self, prev: Message | None, message: Message, index: int, results_hidden: bool) -> tuple[FileRead, ...]:
        hit = self._by_index.get(index)
        if hit is not None and hit[0] is prev and hit[1] is message and hit[2] == results_hidden:
            return hit[3]
        found = reads_in_message(prev, message, index, results_hidden)
        self._by_index[index] = (prev, message, results_hidden, found)
        return found

    def chars(self, message: Message) -> int:
        hit = self._chars.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        count = message_chars(message)
        if len(self._chars) > 200_000:
            self._chars.clear()
        self._chars[id(message)] = (message, count)
        return count

    def clear(self) -> None:
        self._by_index.clear()
        self._chars.clear()


def reads_in_message(
    prev: Message | None, message: Message, index: int, results_hidden: bool = False
) -> tuple[FileRead, ...]:
    """The file reads a user message completes, in the order they happened.

    ``prev`` is the message before (the assistant whose tool calls this message answers).
    ``results_hidden`` says that ``prev`` is hidden, so this message's tool results are stripped
    from the request and do not count. A ``write_file`` read lives in ``prev`` (index − 1) and
    counts only when that is not message 1, which the pass never edits.
    """
    if message.get("role") != "user":
        return ()
    content = message.get("content")
    found: list[FileRead] = []
    if isinstance(content, list) and not results_hidden and prev is not None and prev.get("role") == "assistant":
        found.extend(_tool_reads(prev, content, index))
    if isinstance(content, str):
        found.extend(_mentions(content, index, -1, replaceable=False))
    elif isinstance(content, list):
        for j, block in enumerate(content):
            if is_text(block) and isinstance(block.get("text"), str):
                found.extend(_mentions(block["text"], index, j, replaceable=True))
    return tuple(found)


def _tool_reads(prev: Message, content: list[ContentBlock], index: int) -> list[FileRead]:
    prev_content = prev.get("content")
    if not isinstance(prev_content, list):
        return []
    results: dict[str, tuple[int, ToolResultBlockParam]] = {}
    for j, block in enumerate(content):
        if is_tool_result(block):
            results[block.get("tool_use_id", "")] = (j, block)  # the last duplicate is the one sent
    found: list[FileRead] = []
    for j_use, use in enumerate(prev_content):
        if not is_tool_use(use):
            continue
        answer = results.get(use.get("id", ""))
        tool_input = use.get("input")
        if answer is None or answer[1].get("is_error") or not isinstance(tool_input, (dict, Mapping)):
            continue
        path = _input_path(tool_input)
        if path is None:
            continue
        name = use.get("name")
        j_result, result = answer
        if name in READ_TOOLS:
            if UNCHANGED_READ.fullmatch(tool_result_text(result).strip()):
                continue
            found.append(FileRead(path, _scope(tool_input), index, j_result, EditType.READ_FILE_TOOL, "tool_result"))
        elif name in WRITE_TOOLS:
            if isinstance(tool_input.get("content"), str) and index - 1 >= 2:
                found.append(FileRead(path, None, index - 1, j_use, EditType.ALTER_FILE_TOOL, "tool_use"))
        elif name in EDIT_TOOLS and "\n" in tool_result_text(result).strip():
            found.append(FileRead(path, None, index, j_result, EditType.ALTER_FILE_TOOL, "tool_result"))
    return found


def _input_path(tool_input: Mapping[str, object]) -> str | None:
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return os.path.normpath(value)
    return None


def _scope(tool_input: Mapping[str, object]) -> str | None:
    extra = {k: v for k, v in tool_input.items() if k not in _PATH_KEYS and v is not None}
    if extra.get("offset") == 1 and "limit" not in extra:
        del extra["offset"]  # read_file's lines are 1-based: from line 1 to the end is the whole file
    return json.dumps(extra, sort_keys=True, default=str) if extra else None


def _mentions(text: str, index: int, block_index: int, *, replaceable: bool) -> list[FileRead]:
    if "<file_content" not in text:  # cheap guard: most text has no mention
        return []
    found: list[FileRead] = []
    seen: dict[str, int] = {}
    for m in _MENTION.finditer(text):
        raw = m.group(1)
        ordinal = seen.get(raw, 0)
        seen[raw] = ordinal + 1
        found.append(
            FileRead(os.path.normpath(raw) if raw else raw, None, index, block_index, EditType.FILE_MENTION,
                     "mention", raw_path=raw, match=m.group(0), ordinal=ordinal, replaceable=replaceable)
        )
    return found


# -- choosing and recording ----------------------------------------------------------------------


def is_live(read: FileRead, updates: ContextHistoryUpdates) -> bool:
    """Whether the read is still shown in full (no stored update has replaced it)."""
    latest = updates.latest(read.message_index, read.block_index)
    if latest is None:
        return True
    if read.target != "mention":
        return False
    replaced = latest.metadata[0] if latest.metadata else ()
    return read.ordinal >= replaced.count(read.raw_path)


def superseded(reads: Sequence[FileRead]) -> list[FileRead]:
    """The replaceable reads that a later read of the same file makes redundant (in order)."""
    later_whole: set[str] = set()
    later_partial: set[tuple[str, str]] = set()
    out: list[FileRead] = []
    for read in reversed(reads):
        if read.replaceable and (
            read.path in later_whole or (read.scope is not None and (read.path, read.scope) in later_partial)
        ):
            out.append(read)
        if read.scope is None:
            later_whole.add(read.path)
        else:
            later_partial.add((read.path, read.scope))
    out.reverse()
    return out


def deduplicate_file_reads(
    messages: Sequence[Message],
    start_from: int,
    updates: ContextHistoryUpdates,
    ts: float,
    *,
    cache: FileReadCache | None = None,
) -> DedupOutcome:
    """Record a notice update (at ``ts``) for every superseded read in ``messages[start_from:]``.

    Mutates only ``updates``. Returns the message indices changed and the characters saved.
    """
    cache = cache if cache is not None else FileReadCache()
    start_from = max(start_from, 2)
    reads: list[FileRead] = []
    for k in range(start_from, len(messages)):
        message = messages[k]
        if message.get("role") != "user":
            continue
        prev = messages[k - 1] if k >= 1 else None
        for read in cache.reads(prev, message, k, results_hidden=(k == start_from and start_from > 2)):
            if is_live(read, updates):
                reads.append(read)
    doomed = superseded(reads)
    saved = 0
    replaced: set[int] = set()
    mention_blocks: dict[tuple[int, int], list[FileRead]] = {}
    for read in doomed:
        if read.target == "mention":
            mention_blocks.setdefault((read.message_index, read.block_index), []).append(read)
            continue
        block = _block_at(messages, read.message_index, read.block_index)
        new_block = replace_block_text(block, DUPLICATE_FILE_READ_NOTICE)
        if new_block is None:
            continue
        saved += block_chars(block) - block_chars(new_block)
        updates.add(read.message_index, read.block_index, ts, DUPLICATE_FILE_READ_NOTICE, edit_type=read.edit_type)
        replaced.add(read.message_index)
    for (mi, bj), block_reads in mention_blocks.items():
        original = cast(TextBlockParam, _block_at(messages, mi, bj))["text"]  # mentions are in text blocks
        latest = updates.latest(mi, bj)
        text = latest.text if latest is not None else original
        replaced_paths = list(latest.metadata[0]) if latest is not None and latest.metadata else []
        before = len(text)
        for read in block_reads:
            notice = f'<file_content path="{read.raw_path}">{DUPLICATE_FILE_READ_NOTICE}</file_content>'
            text = text.replace(read.match, notice, 1)
            replaced_paths.append(read.raw_path)
        all_paths = [m.group(1) for m in _MENTION.finditer(original)]
        saved += before - len(text)
        updates.add(mi, bj, ts, text, edit_type=EditType.FILE_MENTION, metadata=[replaced_paths, all_paths])
        replaced.add(mi)
    return DedupOutcome(frozenset(replaced), saved)


def _block_at(messages: Sequence[Message], index: int, block: int) -> ContentBlock:
    """The block a read was found in: reads are only found in list content."""
    return cast("list[ContentBlock]", messages[index]["content"])[block]


# -- characters --------------------------------------------------------------------------------


def block_chars(block: ContentBlock) -> int:
    """Characters a block puts in the prompt; images count their base64 length."""
    match block:
        case {"type": "text", "text": str(text)}:
            return len(text)
        case {"type": "image", "source": {"type": "base64", "data": str(data)}}:
            return len(data)
        case {"type": "tool_result", "content": str(content)}:
            return len(content)
        case {"type": "tool_result", "content": list(content)}:
            return sum(block_chars(b) for b in content)
        case {"type": "tool_use", **fields}:
            name = fields.get("name")
            return (len(name) if isinstance(name, str) else 0) + _leaf_chars(fields.get("input"))
        case {"type": "thinking", "thinking": str(text)} | {"type": "redacted_thinking", "data": str(text)}:
            return len(text)
    return 0


def _leaf_chars(value: object) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (dict, Mapping)):
        return sum(_leaf_chars(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_leaf_chars(v) for v in value)
    return 0


def message_chars(message: Message) -> int:
    """Characters of a whole message (see :func:`block_chars`)."""
    content = message.get("content")
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(block_chars(b) for b in content)
    return 0


def percent_saved(
    messages: Sequence[Message],
    start_from: int,
    updates: ContextHistoryUpdates,
    characters_saved: int,
    *,
    memo: RequestMemo | None = None,
    cache: FileReadCache | None = None,
) -> float:
    """``saved / total`` over messages 0-1 and ``messages[start_from:]``, where the total is taken
    before this pass's updates (what the request would have held without them)."""
    start_from = max(start_from, 2)
    count = cache.chars if cache is not None else message_chars
    total = characters_saved
    for index in (*range(min(2, len(messages))), *range(start_from, len(messages))):
        total += count(edited_message(messages[index], index, updates, memo))
    return characters_saved / total if total else 0.0
