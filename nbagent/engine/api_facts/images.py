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


def image_tokens(block: Mapping[str, object]) -> int:
    """The API's estimate for an image block: :func:`known_image_tokens`, else :data:`IMAGE_TOKENS`."""
    known = known_image_tokens(block)
    return IMAGE_TOKENS if known is None else known


__all__ = ["IMAGE_TOKENS", "image_tokens", "known_image_tokens", "png_size"]
