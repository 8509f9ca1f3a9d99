"""Images each under the API's 5 MB add up in the history past what one request may hold (32 MB:
a 413, which the loop took for a context overflow and answered by hiding history, text and all).
The request carries a line in place of its oldest images instead; the history keeps them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pydantic
import pytest

from nbagent.engine.api_facts import request_size
from nbagent.engine.api_facts.request_size import within_request_size
from nbagent.engine.contracts.events import ContextTruncated, Done
from nbagent.engine.contracts.tool_api import Tool, ToolOutput
from nbagent.providers.simulated import ScriptedResponder, SimulatedAPI, app, text_reply, tool_reply
from tests.engine.loop.test_query_support import make_engine, messages_requests, run
from tests.engine.loop.test_tool_images import _png

SHOT = _png(100, 100, 75_000)  # ~100 KB of base64


class Screenshot(Tool):
    name = "screenshot"
    description = "A screenshot of the page."
    read_only = True

    class Input(pydantic.BaseModel):
        n: int

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        return ToolOutput(content=[{"type": "text", "text": f"page {tool_input['n']}"},
                                   {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": SHOT}}])


def _images_and_lines(body: dict[str, Any]) -> tuple[int, int]:
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for r in m["content"]
              if r.get("type") == "tool_result" for b in r["content"]]
    return (sum(b["type"] == "image" for b in blocks),
            sum(b["type"] == "text" and "left out of this request" in b["text"] for b in blocks))


def test_images_adding_up_past_a_request_s_size_leave_the_oldest_out_and_no_request_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The limits scaled down a hundredfold (32 MB requests, 24 MB of images), so that the test moves kilobytes.
    monkeypatch.setattr(app, "MAX_REQUEST_BYTES", 4 * len(SHOT))  # four images do not fit
    monkeypatch.setattr(request_size, "MAX_REQUEST_IMAGE_CHARS", 3 * len(SHOT))
    api = SimulatedAPI(responder=ScriptedResponder([*(tool_reply("screenshot", {"n": n}) for n in range(5)),
                                                    text_reply("Seen them.")]))
    engine = make_engine(api, tmp_path, tools=[Screenshot()], task=None)
    events = asyncio.run(run(engine, "take five screenshots"))
    done = [e for e in events if isinstance(e, Done)][-1]
    assert done.reason == "end_turn" and not [e for e in events if isinstance(e, ContextTruncated)]
    assert [_images_and_lines(r.body) for r in messages_requests(api)] == [(0, 0), (1, 0), (2, 0), (3, 0), (3, 1), (3, 2)]
    assert all(len(r.body["messages"]) == 2 * i + 1 for i, r in enumerate(messages_requests(api)))  # no history hidden
    history: list[Any] = list(engine.session.history)
    held = [b for m in history if isinstance(m["content"], list) for r in m["content"]
            if r.get("type") == "tool_result" for b in r["content"] if b["type"] == "image"]
    assert len(held) == 5  # the history keeps every image: a later request with fewer sends them


def test_a_request_over_the_api_s_size_is_answered_413_by_the_simulated_api(monkeypatch: pytest.MonkeyPatch) -> None:
    import anthropic

    monkeypatch.setattr(app, "MAX_REQUEST_BYTES", 10_000)
    client = SimulatedAPI().async_client()

    async def send() -> None:
        await client.messages.create(model="claude-sonnet-4-5", max_tokens=10,
                                     messages=[{"role": "user", "content": "x" * 20_000}])

    with pytest.raises(anthropic.APIStatusError) as raised:
        asyncio.run(send())
    assert raised.value.status_code == 413 and "request_too_large" in str(raised.value.body)


def test_messages_whose_images_fit_are_the_same_objects() -> None:
    shot: dict[str, Any] = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": SHOT}}
    messages: list[Any] = [{"role": "user", "content": [shot] * 3}]
    assert within_request_size(messages) is messages
    over = request_size.MAX_REQUEST_IMAGE_CHARS // len(SHOT) + 2
    many: list[Any] = [{"role": "user", "content": [shot]} for _ in range(over)]
    sent: list[Any] = within_request_size(many)
    assert [m["content"][0]["type"] for m in sent[:2]] == ["text", "text"] and sent[2] is many[2]
    assert "0.1 MB left out of this request" in sent[0]["content"][0]["text"] and many[0]["content"][0] is shot
