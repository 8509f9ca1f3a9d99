"""What a request built now sends of each history message, for the views that say what the model
still sees (``messages_df``, the explorers' strips): measured with the builder the loop uses."""

from __future__ import annotations

from typing import Sequence

from ..contracts.messages import Message, content_blocks, is_tool_result
from .request import build_request, edited_message, without_tool_results
from .updates import ContextHistoryUpdates
from .window import RangeLike, start_of_rest


def results_omitted_index(messages: Sequence[Message], deleted_range: RangeLike) -> int | None:
    """The history index of the first message after the hidden range when the request sends it
    without its tool results (their tool calls were hidden), else None.

    The views that say what the model still sees (``messages_df``) mark it: its results were not sent.
    """
    start = start_of_rest(deleted_range)
    if start <= 2 or start >= len(messages):
        return None
    message = messages[start]
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return None
    return start if any(is_tool_result(b) for b in content) else None


def sent_form(
    messages: Sequence[Message], index: int, deleted_range: RangeLike, updates: ContextHistoryUpdates | None
) -> Message:
    """History message ``index`` (not hidden) as a request built now sends it: after its stored
    updates (masked results, replaced reads, notices), and without tool results whose calls were
    hidden (:func:`results_omitted_index`). The pairing repair's placeholders are not included."""
    message = messages[index]
    if updates is not None:
        message = edited_message(message, index, updates)
    return without_tool_results(message, None) if index == results_omitted_index(messages, deleted_range) else message


def sent_by_index(
    messages: Sequence[Message], deleted_range: RangeLike, updates: ContextHistoryUpdates | None
) -> dict[int, Message]:
    """Each history message a request built now sends, as :func:`build_request` sends it (updates,
    stripped results, the pairing repair's placeholders), by history index. When the repair inserted
    a message (an assistant tool call followed by another assistant message), as :func:`sent_form`
    says (without the repair), since the request no longer lines up with the history."""
    n = len(messages)
    kept = [*range(min(n, 2)), *range(max(start_of_rest(deleted_range), 2), n)]
    built = build_request(messages, deleted_range, updates)
    if len(built) != len(kept):
        built = [sent_form(messages, i, deleted_range, updates) for i in kept]
    return dict(zip(kept, built, strict=True))


def results_omitted_in(hist: Sequence[Message], rng: RangeLike, sent: Sequence[Message]) -> int | None:
    """The history index whose tool results the request left out (their calls hidden), checked
    against ``sent``, the request built for ``hist`` (the explorer's summary request is built otherwise)."""
    index = results_omitted_index(hist, rng)
    if index is None:
        return None
    ids = {b.get("tool_use_id") for b in content_blocks(hist[index]) if is_tool_result(b)}
    # Only where the message is sent (aligned from the end; the pairing repair rarely inserts one):
    # a scan of the whole request per simulated request made the simulation of a long session 1.6-1.9x slower.
    at = len(sent) - (len(hist) - index)
    near = sent[max(at - 2, 0):max(at + 3, 0)]
    return None if any(is_tool_result(b) and b.get("tool_use_id") in ids for m in near for b in content_blocks(m)) \
        else index
