"""Building the request the model sees: kept pair + rest, stored updates, tool pairing repaired.

Nothing here mutates its input. For speed the result shares every message that needs no change
with the history (a request of 10,000 messages is not deep-copied on every turn); changed messages
are fresh copies that share their unchanged blocks. Treat the result as read-only: copy a message
before changing it (for example to add ``cache_control``).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..contracts.messages import (
    ContentBlock,
    Message,
    TextBlockParam,
    ToolResultBlockParam,
    is_text,
    is_tool_result,
    is_tool_use,
)
from .updates import ContextHistoryUpdates, ContextUpdate
from .window import RangeLike, sent_position, start_of_rest

# Said to the model (and shown in the view): why a tool call has no real result.
RESULT_MISSING = ("result missing: this tool call's result is not in the conversation (the run was stopped, or the "
                  "message holding it was removed with older history)")
# A user message whose only blocks were tool results of hidden (or unknown) tool calls would be
# left empty, which the Messages API rejects; this short text takes their place.
ORPHANED_RESULTS_NOTICE = "[NOTE] Tool results of removed conversation history were omitted."


class RequestMemo:
    """Reusable results of earlier builds, for a session that builds nearly the same request
    every turn.

    ``edits``/``strip``/``pairs`` keep changed copies of messages by the identity of their source,
    so the copies keep their identity too (and per-message token caches hit). ``last`` is the
    previous request: when the history has only grown since, the next request is that one plus
    the new messages, with the pairing repair re-run from the last assistant message only.
    Holding the source objects (not just their ids) keeps an id from being reused while cached.
    """

    __slots__ = ("edits", "strip", "pairs", "last")

    def __init__(self) -> None:
        self.edits: dict[int, tuple[Message, int, Message]] = {}
        self.strip: tuple[Message, Message] | None = None
        self.pairs: dict[int, tuple[Message, list[str], list[Message]]] = {}
        self.last: _LastBuild | None = None

    def clear(self) -> None:
        self.edits.clear()
        self.strip = None
        self.pairs.clear()
        self.last = None


class _LastBuild:
    """The previous request and what it was built from."""

    __slots__ = ("updates", "clock", "start_from", "head", "rest", "pre", "out", "resume_pre", "resume_out")

    def __init__(self, updates: ContextHistoryUpdates | None, clock: int, start_from: int, head: list[Message],
                 rest: list[Message], pre: list[Message], out: list[Message], resume_pre: int, resume_out: int) -> None:
        self.updates, self.clock, self.start_from = updates, clock, start_from
        self.head, self.rest = head, rest  # source messages 0-1 and start_from…
        self.pre, self.out = pre, out  # before and after the pairing repair
        # out[:resume_out] is the repair of pre[:resume_pre]; pre[resume_pre] is an assistant
        # message after a user message, where the repair can restart with no state.
        self.resume_pre, self.resume_out = resume_pre, resume_out


def get_truncated_messages(
    messages: Sequence[Message],
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
    messages: Sequence[Message],
    deleted_range: RangeLike,
    updates: ContextHistoryUpdates | None,
    memo: RequestMemo | None = None,
) -> list[Message]:
    """:func:`get_truncated_messages`, reusing ``memo`` across calls when given."""
    source = messages if isinstance(messages, list) else list(messages)
    n = len(source)
    if n <= 1:
        return list(source)
    # Cline would slice from end + 1 even for an end below 1 and send messages 0-1 twice.
    start_from = max(start_of_rest(deleted_range), 2)
    clock = updates.clock if updates is not None else -1
    if memo is not None and memo.last is not None:
        grown = _extend_last(memo, source, start_from, updates, clock)
        if grown is not None:
            return grown
    pre: list[Message] = source[0:2] + source[start_from:]
    if updates is not None and len(updates):
        for index in (*updates.indices_between(0, 2), *updates.indices_between(start_from, n)):
            position = sent_position(index, deleted_range)
            pre[position] = edited_message(source[index], index, updates, memo)
    if start_from > 2 and len(pre) > 2:
        pre[2] = without_tool_results(pre[2], memo)
    if memo is None:
        return _ensure(pre, None)
    resume = _resume_point(pre, 0)
    out = _ensure(pre[:resume], memo)
    resume_out = len(out)
    out += _ensure(pre[resume:], memo)
    memo.last = _LastBuild(updates, clock, start_from, source[0:2], source[start_from:], pre, out, resume, resume_out)
    return list(out)  # the caller may change its list; the memo keeps its own


def _extend_last(
    memo: RequestMemo, source: list[Message], start_from: int, updates: ContextHistoryUpdates | None, clock: int
) -> list[Message] | None:
    """The previous request plus what was appended to the history since, or None when anything
    else changed (range, updates, or any kept message: checked by identity at C speed)."""
    last = memo.last
    assert last is not None
    n_prev = start_from + len(last.rest)
    if (
        last.updates is not updates
        or last.clock != clock
        or last.start_from != start_from
        or not last.rest
        or len(source) < n_prev
        or source[n_prev - 1] is not last.rest[-1]
        or source[0:2] != last.head
        or source[start_from:n_prev] != last.rest  # list == compares identity first, in C
    ):
        return None
    added = source[n_prev:]
    new = added
    stale_updates = updates.indices_between(n_prev, len(source)) if updates is not None else ()
    if stale_updates and updates is not None:  # updates recorded for indices the history had not reached yet
        new = list(added)
        for index in stale_updates:
            new[index - n_prev] = edited_message(source[index], index, updates, memo)
    # The memo owns rest/pre/out (callers only ever get copies), so they grow in place.
    last.rest.extend(added)
    pre = last.pre
    pre.extend(new)
    resume = _resume_point(pre, last.resume_pre)
    out = last.out
    del out[last.resume_out:]
    out.extend(_ensure(pre[last.resume_pre : resume], memo))
    last.resume_pre, last.resume_out = resume, len(out)
    out.extend(_ensure(pre[resume:], memo))
    return list(out)


def _resume_point(pre: list[Message], floor: int) -> int:
    """The last index ≥ ``floor`` of an assistant message that follows a user message (the
    repair restarts cleanly there), else ``floor``."""
    for i in range(len(pre) - 1, max(floor, 1) - 1, -1):
        if pre[i].get("role") == "assistant" and pre[i - 1].get("role") == "user":
            return i
    return floor


def ensure_tool_results_follow_tool_use(messages: Sequence[Message]) -> list[Message]:
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
    message: Message, index: int, updates: ContextHistoryUpdates, memo: RequestMemo | None = None
) -> Message:
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


def apply_block_updates(message: Message, latest: Mapping[int, ContextUpdate]) -> Message:
    """``message`` with each block's winning update applied (the message itself if none apply).

    String content is never edited. A ``"text"`` update sets a text block's text, a
    ``tool_result``'s content, or a ``tool_use``'s ``input["content"]`` (how a superseded
    ``write_file`` is shortened).
    """
    content = message.get("content")
    if not isinstance(content, list) or not latest:
        return message
    new_content: list[ContentBlock] | None = None
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


def replace_block_text(block: ContentBlock, text: str) -> ContentBlock | None:
    """A copy of ``block`` whose replaceable text is ``text``, or None if it has none."""
    if is_text(block):
        return {**block, "text": text}  # the same block, its text replaced
    if is_tool_result(block):
        return {**block, "content": text}
    if is_tool_use(block):
        tool_input = block.get("input")
        if isinstance(tool_input, (dict, Mapping)) and "content" in tool_input:
            return {**block, "input": {**tool_input, "content": text}}
    return None


# -- tool pairing --------------------------------------------------------------------------------


def without_tool_results(message: Message, memo: RequestMemo | None) -> Message:
    """The first kept message without tool results (their tool calls were hidden); public for
    :mod:`.as_sent`."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return message
    if not any(is_tool_result(b) for b in content):
        return message
    if memo is not None and memo.strip is not None and memo.strip[0] is message:
        return memo.strip[1]
    kept = [b for b in content if not is_tool_result(b)]
    stripped: Message = {**message, "content": kept or [_orphan_note()]}
    if memo is not None:
        memo.strip = (message, stripped)
    return stripped


