"""P2 and memory: the engine's cost per request as the history grows.

P2: CPU time of one request (prompt -> reply, through ``QueryEngine`` with an in-process provider
that answers at once, so only the engine's own work is timed) with 10,000 messages in the history
÷ the same with 100, at a 200k and a 1M context window; interleaved, median of ``REQUESTS`` per
size, worst single request ÷ median shown too. Goal ≤ 3 (worst ≤ 10× median). A full garbage
collection of the whole process heap (~10 ms with two 10,000-message sessions in it) lands in one
request now and then, depending on where the collector's counters stand; the worst is shown with
and without those collections (timed by ``gc.callbacks``), so the engine's own worst is visible.

Memory: a session grown to 10,000 messages through the engine, one request per prompt: memory
held by the engine (tracemalloc, after a collection; the tokenizer's tables, loaded once per
process, not counted) ÷ the history's JSON size. Goal ≤ 3. Shown for prompts and replies of ~1 KB
each (the issue's measurement: 9.3 MiB of history) and for one-word prompts, where the fixed
bookkeeping per request weighs most.

Run: ``.venv/bin/python bench/bench_scale.py [--no-memory]``. ``NBAGENT_SRC`` points the script
at another checkout (the "before" figure).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any, AsyncIterator

sys.path.insert(0, os.environ.get("NBAGENT_SRC", str(Path(__file__).resolve().parents[1])))

from nbagent.engine.api_facts.cost import Usage  # noqa: E402
from nbagent.engine.contracts.config import SessionConfig  # noqa: E402
from nbagent.engine.contracts.provider import MessageComplete, ModelRequest  # noqa: E402
from nbagent.engine.loop.query import QueryEngine  # noqa: E402

MODEL = "claude-sonnet-5-5"
REQUESTS = 15
SIZES = (100, 10_000)
WINDOWS = (200_000, 1_000_000)
WORDS = "The measured value changed by a small amount between the runs. "


class Instant:
    """A provider that replies at once with a fixed text (small reported usage: no truncation)."""

    name = "instant"

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        text = WORDS * 14
        yield MessageComplete({"role": "assistant", "content": [{"type": "text", "text": text}]},
                              Usage(input_tokens=1_000, output_tokens=200), "end_turn", MODEL)


def engine_with(messages: int, window: int) -> QueryEngine:
    engine = QueryEngine(SessionConfig(model=MODEL, context_window=window, max_requests=None),
                         provider=Instant())
    history = engine.session.history
    for i in range(messages):
        role = "user" if i % 2 == 0 else "assistant"
        history.append({"role": role, "content": [{"type": "text", "text": f"{i}: " + WORDS * 14}]})
    return engine


class Collections:
    """CPU time spent in the garbage collector's full (generation 2) collections, by gc.callbacks."""

    def __init__(self) -> None:
        self.full_s = 0.0
        self._start = 0.0
        gc.callbacks.append(self._on)

    def _on(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.process_time()
        elif info["generation"] == 2:
            self.full_s += time.process_time() - self._start


COLLECTIONS = Collections()


async def one_request(engine: QueryEngine, i: int, prompt: str = "prompt") -> float:
    start = time.process_time()
    async for _ in engine.submit_message(f"{prompt} {i}"):
        pass
    return time.process_time() - start


async def p2(window: int) -> None:
    engines = {n: engine_with(n, window) for n in SIZES}
    times: dict[int, list[float]] = {n: [] for n in SIZES}
    engine_only: list[float] = []
    for n in SIZES:  # warm up: tokenizer, caches of the existing history
        await one_request(engines[n], -1)
    for i in range(REQUESTS):
        for n in SIZES:
            before = COLLECTIONS.full_s
            times[n].append(await one_request(engines[n], i))
            if n == SIZES[1]:
                engine_only.append(times[n][-1] - (COLLECTIONS.full_s - before))
    small, large = (statistics.median(times[n]) for n in SIZES)
    worst, worst_engine = max(times[SIZES[1]]), max(engine_only)
    print(f"P2 window {window:>9,}: {SIZES[0]} msgs {small * 1000:.2f} ms/request, {SIZES[1]:,} msgs "
          f"{large * 1000:.2f} ms/request; ratio {large / small:.2f} (goal <= 3); worst/median "
          f"{worst / large:.1f} ({worst_engine / large:.1f} without the process's full garbage collections)")


async def memory(prompt: str, label: str) -> None:
    from nbagent.engine.api_facts.tokens import count_text_tokens

    count_text_tokens("warm up")  # the tokenizer's tables are loaded once per process, not per session
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    engine = engine_with(0, 1_000_000)
    turns = SIZES[1] // 2
    for i in range(turns):
        await one_request(engine, i, prompt)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    size = len(json.dumps(engine.session.history))
    print(f"memory at {len(engine.session.history):,} messages, {label}: {held / 2**20:.1f} MiB held for a "
          f"{size / 2**20:.1f} MiB history; ratio {held / size:.2f} (goal <= 3)")


def main(argv: list[str]) -> int:
    for window in WINDOWS:
        asyncio.run(p2(window))
    if "--no-memory" not in argv:
        # As the issue measured (a 9.3 MiB history at 10,000 messages): prompts and replies ~1 KB.
        asyncio.run(memory(WORDS * 14, "prompts and replies ~1 KB"))
        # The worst case for the ratio: a one-word prompt per request, so per-request bookkeeping
        # weighs against half the history.
        asyncio.run(memory("prompt", "10-character prompts"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
