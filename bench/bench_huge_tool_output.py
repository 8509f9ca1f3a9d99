"""A python tool call printing 200 MB (issue 12, D3): memory, task folder, and the next prompt.

One session on the offline simulated API with a task folder: a few short prompts (the baseline
prompt time), then one prompt whose tool call prints 200 MB in 1 MB lines, then short prompts
again. Reported in one run: RSS growth over the huge call (goal < 100 MB), the task folder's size
(goal < 10 MB), and the next short prompt's time as a ratio to the baseline (goal about 1x).
Run: ``.venv/bin/python bench/bench_huge_tool_output.py``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nbagent.engine.contracts.config import SessionConfig  # noqa: E402
from nbagent.engine.loop.query import QueryEngine  # noqa: E402
from nbagent.providers.anthropic import simulated_provider  # noqa: E402
from nbagent.providers.simulated import Reply, RequestBody, SimulatedAPI, text_reply, tool_reply  # noqa: E402
from nbagent.tools.python import Python  # noqa: E402

MB = 1024 * 1024
HUGE = "for _ in range(200):\n    print('x' * (1024 * 1024 - 1))"
# The control: an output of exactly what the model keeps of any long output (tool_output_limit),
# so what a later prompt costs for the kept text is told apart from what the 200 MB would add.
KEPT = "print('x' * 30_000)"
SHORT_PROMPTS = 5


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def responder(body: RequestBody) -> Reply:
    last = body["messages"][-1]["content"]
    text = last if isinstance(last, str) else " ".join(str(b.get("text", "")) for b in last)
    if "print a lot" in text:
        return tool_reply("python", {"code": HUGE if "huge" in text else KEPT})
    return text_reply("ok")


async def prompt(engine: QueryEngine, text: str) -> float:
    started = time.perf_counter()
    async for _ in engine.submit_message(text):
        pass
    return time.perf_counter() - started


async def session(which: str) -> tuple[float, float, float, float, float]:
    """(short prompt before, the big call, short prompt after, RSS growth MB, folder MB)."""
    with tempfile.TemporaryDirectory() as tmp:
        task = Path(tmp) / "task"
        config = SessionConfig(cwd=Path(tmp), task_dir=task, allow=("python",), max_requests=None)
        engine = QueryEngine(config, provider=simulated_provider(SimulatedAPI(responder)), tools=[Python()])
        before = [await prompt(engine, f"short {i}") for i in range(SHORT_PROMPTS)]
        rss0 = rss_mb()
        big_s = await prompt(engine, f"print a lot ({which})")
        rss1 = rss_mb()
        after = [await prompt(engine, f"again {i}") for i in range(SHORT_PROMPTS)]
        folder = sum(p.stat().st_size for p in task.iterdir()) / MB
        engine.session.close()
    return statistics.median(before), big_s, statistics.median(after), rss1 - rss0, folder


async def main() -> None:
    await session("kept")  # warm up: imports, the tokenizer, the SDK
    base, huge_s, later, rss, folder = await session("huge")
    _, _, control, _, control_folder = await session("kept")
    print(f"200 MB tool output: the huge call took {huge_s:.2f} s")
    print(f"RSS growth over the huge call: {rss:.1f} MB (goal < 100 MB)")
    print(f"task folder after it: {folder:.2f} MB (goal < 10 MB; {control_folder:.2f} MB after a 30,000-char output)")
    print(f"short prompt: {base * 1000:.1f} ms before, {later * 1000:.1f} ms after; ratio {later / base:.2f}x")
    print(f"short prompt after the 200 MB output ÷ after a 30,000-char output (what the model keeps "
          f"of either): {later / control:.2f}x (goal about 1x)")


if __name__ == "__main__":
    asyncio.run(main())
