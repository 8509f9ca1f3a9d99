"""What an image block costs in input tokens, as the API documents it: ``(width x height) / 750``,
after the API scales a larger image down (long edge over 1,568 px, or over ~1,600 tokens).

One estimate for every place that counts an image: the context manager's fitting, ``%agent
context``'s message table, the turn table's ``image tokens`` column and ``%agent saw``. (The fitting
counted every image as :data:`IMAGE_TOKENS`, so notebook 08 showed 1,966 and 186 tokens for one
500 x 300 plot in two tables.) Only a PNG's size is read (the kernel's figures are PNGs); another
format counts as :data:`IMAGE_TOKENS`. The API's side limit is read from any format it takes (:func:`image_size`).
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Callable, Mapping

IMAGE_TOKENS = 1600
"""An image whose size is not known, and the most one costs: the API scales larger ones down."""

_PNG = b"\x89PNG\r\n\x1a\n"

IMAGE_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image formats the Messages API takes, in the order a display's own are preferred."""

MAX_IMAGE_BASE64_CHARS = 5 * 1024 * 1024
"""The most base64 data one image block may carry: the API answers 400 to a larger one, and since
the block stays in the history, to every request after it (the conversation is poisoned)."""
MAX_IMAGE_SIDE_PX = 8000
"""The API's most pixels a side for one image (2,000 where a request holds more than 20 images)."""

_MAGIC = ((_PNG, "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"),
          (b"RIFF", "image/webp"))
"""The first bytes of each format the API takes."""
_JPEG_BARE = {0x01, 0xD8, *range(0xD0, 0xD8)}
"""JPEG markers with no length after them (TEM, SOI, RSTn)."""
_JPEG_FRAMES = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
"""The start-of-frame markers, whose segment holds the image's height and width."""


def png_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG's header (None: not a PNG)."""
    if len(data) < 24 or data[:8] != _PNG:
        return None
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


_JPEG_MAX_STEPS = 1000
"""The most markers (and fill bytes) walked before a JPEG's frame header: a real one has tens; a
crafted 3.6 MB of 4-byte segments took 0.4 s per image (review of atk23). Past it: left to the API."""


def _jpeg_walk(read: Callable[[int, int], bytes]) -> tuple[int, int] | None:
    """Width and height from a JPEG's frame header (SOFn), walking the segments before it (EXIF...);
    ``read(at, n)`` gives its bytes ``at`` to ``at + n`` (fewer at its end)."""
    at = 2
    for _ in range(_JPEG_MAX_STEPS):
        head = read(at, 9)
        if len(head) < 9 or head[0] != 0xFF:
            return None
        marker = head[1]
        if marker == 0xFF:  # a fill byte before the marker
            at += 1
        elif marker in _JPEG_BARE:
            at += 2
        elif marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", head[5:9])
            return int(width), int(height)
        else:
            at += 2 + struct.unpack(">H", head[2:4])[0]
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    return _jpeg_walk(lambda at, n: data[at:at + n])


def base64_jpeg_size(data: str) -> tuple[int, int] | None:
    """A base64 JPEG's width and height, decoding only each marker's bytes (a phone photo's frame
    header follows 50 kB and more of EXIF and ICC profile): what a check at every request can afford."""
    def read(at: int, n: int) -> bytes:
        start, skip = at // 3 * 4, at % 3
        return base64.b64decode(data[start:(at + n + 2) // 3 * 4])[skip:skip + n]
    return _jpeg_walk(read)


def _webp_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a WebP's first chunk (lossy VP8, lossless VP8L, extended VP8X)."""
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from the header of a PNG, JPEG, GIF or WebP (the formats the API takes), told
    by its bytes whatever the block's media type says; None for anything else. The API refuses any of
    them over :data:`MAX_IMAGE_SIDE_PX` a side: reading only a PNG's let an MCP server's 9,000 px JPEG
    screenshot into the history (a 400 for every request after it)."""
    if data[:8] == _PNG:
        return png_size(data)
    if data[:3] == b"\xff\xd8\xff":
        return _jpeg_size(data)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return int(width), int(height)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    return None


def image_data(block: Mapping[str, object]) -> str | None:
    """An image block's base64 data; None for one that carries none (a URL or a file reference)."""
    source = block.get("source")
    data = source.get("data") if isinstance(source, Mapping) else None
    return data if isinstance(data, str) else None


def sniffed_media_type(block: Mapping[str, object]) -> str | None:
    """The media type an image block's bytes are (PNG, JPEG, GIF or WebP, by their first bytes), None
    when not one of those. The API answers 400 to a block whose ``media_type`` is not what its data
    is ("Image does not match the provided media type"): an MCP server's PNG labelled ``image/jpeg``
    poisoned the conversation as an oversized one does."""
    data = image_data(block)
    if data is None:
        return None
    try:
        head = base64.b64decode(data[:16])
    except (ValueError, binascii.Error):
        return None
    for magic, media in _MAGIC:
        if head.startswith(magic) and (media != "image/webp" or head[8:12] == b"WEBP"):
            return media
    return None


def known_image_tokens(block: Mapping[str, object]) -> int | None:
    """The API's estimate for an image block of a known size (a base64 PNG), None otherwise."""
    data = image_data(block)
    if data is None:
        return None
    try:
        size = png_size(base64.b64decode(data[:64]))  # the header's 24 bytes are in the first 32 characters
    except (ValueError, binascii.Error):
        return None
    return None if size is None else min(IMAGE_TOKENS, max(1, size[0] * size[1] // 750))


def refused_image(block: Mapping[str, object]) -> str | None:
    """Why the API would refuse the image block ``block`` (its data over :data:`MAX_IMAGE_BASE64_CHARS`,
    a side over :data:`MAX_IMAGE_SIDE_PX` in a PNG, JPEG, GIF or WebP), as a note for the model; None for one it takes."""
    data = image_data(block)
    if data is None:
        return None
    source = block.get("source")
    media = source.get("media_type", "image") if isinstance(source, Mapping) else "image"
    if len(data) > MAX_IMAGE_BASE64_CHARS:
        return (f"[{media} of {len(data) * 3 // 4 / 1_000_000:.1f} MB left out: over the Messages API's "
                f"{MAX_IMAGE_BASE64_CHARS // (1024 * 1024)} MB for one image; display a smaller one "
                "(PIL's Image.thumbnail, a lower dpi) to see it]")
    try:  # all of it (at most 5 MB, checked above): a JPEG's frame header follows its EXIF segments
        size = image_size(base64.b64decode(data[:len(data) // 4 * 4]))
    except (ValueError, binascii.Error, struct.error):
        return None
    if size is not None and max(size) > MAX_IMAGE_SIDE_PX:
        return (f"[{media} of {size[0]}×{size[1]} px left out: over the Messages API's {MAX_IMAGE_SIDE_PX:,} px "
                "a side; display a smaller one (PIL's Image.thumbnail, a lower dpi) to see it]")
    return None


def image_tokens(block: Mapping[str, object]) -> int:
    """The API's estimate for an image block: :func:`known_image_tokens`, else :data:`IMAGE_TOKENS`."""
    known = known_image_tokens(block)
    return IMAGE_TOKENS if known is None else known


__all__ = ["IMAGE_MEDIA_TYPES", "IMAGE_TOKENS", "MAX_IMAGE_BASE64_CHARS", "MAX_IMAGE_SIDE_PX", "base64_jpeg_size",
           "image_data", "image_size", "image_tokens", "known_image_tokens", "png_size", "refused_image",
           "sniffed_media_type"]
