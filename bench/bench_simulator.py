"""The offline simulated API's own cost per request as a conversation grows.

It runs in the kernel's process (the default with no key), so its per-request work is the
notebook's too. Each request resends the whole conversation; the server must at least parse it,
so the figure is the server's time per request ÷ ``json.loads`` of the same body, at 1,200 and
10,000 messages, with the cache breakpoints moving each request as nbagent sends them. Goal: a
small constant (before: the whole conversation was serialised four times per request, 57 ms at
1,200 messages). CPU time, median of ``REQUESTS`` requests after the first (which tokenises
the conversation once).

Run: ``.venv/bin/python bench/bench_simulator.py``. ``NBAGENT_SRC`` points it at another checkout.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.environ.get("NBAGENT_SRC", str(Path(__file__).resolve().parents[1])))

from nbagent.providers.simulated import SimulatedAPI, text_reply  # noqa: E402

MODEL = "claude-sonnet-5-5"
SIZES = (1_200, 10_000)
REQUESTS = 8
WORDS = "The measured value changed by a small amount between the runs. "
EPHEMERAL = {"type": "ephemeral"}
HEADERS = {"x-api-key": "sk-bench", "content-type": "application/json", "anthropic-version": "2023-06-01"}


def conversation(n: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant",
             "content": [{"type": "text", "text": f"{i}: " + WORDS * 14}]} for i in range(n + 1)]


def body_bytes(history: list[dict[str, Any]]) -> bytes:
    messages = json.loads(json.dumps(history))
    for i in (len(messages) - 3, len(messages) - 1):  # where nbagent puts its two breakpoints
        messages[i]["content"][-1]["cache_control"] = EPHEMERAL
    return json.dumps({"model": MODEL, "max_tokens": 256, "stream": True, "messages": messages,
                       "system": [{"type": "text", "text": "You are terse.", "cache_control": EPHEMERAL}]}).encode()


async def per_request(n: int) -> tuple[float, float]:
    api = SimulatedAPI(lambda body: text_reply("ok"), request_log=1)
    history = conversation(n)
    server, parse = [], []
    for r in range(REQUESTS + 1):
        data = body_bytes(history)
        start = time.process_time()
        response = await api.handle("POST", "/v1/messages", HEADERS, data)
        async for _ in response.body:
            pass
        server.append(time.process_time() - start)
        start = time.process_time()
        json.loads(data)
        parse.append(time.process_time() - start)
        history += [{"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                    {"role": "user", "content": [{"type": "text", "text": f"question {r}"}]}]
    return statistics.median(server[1:]), statistics.median(parse[1:])


def main() -> int:
    for n in SIZES:
        server, parse = asyncio.run(per_request(n))
        print(f"{n:>6,} messages: simulated API {server * 1000:6.1f} ms/request, json.loads of the body "
              f"{parse * 1000:5.1f} ms; ratio {server / parse:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