def _orphan_note() -> TextBlockParam:
    return {"type": "text", "text": ORPHANED_RESULTS_NOTICE}


def _tool_use_ids(message: Message) -> list[str]:
    if message.get("role") != "assistant":
        return []
    content = message.get("content")
    if not isinstance(content, list):
        return []
    ids = [b.get("id") for b in content if is_tool_use(b)]
    # dict.fromkeys: a repeated id is answered once (the API rejects repeats anyway).
    return list(dict.fromkeys(i for i in ids if isinstance(i, str)))


def _ensure(messages: list[Message], memo: RequestMemo | None) -> list[Message]:
    out: list[Message] = []
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


def _fixed_run(ids: list[str], run: list[Message], memo: RequestMemo | None) -> list[Message]:
    """A run of user messages after an assistant message calling ``ids``, repaired: the first one
    starts with one result per call (a missing one made up), results elsewhere are dropped."""
    if _run_is_fine(ids, run):
        return run
    # Memoise only the common one-message run (keyed by the message and its tool_use ids).
    memoised = memo is not None and len(run) == 1
    if memo is not None and memoised:
        hit = memo.pairs.get(id(run[0]))
        if hit is not None and hit[0] is run[0] and hit[1] == ids:
            return hit[2]
    results = _results_for(ids, run)
    fixed = [_with_answers(message, [results.get(t) or _missing(t) for t in ids] if k == 0 else [])
             for k, message in enumerate(run)]
    if memo is not None and memoised:
        if len(memo.pairs) > 4096:  # bounded: entries for long-gone messages are not worth keeping
            memo.pairs.clear()
        memo.pairs[id(run[0])] = (run[0], list(ids), fixed)
    return fixed


