"""Building the request the model sees: kept pair + rest, stored updates, tool pairing repaired.

Nothing here mutates its input. For speed the result shares every message that needs no change
with the history (a request of 10,000 messages is not deep-copied on every turn); changed messages
are fresh copies that share their unchanged blocks. Treat the result as read-only: copy a message
before changing it (for example to add ``cache_control``).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .context_updates import ContextHistoryUpdates, ContextUpdate
from .context_window import RangeLike, start_of_rest

Message = dict[str, Any]

RESULT_MISSING = "result missing"
# A user message whose only blocks were tool results of hidden (or unknown) tool calls would be
# left empty, which the Messages API rejects; this short text takes their place.
ORPHANED_RESULTS_NOTICE = "[NOTE] Tool results of removed conversation history were omitted."


class RequestMemo:
    """Reusable results of earlier builds, keyed by the identity of the source messages.

    A session builds nearly the same request every turn; reusing the edited copies keeps their
    identity stable, so per-message token caches hit as well. Holding the source objects (not
    just their ids) keeps an id from being reused by another message while it is cached.
    """

    __slots__ = ("edits", "strip", "pairs")

    def __init__(self) -> None:
        self.edits: dict[int, tuple[Mapping[str, Any], int, Message]] = {}
        self.strip: tuple[Mapping[str, Any], Message] | None = None
        self.pairs: dict[int, tuple[Mapping[str, Any], Mapping[str, Any], list[Message]]] = {}

    def clear(self) -> None:
        self.edits.clear()
        self.strip = None
        self.pairs.clear()


def get_truncated_messages(
    messages: Sequence[Mapping[str, Any]],
    deleted_range: RangeLike,
    updates: ContextHistoryUpdates | None = None,
) -> list[Message]:
    """The request for ``messages`` with ``deleted_range`` hidden (same as Cline, repaired).

    Keeps ``messages[0:2] + messages[end + 1:]`` (the range start is ignored; a stale range never
    re-includes 0 and 1 twice), strips the tool results of the first kept message when their
    tool calls were hidden, applies the stored ``updates`` by original index, then
    :func:`ensure_tool_results_follow_tool_use`.
    """
    return build_request(messages, deleted_range, updates)


def build_request(
    messages: Sequence[Mapping[str, Any]],
    deleted_range: RangeLike,
    updates: ContextHistoryUpdates | None,
    memo: RequestMemo | None = None,
) -> list[Message]:
    """:func:`get_truncated_messages`, reusing ``memo`` across calls when given."""
    source = messages if isinstance(messages, list) else list(messages)
    if len(source) <= 1:
        return list(source)  # type: ignore[arg-type]
    # Cline would slice from end + 1 even for an end below 1 and send messages 0-1 twice.
    start_from = max(start_of_rest(deleted_range), 2)
    out: list[Any] = source[0:2] + source[start_from:]
    if updates is not None and len(updates):
        for index in (*updates.indices_between(0, 2), *updates.indices_between(start_from, len(source))):
            position = index if index < 2 else index - start_from + 2
            out[position] = edited_message(source[index], index, updates, memo)
    if start_from > 2 and len(out) > 2:
        out[2] = _stripped(out[2], memo)
    return _ensure(out, memo)


def ensure_tool_results_follow_tool_use(messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Repair tool pairing so the Messages API accepts the conversation (pure).

    After an assistant message with ``tool_use`` blocks, the next user message starts with one
    ``tool_result`` per ``tool_use`` in the same order: a missing one becomes ``"result missing"``,
    results for unknown ids are dropped, of duplicates the last is kept, other blocks follow in
    their order, and a plain-string reply is kept as a text block after the results (Cline drops
    it). A trailing assistant ``tool_use`` is left alone. Beyond Cline: results are gathered from
    the whole run of user messages that follows, ``tool_result`` blocks with no ``tool_use`` before
    them are dropped anywhere, and an assistant ``tool_use`` followed by another assistant message
    gets a user message of missing results in between.
    """
    return _ensure(list(messages), None)


# -- stored updates ------------------------------------------------------------------------------


def edited_message(
    message: Mapping[str, Any], index: int, updates: ContextHistoryUpdates, memo: RequestMemo | None = None
) -> Any:
    """History message ``index`` as the model sees it after its stored updates (memoised)."""
    if index not in updates:
        return message
    version = updates.version(index)
    if memo is not None:
        hit = memo.edits.get(index)
        if hit is not None and hit[0] is message and hit[1] == version:
            return hit[2]
    edited = apply_block_updates(message, updates.latest_by_block(index))
    if memo is not None:
        memo.edits[index] = (message, version, edited)
    return edited


def apply_block_updates(message: Mapping[str, Any], latest: Mapping[int, ContextUpdate]) -> Any:
    """``message`` with each block's winning update applied (the message itself if none apply).

    String content is never edited. A ``"text"`` update sets a text block's text, a
    ``tool_result``'s content, or a ``tool_use``'s ``input["content"]`` (how a superseded
    ``write_file`` is shortened).
    """
    content = message.get("content")
    if not isinstance(content, list) or not latest:
        return message
    new_content: list[Any] | None = None
    for block_index, update in latest.items():
        if update.kind != "text" or not 0 <= block_index < len(content):
            continue
        block = replace_block_text(content[block_index], update.text)
        if block is None:
            continue
        if new_content is None:
            new_content = list(content)
        new_content[block_index] = block
    if new_content is None:
        return message
    return {**message, "content": new_content}


