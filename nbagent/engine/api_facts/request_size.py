"""The Messages API's limit on the size of one request: :data:`MAX_REQUEST_BYTES` (a larger one is
answered 413 ``request_too_large``).

Images are what makes a request that large. Each is checked alone where a tool returns it (at most
5 MB, :func:`~.images.refused_image`), but they add up in the history: seven 4.9 MB screenshots of
a browser MCP server made every later request a 413, which the loop takes for a context overflow
(it hid history, text and all, a quarter at a time). The request sent carries instead, in place of
its oldest images while its images come to more than :data:`MAX_REQUEST_IMAGE_CHARS`, a line saying
what became of each; the history keeps them (a later request with fewer sends them).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..contracts.messages import Message
from .images import image_data
from .tokens import image_totals

MAX_REQUEST_BYTES = 32 * 1024 * 1024
"""The most bytes one Messages API request may hold."""
MAX_REQUEST_IMAGE_CHARS = 24 * 1024 * 1024
"""The most base64 image data a request carries: what is left of :data:`MAX_REQUEST_BYTES` is room
for the rest (the text of a 1M-token history is about 4 MB)."""


def _left_out(content: object, over: int) -> tuple[object, int]:
    """``content`` with its images replaced by a line, first to last, while ``over`` (the
    characters still too many) is above zero; and what is still over after it."""
    if not isinstance(content, list) or over <= 0:
        return content, over
    out: list[object] = []
    for block in content:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if over > 0 and kind == "image" and (data := image_data(block)):
            over -= len(data)
            out.append({"type": "text", "text": (
                f"[an image of {len(data) * 3 / 4 / 1_000_000:.1f} MB left out of this request: with it the "
                f"request's images came to more than the Messages API takes in one request "
                f"({MAX_REQUEST_BYTES // (1024 * 1024)} MB); the newer ones were sent]")})
        elif over > 0 and kind == "tool_result" and isinstance(inner := block.get("content"), list):
            inner_out, over = _left_out(inner, over)
            out.append(block if inner_out is inner else {**block, "content": inner_out})
        else:
            out.append(block)
    return out, over


def within_request_size(messages: list[Message], image_chars: int | None = None) -> list[Message]:
    """``messages`` as they are when their images come to at most :data:`MAX_REQUEST_IMAGE_CHARS`
    of base64; else a copy whose oldest images are each a line saying so, until the rest fit (the
    other messages shared). ``image_chars``: their images' characters where known (the token
    counter's, kept for new messages only)."""
    total = image_chars if image_chars is not None else sum(image_totals(m.get("content"))[1] for m in messages)
    over = total - MAX_REQUEST_IMAGE_CHARS
    if over <= 0:
        return messages
    out: list[Message] = []
    for message in messages:
        content, over = _left_out(message.get("content"), over)
        out.append(message if content is message.get("content") else {**message, "content": content})  # type: ignore[typeddict-item]
    return out


__all__ = ["MAX_REQUEST_BYTES", "MAX_REQUEST_IMAGE_CHARS", "within_request_size"]
