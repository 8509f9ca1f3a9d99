"""Secrets out of what a request shows while it runs: streamed deltas and error messages.

History and disk get the reply through :func:`~nbagent.engine.loop.sanitize.clean_reply`; the view gets
the stream's deltas before that, and error messages are built from whatever body the server sent
(a 401 can echo the key). Both pass here, through the one :class:`~nbagent.engine.loop.sanitize.Sanitizer`.
"""

from __future__ import annotations

import dataclasses
from contextlib import aclosing
from typing import AsyncIterator, Union

from ..contracts.errors import ApiError
from ..contracts.events import TextDelta, ThinkingDelta, ToolUseDelta
from ..contracts.provider import Chunk, MessageComplete
from .sanitize import Sanitizer, StreamRedactor


def redacted_error(error: ApiError, sanitizer: Sanitizer | None) -> ApiError:
    """``error`` with secrets (configured, or by shape) removed from its message (the same error
    when none occurs)."""
    if sanitizer is None:
        return error
    message = sanitizer.redact(error.message)
    if message == error.message:
        return error
    return ApiError(error.kind, message, status=error.status, retry_after_s=error.retry_after_s,
                    request_id=error.request_id)


Delta = Union[TextDelta, ThinkingDelta, ToolUseDelta]


def _with_text(delta: Delta, text: str) -> Delta:
    # Built directly: dataclasses.replace costs several times more, once per streamed delta.
    if type(delta) is TextDelta:
        return TextDelta(text=text, index=delta.index)
    if type(delta) is ToolUseDelta:
        return ToolUseDelta(tool_use_id=delta.tool_use_id, name=delta.name, partial_json=text, index=delta.index)
    if type(delta) is ThinkingDelta:
        return ThinkingDelta(text=text, index=delta.index)
    return dataclasses.replace(delta, partial_json=text) if isinstance(delta, ToolUseDelta) \
        else dataclasses.replace(delta, text=text)


def _text_of(delta: Delta) -> str:
    return delta.partial_json if isinstance(delta, ToolUseDelta) else delta.text


async def redacted_stream(stream: AsyncIterator[Chunk], sanitizer: Sanitizer) -> AsyncIterator[Chunk]:
    """``stream``'s chunks with secrets redacted from text, thinking and tool-input deltas.

    Blocks stream one after another, so a delta of another block (or the complete message) ends
    the held-back text of the previous one; text held back when the stream fails is dropped (it
    may be the start of a secret, and the partial reply never enters history anyway)."""
    redactor = StreamRedactor(sanitizer)
    last: dict[int, Delta] = {}  # index -> its latest delta, the shape a flushed rest is sent in
    previous = -1  # the block of the previous delta: the only one that can hold text back
    deltas = (TextDelta, ThinkingDelta, ToolUseDelta)
    async with aclosing(stream) as chunks:  # type: ignore[type-var]
        async for chunk in chunks:
            if isinstance(chunk, deltas):
                index = chunk.index
                if index != previous:
                    for held in redactor.held():  # at most one block: the previous delta's
                        yield _with_text(last[held], redactor.flush(held))
                    previous = index
                last[index] = chunk
                shown = redactor.feed(index, _text_of(chunk))
                if shown:
                    yield _with_text(chunk, shown)
                continue
            if isinstance(chunk, MessageComplete):
                for held in redactor.held():
                    yield _with_text(last[held], redactor.flush(held))
            yield chunk
