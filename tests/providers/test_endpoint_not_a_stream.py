"""An endpoint that answers 200 with a whole JSON reply (a server that ignores ``stream``) is told as
such, once: it read as a stream cut short, a connection error retried three times (pow3). A stream of
events under another type (Flask's default ``text/html``, ``text/plain``, none) is read as before
(the review of pow3's first check, which refused them, and Bedrock's own type)."""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest

from nbagent import Agent
from nbagent.providers.endpoints import Endpoint

MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "local", "stop_reason": "end_turn",
           "content": [{"type": "text", "text": "391"}], "stop_sequence": None,
           "usage": {"input_tokens": 10, "output_tokens": 2}}
BODIES = {"application/json": json.dumps(MESSAGE).encode(), "application/json; charset=utf-8": json.dumps(MESSAGE).encode()}
EVENTS: list[dict[str, Any]] = [{"type": "message_start", "message": {**MESSAGE, "content": [], "stop_reason": None}},
          {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
          {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "391"}},
          {"type": "content_block_stop", "index": 0},
          {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
           "usage": {"output_tokens": 2}},
          {"type": "message_stop"}]
STREAM = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in EVENTS).encode()


@contextlib.contextmanager
def _serve(kind: str | None, body: bytes, posts: list[str]) -> Iterator[str]:
    """The server's URL while it answers every POST with ``body``; closed after. Closed, not only shut
    down: its listening socket left to the garbage collector warned (ResourceWarning) in whichever later
    test the collection ran, and a collection near the stack's limit could not report that warning
    ("Failed to process unraisable exception", which fails that test)."""
    class Answer(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            posts.append(self.path)
            self.send_response(200)
            if kind is not None:
                self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.mark.parametrize("kind", ["text/event-stream; charset=utf-8", "text/html; charset=utf-8", "text/plain",
                                  "application/octet-stream", None])
def test_a_stream_of_events_under_another_type_is_read_as_it_comes(kind: str | None) -> None:
    posts: list[str] = []
    with _serve(kind, STREAM, posts) as url:
        agent = Agent(endpoint=Endpoint(name="lab", base_url=url, api_key="none", model="local", context_window=65_536))
        result = agent.run_sync("What is 17 * 23?")
        agent.close()
    assert result.done is not None and result.done.reason == "end_turn", result.done
    assert "391" in result.text


@pytest.fixture(params=sorted(BODIES))
def not_a_stream(request: pytest.FixtureRequest) -> Iterator[tuple[str, list[str]]]:
    kind: str = request.param
    posts: list[str] = []

    with _serve(kind, BODIES[kind], posts) as url:
        yield url, posts


def test_a_200_that_is_not_an_event_stream_fails_once_naming_what_came(not_a_stream: tuple[str, list[str]]) -> None:
    url, posts = not_a_stream
    agent = Agent(endpoint=Endpoint(name="lab", base_url=url, api_key="none", model="local", context_window=65_536))
    done = agent.run_sync("What is 17 * 23?").done
    agent.close()
    assert done is not None and done.reason == "error" and done.error is not None
    assert f"{url}/v1/messages answered" in done.error and "not a stream of events (text/event-stream)" in done.error
    assert "stream ended before message_stop" not in done.error
    assert len(posts) == 1  # not retried: no retry turns a web page into a stream


def test_a_stream_without_usage_fails_with_a_sentence_not_an_attribute_error() -> None:
    # It failed with "invalid_request: 'NoneType' object has no attribute 'model_dump'".
    start = {"type": "message_start", "message": {"id": "m1", "type": "message", "role": "assistant", "model": "local",
                                                  "content": [], "stop_reason": None, "stop_sequence": None}}
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in (start, {"type": "message_stop"})).encode()

    with _serve("text/event-stream", body, []) as url:
        agent = Agent(endpoint=Endpoint(name="lab", base_url=url, api_key="none", model="local", context_window=65_536))
        done = agent.run_sync("hi").done
        agent.close()
    assert done is not None and done.error is not None
    assert "reports no token usage" in done.error and "NoneType" not in done.error


def test_bedrocks_own_stream_type_is_read_as_it_comes() -> None:
    # Every Bedrock request failed: it streams application/vnd.amazon.eventstream (the review of pow3).
    import httpx2

    from nbagent.providers.anthropic import _check_event_stream

    request = httpx2.Request("POST", "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke-with-response-stream")
    for kind in ("application/vnd.amazon.eventstream", "text/html; charset=utf-8", ""):
        _check_event_stream(httpx2.Response(200, request=request, headers={"content-type": kind}), "m")  # no error