def replace_block_text(block: Any, text: str) -> dict[str, Any] | None:
    """A copy of ``block`` whose replaceable text is ``text``, or None if it has none."""
    if not isinstance(block, Mapping):
        return None
    kind = block.get("type")
    if kind == "text":
        return {**block, "text": text}
    if kind == "tool_result":
        return {**block, "content": text}
    if kind == "tool_use" and isinstance(block.get("input"), Mapping) and "content" in block["input"]:
        return {**block, "input": {**block["input"], "content": text}}
    return None


# -- tool pairing --------------------------------------------------------------------------------


def _stripped(message: Any, memo: RequestMemo | None) -> Any:
    """The first kept message without tool results (their tool calls were hidden)."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return message
    if not any(_is_result(b) for b in content):
        return message
    if memo is not None and memo.strip is not None and memo.strip[0] is message:
        return memo.strip[1]
    kept = [b for b in content if not _is_result(b)]
    stripped = {**message, "content": kept or [_orphan_note()]}
    if memo is not None:
        memo.strip = (message, stripped)
    return stripped


def _is_result(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "tool_result"


def _orphan_note() -> dict[str, Any]:
    return {"type": "text", "text": ORPHANED_RESULTS_NOTICE}


def _tool_use_ids(message: Mapping[str, Any]) -> list[str]:
    if message.get("role") != "assistant":
        return []
    content = message.get("content")
    if not isinstance(content, list):
        return []
    ids = [b.get("id") for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"]
    # dict.fromkeys: a repeated id is answered once (the API rejects repeats anyway).
    return list(dict.fromkeys(i for i in ids if isinstance(i, str)))


def _ensure(messages: list[Any], memo: RequestMemo | None) -> list[Message]:
    out: list[Any] = []
    n = len(messages)
    i = 0
    ids: list[str] = []  # tool_use ids of the assistant message before the current user run
    while i < n:
        message = messages[i]
        if message.get("role") != "user":
            out.append(message)
            ids = _tool_use_ids(message)
            i += 1
            if ids and i < n and messages[i].get("role") != "user":
                out.append({"role": "user", "content": [_missing(t) for t in ids]})
                ids = []
            continue
        j = i
        while j < n and messages[j].get("role") == "user":
            j += 1
        out.extend(_fixed_run(ids, messages[i:j], memo))
        ids = []
        i = j
    return out


def _fixed_run(ids: list[str], run: list[Any], memo: RequestMemo | None) -> list[Any]:
    if _run_is_fine(ids, run):
        return run
    # Memoise only the common one-message run (keyed by the message and its tool_use ids).
    key = id(run[0])
    if memo is not None and len(run) == 1:
        hit = memo.pairs.get(key)
        if hit is not None and hit[0] is run[0] and hit[1] == ids:
            return hit[2]
    wanted = set(ids)
    results: dict[str, Any] = {}
    for message in run:
        content = message.get("content")
        if isinstance(content, list):
            for b in content:
                if _is_result(b) and b.get("tool_use_id") in wanted:
                    results[b["tool_use_id"]] = b  # a later duplicate replaces an earlier one
    fixed: list[Any] = []
    for k, message in enumerate(run):
        content = message.get("content")
        answers = [results.get(t) or _missing(t) for t in ids] if k == 0 else []
        if not isinstance(content, list):
            if not answers:
                fixed.append(message)  # string content holds no results: nothing to repair
                continue
            others = [{"type": "text", "text": content}] if content else []
        else:
            others = [b for b in content if not _is_result(b)]
        new_content = answers + others
        if isinstance(content, list) and len(new_content) == len(content) and all(
            a is b for a, b in zip(new_content, content)
        ):
            fixed.append(message)
        else:
            fixed.append({**message, "content": new_content or [_orphan_note()]})
    if memo is not None and len(run) == 1:
        if len(memo.pairs) > 4096:  # bounded: entries for long-gone messages are not worth keeping
            memo.pairs.clear()
        memo.pairs[key] = (run[0], list(ids), fixed)
    return fixed


def _run_is_fine(ids: list[str], run: list[Any]) -> bool:
    """Fast check (no copying) that a user run already satisfies the pairing rules."""
    first = run[0].get("content")
    if ids:
        if not isinstance(first, list) or len(first) < len(ids):
            return False
        for k, t in enumerate(ids):
            b = first[k]
            if not _is_result(b) or b.get("tool_use_id") != t:
                return False
        rest: Any = first[len(ids):]
    else:
        rest = first if isinstance(first, list) else ()
    if any(_is_result(b) for b in rest):
        return False
    for message in run[1:]:
        content = message.get("content")
        if isinstance(content, list) and any(_is_result(b) for b in content):
            return False
    return True


def _missing(tool_use_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": RESULT_MISSING}