def _results_for(ids: list[str], run: list[Message]) -> dict[str, ToolResultBlockParam]:
    """The run's results for the calls ``ids``, by id (a later duplicate replaces an earlier one)."""
    wanted = set(ids)
    results: dict[str, ToolResultBlockParam] = {}
    for message in run:
        content = message.get("content")
        if isinstance(content, list):
            for b in content:
                if is_tool_result(b) and b.get("tool_use_id") in wanted:
                    results[b["tool_use_id"]] = b
    return results


def _with_answers(message: Message, answers: list[ToolResultBlockParam]) -> Message:
    """``message`` with ``answers`` first and no other tool results (itself if nothing changes)."""
    content = message.get("content")
    if not isinstance(content, list):
        if not answers:
            return message  # string content holds no results: nothing to repair
        others: list[ContentBlock] = [TextBlockParam(type="text", text=content)] if content else []
    else:
        others = [b for b in content if not is_tool_result(b)]
    new_content: list[ContentBlock] = [*answers, *others]
    if isinstance(content, list) and len(new_content) == len(content) and all(
        a is b for a, b in zip(new_content, content, strict=True)
    ):
        return message
    return {**message, "content": new_content or [_orphan_note()]}


def _run_is_fine(ids: list[str], run: list[Message]) -> bool:
    """Fast check (no copying) that a user run already satisfies the pairing rules."""
    first = run[0].get("content")
    if ids:
        if not isinstance(first, list) or len(first) < len(ids):
            return False
        for k, t in enumerate(ids):
            b = first[k]
            if not is_tool_result(b) or b.get("tool_use_id") != t:
                return False
        rest: Sequence[ContentBlock] = first[len(ids):]
    else:
        rest = first if isinstance(first, list) else ()
    if any(is_tool_result(b) for b in rest):
        return False
    for message in run[1:]:
        content = message.get("content")
        if isinstance(content, list) and any(is_tool_result(b) for b in content):
            return False
    return True


def _missing(tool_use_id: str) -> ToolResultBlockParam:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": RESULT_MISSING}
