"""The Messages API's limit for a request of many images: past :data:`MANY_IMAGES` images in one
request, each may be at most :data:`MANY_IMAGES_SIDE_PX` pixels a side (not 8,000).

Each image is checked alone where a tool returns it (:func:`~.images.refused_image`), but this one
depends on the whole request: a browser MCP server's full-page screenshots (1280 × 5000 px, each
accepted) accumulate, and from the 21st image in the request the API answered 400 to every request
until they left the window. The request sent then carries, in place of each larger image, a line
saying what became of it; the history keeps the image (a later request of fewer images sends it).
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Mapping

from ..contracts.messages import Message
from .images import base64_jpeg_size, image_data, image_size
from .tokens import image_totals

MANY_IMAGES = 20
"""The most images a request may hold and still take the 8,000 px side."""
MANY_IMAGES_SIDE_PX = 2000
"""The most pixels a side of each image in a request of more than :data:`MANY_IMAGES`."""
_HEAD_CHARS = 65536
"""Of an image's base64 (not a JPEG's), what is decoded to read its size at every request."""
_JPEG_BASE64 = "/9j/"
"""How a JPEG's base64 starts: its frame header follows its EXIF/ICC segments, often past the first 48 kB."""


def _too_large(block: Mapping[str, object]) -> str | None:
    data = image_data(block)
    if data is None:
        return None
    try:
        # a phone photo's EXIF thumbnail (up to 64 kB) and ICC profile come before its frame header
        size = base64_jpeg_size(data) if data.startswith(_JPEG_BASE64) else image_size(base64.b64decode(data[:_HEAD_CHARS]))
    except (ValueError, binascii.Error, struct.error):
        return None
    if size is None or max(size) <= MANY_IMAGES_SIDE_PX:
        return None
    return (f"[an image of {size[0]}×{size[1]} px left out of this request: with more than {MANY_IMAGES} images "
            f"in a request the Messages API takes at most {MANY_IMAGES_SIDE_PX:,} px a side]")


def _bounded(content: object) -> object:
    if not isinstance(content, list):
        return content
    out: list[object] = []
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "image" and (why := _too_large(block)):
            out.append({"type": "text", "text": why})
        elif isinstance(block, Mapping) and block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            inner = _bounded(block.get("content"))
            out.append(block if inner == block.get("content") else {**block, "content": inner})
        else:
            out.append(block)
    return out


def within_many_image_limit(messages: list[Message], images: int | None = None) -> list[Message]:
    """``messages`` as they are when they hold at most :data:`MANY_IMAGES` images; else a copy where
    each image over :data:`MANY_IMAGES_SIDE_PX` a side is a line saying so (the other messages shared).
    ``images``: their count where known (the token counter's, kept for new messages only: walking
    every message at every request cost a 10,000-message session milliseconds a request)."""
    if (images if images is not None else sum(image_totals(m.get("content"))[0] for m in messages)) <= MANY_IMAGES:
        return messages
    out: list[Message] = []
    for message in messages:
        content = _bounded(message.get("content"))
        out.append(message if content == message.get("content") else {**message, "content": content})  # type: ignore[typeddict-item]
    return messages if all(a is b for a, b in zip(out, messages, strict=True)) else out


__all__ = ["MANY_IMAGES", "MANY_IMAGES_SIDE_PX", "within_many_image_limit"]
