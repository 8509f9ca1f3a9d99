"""An endpoint that answers 200 with something other than a stream of events (another app's web
page on that port, a whole JSON reply from a server that ignores ``stream``) is told as such, once:
it read as a stream cut short, a connection error retried three times (pow3)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest

from nbagent import Agent
from nbagent.providers.endpoints import Endpoint

MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "local", "stop_reason": "end_turn",
           "content": [{"type": "text", "text": "391"}], "stop_sequence": None,
           "usage": {"input_tokens": 10, "output_tokens": 2}}
BODIES = {"text/html": b"<html><head><title>Open WebUI</title></head></html>",
          "application/json": json.dumps(MESSAGE).encode()}


@pytest.fixture(params=sorted(BODIES))
def not_a_stream(request: pytest.FixtureRequest) -> Iterator[tuple[str, list[str]]]:
    kind: str = request.param
    posts: list[str] = []

    class Answer(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            posts.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(BODIES[kind])))
            self.end_headers()
            self.wfile.write(BODIES[kind])

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", posts
    server.shutdown()


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

    class NoUsage(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), NoUsage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        done = Agent(endpoint=Endpoint(name="lab", base_url=url, api_key="none", model="local",
                                       context_window=65_536)).run_sync("hi").done
    finally:
        server.shutdown()
    assert done is not None and done.error is not None
    assert "reports no token usage" in done.error and "NoneType" not in done.error
