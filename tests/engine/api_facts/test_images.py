"""One estimate for an image block, wherever it is counted: the context manager's fitting, the
turn table's ``image tokens`` and ``%agent saw`` (notebook 08 showed 1,966 and 186 tokens for one
500 x 300 plot in two tables: the fitting counted every image as 1,600)."""

from __future__ import annotations

import base64
import struct
import zlib

from nbagent.engine.api_facts.images import IMAGE_TOKENS, image_data, image_tokens, known_image_tokens, refused_image
from nbagent.engine.api_facts.tokens import TokenCounter
from nbagent.notebook.kernel_context.told import image_tokens as told_image_tokens


def png(width: int, height: int) -> bytes:
    """A real PNG header (IHDR) of that size, and an empty image chunk."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def block(data: bytes, media: str = "image/png") -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": media, "data": base64.b64encode(data).decode()}}


def test_a_png_costs_width_times_height_over_750_and_a_large_one_at_most_what_the_api_scales_it_to():
    assert image_tokens(block(png(500, 300))) == 200
    assert image_tokens(block(png(4000, 3000))) == IMAGE_TOKENS  # scaled down by the API first
    assert image_tokens(block(png(1, 1))) == 1


def test_an_image_whose_size_is_unknown_counts_as_the_most_one_costs():
    assert known_image_tokens(block(b"\xff\xd8\xff\xe0 a jpeg", "image/jpeg")) is None
    assert image_tokens(block(b"\xff\xd8\xff\xe0 a jpeg", "image/jpeg")) == IMAGE_TOKENS
    assert image_tokens({"type": "image", "source": {"type": "base64", "data": "not base64 !"}}) == IMAGE_TOKENS


def test_the_context_manager_counts_the_images_estimate_the_tables_show():
    counter = TokenCounter()
    plot = block(png(500, 300))
    with_plot = {"role": "user", "content": [{"type": "text", "text": "Why is this plot empty?"}, plot]}
    without = {"role": "user", "content": [{"type": "text", "text": "Why is this plot empty?"}]}
    in_result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [plot]}]}

    assert counter.count_message(with_plot) - counter.count_message(without) == told_image_tokens(plot) == 200
    assert counter.count_message(in_result) >= 200


def test_an_image_given_by_url_or_file_has_no_data_to_check_and_is_left_to_the_api() -> None:
    by_url = {"type": "image", "source": {"type": "url", "url": "https://example.invalid/a.png"}}
    by_file = {"type": "image", "source": {"type": "file", "file_id": "file_1"}}
    inline = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    assert image_data(by_url) is None and image_data(by_file) is None and image_data({"type": "image"}) is None
    assert image_data(inline) == "iVBORw0KGgo="
    assert refused_image(by_url) is None and image_tokens(by_url) == IMAGE_TOKENS
