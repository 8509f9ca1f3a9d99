"""Past 20 images in one request the Messages API takes at most 2,000 px a side (not 8,000): a
browser MCP server's full-page screenshots (each accepted alone) made every request from the 21st
image on fail with a 400. The request carries a line in place of each larger image instead."""

from __future__ import annotations

import asyncio
import base64
import io
import struct
from pathlib import Path
from typing import Any

import pydantic
import pytest

from nbagent.engine.api_facts.many_images import within_many_image_limit
from nbagent.engine.contracts.tool_api import Tool, ToolOutput
from nbagent.providers.simulated import ScriptedResponder, SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import make_engine, messages_requests, run
from tests.engine.loop.test_tool_images import _png


class Screenshots(Tool):
    name = "screenshots"
    description = "Full-page screenshots."
    read_only = True

    class Input(pydantic.BaseModel):
        count: int

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        shot: dict[str, Any] = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                             "data": _png(1280, 5000)}}
        return ToolOutput(content=[{"type": "text", "text": "pages"}, *[shot] * tool_input["count"]])


def _sent_images(api: SimulatedAPI) -> tuple[int, list[str]]:
    result = messages_requests(api)[-1].body["messages"][-1]["content"][0]["content"]
    return sum(b["type"] == "image" for b in result), [b["text"] for b in result if b["type"] == "text"]


@pytest.mark.parametrize(("count", "sent"), [(20, 20), (21, 0)])
def test_past_twenty_images_a_larger_one_is_a_line_in_the_request(tmp_path: Path, count: int, sent: int) -> None:
    api = SimulatedAPI(responder=ScriptedResponder([tool_reply("screenshots", {"count": count}), text_reply("Seen.")]))
    asyncio.run(run(make_engine(api, tmp_path, tools=[Screenshots()]), "take the screenshots"))
    images, texts = _sent_images(api)
    assert images == sent
    assert sum("1280×5000 px left out of this request" in t for t in texts) == count - sent


def test_small_images_and_a_request_of_few_are_left_as_they_are() -> None:
    small: dict[str, Any] = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                          "data": _png(1500, 1500)}}
    many: list[Any] = [{"role": "user", "content": [small] * 30}]
    assert within_many_image_limit(many) is many
    large = {**small, "source": {**small["source"], "data": _png(2001, 10)}}
    few: list[Any] = [{"role": "user", "content": [large] * 20}]
    assert within_many_image_limit(few) is few


def _jpeg_with_exif(width: int, height: int, exif_bytes: int) -> str:
    """A JPEG whose APP1 (EXIF) segment of ``exif_bytes`` comes before its frame header, as a phone photo's."""
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (width, height), (200, 10, 10)).save(buf, "JPEG", quality=50)
    data = buf.getvalue()
    payload = b"Exif\0\0" + b"\0" * exif_bytes
    return base64.b64encode(data[:2] + b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload + data[2:]).decode()


def test_past_twenty_images_a_photo_whose_frame_header_follows_a_large_exif_is_a_line_too() -> None:
    small: dict[str, Any] = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                          "data": _png(100, 100)}}
    photo = {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
                                         "data": _jpeg_with_exif(3000, 100, 60_000)}}
    many: list[Any] = [{"role": "user", "content": [small] * 20 + [photo]}]
    result = within_many_image_limit(many)
    assert result is not many
    sent: list[Any] = list(result)
    assert sent[0]["content"][-1]["type"] == "text"
    assert "3000×100 px left out of this request" in sent[0]["content"][-1]["text"]
    assert many[0]["content"][-1] is photo  # the history keeps it


def test_the_images_are_counted_for_new_messages_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counting every message's images at every request cost a 10,000-message session milliseconds
    a request; the token counter counts them with its estimate, for the messages new since the last."""
    from nbagent.engine.api_facts import tokens

    walked: list[object] = []
    real = tokens.image_totals
    def counted(content: object) -> tuple[int, int]:
        walked.append(content)
        return real(content)

    monkeypatch.setattr(tokens, "image_totals", counted)
    shot: dict[str, Any] = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _png(10, 10)}}
    history: list[Any] = [{"role": "user", "content": [{"type": "text", "text": f"m{i}"}]} for i in range(1000)]
    history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [shot, shot]}]})
    counter = tokens.TokenCounter()
    counter.count_request(history)
    assert counter.last_images == 2 and len(walked) == 1002  # 1,001 messages and the tool result's content
    assert counter.last_image_chars == 2 * len(shot["source"]["data"])
    walked.clear()
    counter.count_request([*history, {"role": "assistant", "content": [shot]}])
    assert counter.last_images == 3 and len(walked) == 1  # the new message only
    assert counter.last_image_chars == 3 * len(shot["source"]["data"])


def test_the_estimate_counts_the_lines_sent_in_place_of_images_left_out(tmp_path: Path) -> None:
    """The request's estimate (shown, and paced against the rate limit) was counted before the images
    past twenty were left out: 21 screenshots' worth of tokens the request did not carry."""
    from nbagent.engine.contracts.events import ApiRequestStarted, RequestCompleted

    api = SimulatedAPI(responder=ScriptedResponder([tool_reply("screenshots", {"count": 21}), text_reply("Seen.")]))
    events = asyncio.run(run(make_engine(api, tmp_path, tools=[Screenshots()]), "take the screenshots"))
    estimate = [e for e in events if isinstance(e, ApiRequestStarted)][-1].estimated_input_tokens
    record = [e.record for e in events if isinstance(e, RequestCompleted)][-1]
    assert record is not None
    usage = record.usage  # what the (simulated) API counted of what was sent
    counted = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    assert abs(estimate - counted) < 0.2 * counted  # main: ~21 × 1,600 image tokens over
