"""Images ``notebook_read`` sends the model: bounded (a cell's 7 MB PNG went whole into the request),
and none of a figure whose drawn text holds a secret (:func:`without_secret_figures`).

Each image block is kept when it is small (``MAX_IMAGE_BYTES`` decoded, long edge at most
``MAX_IMAGE_EDGE`` px: the size the Messages API works at; larger ones it scales down itself,
after the upload). A larger one is sent downscaled when Pillow can read it (matplotlib, which
draws most notebook images, brings it), else left out; either way the cell's text says so in one
line, so the model knows there was an image and what became of it.
"""

from __future__ import annotations

import base64
import binascii
import io
from typing import TYPE_CHECKING, Callable, cast

from ...engine.api_facts.images import image_data
from ...engine.contracts.json_types import JSONObject
from ..pillow import pillow

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

    from ...engine.contracts.message_types import ImageBlockParam

MAX_IMAGE_BYTES = 1_000_000
"""Most bytes of one image sent (decoded; about 1.3 MB as base64)."""
MAX_IMAGE_EDGE = 1568
"""Longest side in pixels the Messages API uses without scaling an image down."""
MAX_DECODED_PIXELS = 40_000_000
"""Larger images are not decoded to be downscaled (a small file can unpack to gigabytes)."""


def _mb(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size / 1000:.0f} kB"


def _downscaled(raw: bytes) -> tuple[bytes, str, tuple[int, int], tuple[int, int]] | None:
    """``raw`` re-encoded within the bounds: (bytes, media type, size before, size after), or None
    when Pillow is missing or cannot read it."""
    Image = pillow()
    if Image is None:
        return None
    try:
        with Image.open(io.BytesIO(raw)) as image:
            before = image.size
            if before[0] * before[1] > MAX_DECODED_PIXELS:
                return None
            image.thumbnail((MAX_IMAGE_EDGE, MAX_IMAGE_EDGE))
            for scale in (1.0, 0.7, 0.5, 0.35, 0.25):
                size = (max(1, int(image.width * scale)), max(1, int(image.height * scale)))
                out, media = _encode(image.resize(size) if scale < 1.0 else image)
                if len(out) <= MAX_IMAGE_BYTES:
                    return out, media, before, size
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
    return None


def _encode(image: PILImage) -> tuple[bytes, str]:
    """PNG when that is small enough (plots: flat colours), else JPEG (photographs)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    if buffer.tell() <= MAX_IMAGE_BYTES:
        return buffer.getvalue(), "image/png"
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="JPEG", quality=85)
    return buffer.getvalue(), "image/jpeg"


def _edge_ok(raw: bytes) -> bool:
    """Whether the image's long edge is within bounds (True when Pillow cannot tell: it is small)."""
    Image = pillow()
    if Image is None:
        return True
    try:
        with Image.open(io.BytesIO(raw)) as image:
            return max(image.size) <= MAX_IMAGE_EDGE
    except Exception:  # no Pillow or an unreadable header: the byte bound alone holds
        return True


def bounded_image(block: ImageBlockParam) -> tuple[ImageBlockParam | None, str]:
    """An image block within the bounds (itself, or downscaled) or None, and the note for the
    cell's text ("" when it went as it was)."""
    source = block.get("source") or {}
    data, media = str(source.get("data", "")), str(source.get("media_type", "image"))
    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return None, f"[{media} output left out: not valid base64]"
    if len(raw) <= MAX_IMAGE_BYTES and _edge_ok(raw):
        return block, ""
    smaller = _downscaled(raw)
    if smaller is None:
        return None, (f"[{media} output of {_mb(len(raw))} left out: over the {_mb(MAX_IMAGE_BYTES)} "
                      "notebook_read sends for one image]")
    out, out_media, before, after = smaller
    note = (f"[{media} output of {before[0]}×{before[1]} px, {_mb(len(raw))}, sent downscaled to "
            f"{after[0]}×{after[1]} px, {_mb(len(out))}]")
    return {"type": "image", "source": {"type": "base64", "media_type": out_media,
                                        "data": base64.b64encode(out).decode("ascii")}}, note


def with_bounded_images(content: str | list[JSONObject], redact: Callable[[str], str] | None = None,
                        ) -> str | list[JSONObject]:
    """A tool result's blocks with each image bounded as :func:`bounded_image` bounds
    ``notebook_read``'s, the notes added to its first text block. A client's ``run_code`` of a
    ``display(Image(...))`` sent the client an 18 MB PNG whole, which its next model request (5 MB
    per image at most) could not carry. With ``redact``, a figure's image whose drawn text holds a
    secret is left out as :func:`without_secret_figures` leaves it out of a read: the python tool's
    ``fig`` (or ``display(fig)``, a client's ``run_code``) sent the plot the kernel context and
    ``notebook_read`` had kept from the model (attacker pass 23)."""
    if isinstance(content, str):
        return content
    blocks: list[JSONObject] = []
    notes: list[str] = []
    for block in content:
        if block.get("type") != "image":
            blocks.append(block)
            continue
        kept, left_out = without_secret_figures([cast("ImageBlockParam", block)], redact)
        notes += [note.replace("of this cell ", "") for note in left_out]
        if not kept:
            continue
        bounded, note = bounded_image(kept[0])
        notes += [note] if note else []
        if bounded is not None:
            blocks.append(cast("JSONObject", dict(bounded)))
    texts = [i for i, b in enumerate(blocks) if b.get("type") == "text"]
    if notes and texts:
        first = blocks[texts[0]]
        blocks[texts[0]] = {**first, "text": "\n".join([str(first.get("text", "")), *notes])}
    elif notes:
        blocks.insert(0, {"type": "text", "text": "\n".join(notes)})
    return blocks


def without_secret_figures(blocks: list[ImageBlockParam], redact: Callable[[str], str] | None,
                            ) -> tuple[list[ImageBlockParam], list[str]]:
    """A cell's images but those of a figure whose drawn text holds a secret (pixels cannot be
    redacted: the kernel context leaves such a plot out, and a read of the cell sent it)."""
    from ..kernel_context.figures import shown_image_problem

    kept: list[ImageBlockParam] = []
    notes: list[str] = []
    for block in blocks:
        data = image_data(block)
        problem = shown_image_problem(data, redact) if data is not None else None
        if problem is None:
            kept.append(block)
        else:
            notes.append(f"[an image of this cell not sent: the figure that drew it was checked and {problem}]")
    return kept, notes


__all__ = ["MAX_IMAGE_BYTES", "MAX_IMAGE_EDGE", "bounded_image", "pillow", "with_bounded_images",
           "without_secret_figures"]
