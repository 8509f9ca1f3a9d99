"""An image a tool returns that the Messages API would refuse (over 5 MB of data, a side over
8,000 px) never enters the history: the API answers 400 to it and, the block staying in the history,
to every request after it. The model is told what became of it instead."""

from __future__ import annotations

import asyncio
import base64
import io
import struct
import zlib
from pathlib import Path
from typing import Any

import pydantic
import pytest

from nbagent.engine.api_facts.images import MAX_IMAGE_BASE64_CHARS, refused_image, sniffed_media_type
from nbagent.engine.contracts.tool_api import Tool, ToolOutput
from nbagent.providers.simulated import ScriptedResponder, SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import make_engine, messages_requests, run


def _png(width: int, height: int, extra: int = 0) -> str:
    """A PNG's header of ``width`` × ``height`` (what the API's size check reads), ``extra`` bytes after it."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + chunk + b"\0" * extra).decode("ascii")


class Picture(Tool):
    name = "picture"
    description = "Show a picture."
    read_only = True

    class Input(pydantic.BaseModel):
        which: str

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        data = {"big": _png(1000, 1000, MAX_IMAGE_BASE64_CHARS), "wide": _png(9000, 100), "small": _png(800, 600)}
        return ToolOutput(content=[{"type": "text", "text": "here it is"},
                                   {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                "data": data[tool_input["which"]]}}])


def _last_result(api: SimulatedAPI) -> list[dict[str, Any]]:
    body = messages_requests(api)[-1].body
    return body["messages"][-1]["content"][0]["content"]


def test_an_image_the_api_would_refuse_is_a_note_and_the_next_prompt_still_works(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=ScriptedResponder([
        tool_reply("picture", {"which": "big"}), text_reply("I could not see it."),
        tool_reply("picture", {"which": "wide"}), text_reply("Nor that one."),
        tool_reply("picture", {"which": "small"}), text_reply("A small one."),
    ]))
    engine = make_engine(api, tmp_path, tools=[Picture()])
    for which in ("big", "wide", "small"):
        asyncio.run(run(engine, f"show me the {which} picture"))
        blocks = _last_result(api)
        images = [b for b in blocks if b["type"] == "image"]
        if which == "small":
            assert len(images) == 1
        else:
            assert images == [] and "left out: over the Messages API's" in blocks[-1]["text"], blocks
    assert all(len(str(r.body)) < MAX_IMAGE_BASE64_CHARS for r in messages_requests(api))


def _block(data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def test_the_api_limits_read_from_the_block() -> None:
    assert refused_image(_block(_png(8000, 8000))) is None and refused_image(_block("A" * MAX_IMAGE_BASE64_CHARS)) is None
    assert "8001×10 px" in (refused_image(_block(_png(8001, 10))) or "")
    assert "over the Messages API's 5 MB" in (refused_image(_block("A" * (MAX_IMAGE_BASE64_CHARS + 4))) or "")


def _encoded(fmt: str, size: tuple[int, int], **save: Any) -> str:
    image = pytest.importorskip("PIL.Image")
    buffer = io.BytesIO()
    image.new("RGB", size, "white").save(buffer, format=fmt, **save)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


@pytest.mark.parametrize(("fmt", "save"), [("JPEG", {}), ("JPEG", {"exif": b"Exif\0\0" + b"\0" * 40_000}),
                                           ("GIF", {}), ("WEBP", {"lossless": True}), ("WEBP", {"quality": 50})])
def test_a_side_over_the_limit_is_refused_in_every_format_the_api_takes(fmt: str, save: dict[str, Any]) -> None:
    """An MCP server's 9,000 px JPEG screenshot went into the history (only a PNG's side was read): the
    API answers 400 to it and to every request after it. The size is read from the bytes, whatever the
    block's media type says."""
    wide, fits = _encoded(fmt, (8001, 16), **save), _encoded(fmt, (8000, 16), **save)
    assert "8001×16 px left out" in (refused_image(_block(wide)) or "")
    assert refused_image(_block(fits)) is None


def test_a_webp_with_an_extended_header_is_read_from_its_canvas() -> None:
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\0\0\0\0" + (9999).to_bytes(3, "little") + (15).to_bytes(3, "little")
    riff = b"RIFF" + struct.pack("<I", 4 + len(vp8x)) + b"WEBP" + vp8x
    assert "10000×16 px" in (refused_image(_block(base64.b64encode(riff).decode("ascii"))) or "")


def test_a_truncated_or_unknown_header_is_left_to_the_api() -> None:
    for raw in (b"\xff\xd8\xff\xe0\0", b"GIF89a", b"RIFF\0\0\0\0WEBPVP8 ", b"BM" + b"\0" * 40):
        assert refused_image(_block(base64.b64encode(raw).decode("ascii"))) is None


class Mislabelled(Tool):
    name = "screenshot"
    description = "Take a screenshot."
    read_only = True

    class Input(pydantic.BaseModel):
        pass

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        return ToolOutput(content=[{"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
                                                                "data": _png(800, 600)}}])


def test_an_image_labelled_as_another_format_goes_with_the_format_its_bytes_are(tmp_path: Path) -> None:
    """An MCP server's PNG labelled image/jpeg: the API answers 400 to a label that is not what the
    data is, and to every request after it (the block stays in the history)."""
    api = SimulatedAPI(responder=ScriptedResponder([tool_reply("screenshot", {}), text_reply("A window.")]))
    asyncio.run(run(make_engine(api, tmp_path, tools=[Mislabelled()]), "take a screenshot"))
    images = [b for b in _last_result(api) if b["type"] == "image"]
    assert [b["source"]["media_type"] for b in images] == ["image/png"]
    assert sniffed_media_type(_block(_encoded("JPEG", (8, 8)))) == "image/jpeg"
    assert sniffed_media_type(_block(base64.b64encode(b"RIFF\0\0\0\0WAVEfmt ").decode())) is None


@pytest.mark.parametrize("exif", [0, 1, 2, 60_000, 60_001, 60_002])
@pytest.mark.parametrize("progressive", [False, True])
def test_a_base64_jpegs_size_is_read_marker_by_marker_wherever_its_frame_header_falls(exif: int, progressive: bool) -> None:
    """The many-image check reads a JPEG's size at every request, decoding only each marker's bytes:
    the same size as the whole data gives, whatever EXIF comes first (offsets at each base64 phase)."""
    from PIL import Image

    from nbagent.engine.api_facts.images import base64_jpeg_size, image_size

    buf = io.BytesIO()
    Image.new("RGB", (2345, 17)).save(buf, "JPEG", progressive=progressive)
    raw = buf.getvalue()
    payload = b"Exif\0\0" + b"\0" * exif
    raw = raw[:2] + b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload + raw[2:]
    assert base64_jpeg_size(base64.b64encode(raw).decode()) == image_size(raw) == (2345, 17)
    assert base64_jpeg_size(base64.b64encode(raw[:len(raw) // 2 if exif else 20]).decode()) in (None, (2345, 17))


def test_a_jpeg_of_thousands_of_empty_segments_is_left_to_the_api() -> None:
    """A crafted JPEG of 900,000 four-byte segments before its frame header took 0.4 s per image to
    walk (every tool result, every request past 20 images); the walk stops after 1,000 markers."""
    raw = b"\xff\xd8" + b"\xff\xfe\x00\x02" * 900_000 + b"\xff\xc0\x00\x11\x08" + struct.pack(">HH", 16, 9000)
    assert refused_image(_block(base64.b64encode(raw).decode())) is None
