"""An endpoint's redirect is not followed: the SDK followed it, and httpx drops only
``Authorization`` on the way to another host, so the profile's headers (treated as secrets) and the
conversation went wherever ``Location`` pointed (attacker pass 6, F2)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from nbagent import Agent
from nbagent.providers.endpoints import Endpoint

HEADER = "team-SENTINEL-header-value-3b9d"
TOKEN = "sk-gateway-SENTINEL-token-71c2"


class _Elsewhere(BaseHTTPRequestHandler):
    seen: list[dict[str, str]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        type(self).seen.append(dict(self.headers))
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


async def _no_wait(seconds: float) -> None:
    """The retries' backoff, not waited for."""


def _serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def redirecting() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """An endpoint on 127.0.0.1 answering every request with a 307 to another origin (localhost)."""
    _Elsewhere.seen = []
    elsewhere = _serve(_Elsewhere)
    target = f"http://localhost:{elsewhere.server_address[1]}/v1/messages"

    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.send_response(307)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            pass

    endpoint = _serve(Redirect)
    try:
        yield f"http://127.0.0.1:{endpoint.server_address[1]}", _Elsewhere.seen
    finally:
        for server in (endpoint, elsewhere):
            server.shutdown()
            server.server_close()


def test_a_redirect_from_the_endpoint_sends_nothing_to_another_host(
        redirecting: tuple[str, list[dict[str, str]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    url, seen = redirecting
    endpoint = Endpoint(name="gw", base_url=url, auth_token=TOKEN, headers={"X-Team-Key": HEADER})
    agent = Agent(endpoint=endpoint, model="claude-sonnet-4-5", cwd=tmp_path, tools=[], sleep=_no_wait)
    try:
        done = agent.run_sync("The quarterly numbers are in sales.csv.").done
    finally:
        agent.close()
    assert seen == []  # on the old code: the header and the prompt reached the other host
    assert done is not None and done.error and "307" in done.error
