"""What an image block costs in input tokens, as the API documents it: ``(width x height) / 750``,
after the API scales a larger image down (long edge over 1,568 px, or over ~1,600 tokens).

One estimate for every place that counts an image: the context manager's fitting, ``%agent
context``'s message table, the turn table's ``image tokens`` column and ``%agent saw``. (The fitting
counted every image as :data:`IMAGE_TOKENS`, so notebook 08 showed 1,966 and 186 tokens for one
500 x 300 plot in two tables.) Only a PNG's size is read (the kernel's figures are PNGs); another
format counts as :data:`IMAGE_TOKENS`.
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Mapping

IMAGE_TOKENS = 1600
"""An image whose size is not known, and the most one costs: the API scales larger ones down."""

_PNG = b"\x89PNG\r\n\x1a\n"

MAX_IMAGE_BASE64_CHARS = 5 * 1024 * 1024
"""The most base64 data one image block may carry: the API answers 400 to a larger one, and since
the block stays in the history, to every request after it (the conversation is poisoned)."""
MAX_IMAGE_SIDE_PX = 8000
"""The API's most pixels a side for one image (2,000 where a request holds more than 20 images)."""


def png_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG's header (None: not a PNG)."""
    if len(data) < 24 or data[:8] != _PNG:
        return None
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def known_image_tokens(block: Mapping[str, object]) -> int | None:
    """The API's estimate for an image block of a known size (a base64 PNG), None otherwise."""
    source = block.get("source")
    data = source.get("data") if isinstance(source, Mapping) else None
    if not isinstance(data, str):
        return None
    try:
        size = png_size(base64.b64decode(data[:64]))  # the header's 24 bytes are in the first 32 characters
    except (ValueError, binascii.Error):
        return None
    return None if size is None else min(IMAGE_TOKENS, max(1, size[0] * size[1] // 750))


def refused_image(block: Mapping[str, object]) -> str | None:
    """Why the API would refuse the image block ``block`` (its data over :data:`MAX_IMAGE_BASE64_CHARS`,
    a PNG's side over :data:`MAX_IMAGE_SIDE_PX`), as a note for the model; None for one it takes."""
    source = block.get("source")
    data = source.get("data") if isinstance(source, Mapping) else None
    if not isinstance(data, str):
        return None
    media = source.get("media_type", "image") if isinstance(source, Mapping) else "image"
    if len(data) > MAX_IMAGE_BASE64_CHARS:
        return (f"[{media} of {len(data) * 3 // 4 / 1_000_000:.1f} MB left out: over the Messages API's "
                f"{MAX_IMAGE_BASE64_CHARS // (1024 * 1024)} MB for one image; display a smaller one "
                "(PIL's Image.thumbnail, a lower dpi) to see it]")
    try:
        size = png_size(base64.b64decode(data[:64]))
    except (ValueError, binascii.Error):
        return None
    if size is not None and max(size) > MAX_IMAGE_SIDE_PX:
        return (f"[{media} of {size[0]}×{size[1]} px left out: over the Messages API's {MAX_IMAGE_SIDE_PX:,} px "
                "a side; display a smaller one (PIL's Image.thumbnail, a lower dpi) to see it]")
    return None


def image_tokens(block: Mapping[str, object]) -> int:
    """The API's estimate for an image block: :func:`known_image_tokens`, else :data:`IMAGE_TOKENS`."""
    known = known_image_tokens(block)
    return IMAGE_TOKENS if known is None else known


__all__ = ["IMAGE_TOKENS", "MAX_IMAGE_BASE64_CHARS", "MAX_IMAGE_SIDE_PX", "image_tokens", "known_image_tokens", "png_size",
           "refused_image"]
