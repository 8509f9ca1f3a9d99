"""P3: bytes sent to the front-end while a long answer streams into ``AgentView``.

A 150,000-char Markdown answer (paragraphs, lists, code blocks) arrives in 20-char deltas at a
given model speed (a simulated clock, so no sleeping); every comm message the widgets send
(``comm_open`` states and ``comm_msg`` updates, JSON-encoded) is counted. Printed per speed:
bytes sent ÷ answer size (goal ≤ 3), updates per second of streaming (goal ≤ 20), the longest
gap between updates, and whether the text shown at the end is identical to the answer.

Run: ``.venv/bin/python bench/bench_stream.py [chars_per_second ...]``. ``NBAGENT_SRC`` points the
script at another checkout (the "before" figure).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, os.environ.get("NBAGENT_SRC", str(Path(__file__).resolve().parents[1])))

import comm  # noqa: E402

from nbagent.engine.contracts import events as ev  # noqa: E402
from nbagent.notebook.view import AgentView  # noqa: E402
from nbagent.notebook.view.text import TextBlock  # noqa: E402

SIZE = 150_000
DELTA = 20
SPEEDS = (100.0, 300.0, 1_000.0, 10_000.0)  # chars/s: slow model, typical, fast, a burst


def answer(size: int = SIZE) -> str:
    parts: list[str] = []
    i = 0
    while sum(map(len, parts)) < size:
        i += 1
        parts.append(f"## Step {i}\n\nThe measured value changed by **{i}%** between the runs, "
                     "which is within the noise of the instrument; see the table below.\n\n")
        parts.append("- first item of the list\n- second item, `code`\n- third item\n\n")
        if i % 3 == 0:
            parts.append("```python\n" + "".join(f"x{j} = compute({j})\n" for j in range(12)) + "```\n\n")
    return "".join(parts)[:size]


class Counter:
    def __init__(self) -> None:
        self.bytes = 0
        self.messages = 0

    def __enter__(self) -> Counter:
        self._orig = comm.DummyComm.publish_msg
        counter = self

        def publish(self: comm.DummyComm, msg_type: str, data: dict[str, Any] | None = None,
                    metadata: dict[str, Any] | None = None, buffers: list[bytes] | None = None, **keys: Any) -> None:
            counter.bytes += len(json.dumps(data, default=str))
            counter.messages += 1

        comm.DummyComm.publish_msg = publish  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        comm.DummyComm.publish_msg = self._orig  # type: ignore[method-assign]


def run(text: str, speed: float) -> dict[str, float]:
    clock = [1000.0]
    view = AgentView(model="claude-sonnet-4-5", provider="simulated", context_window=200_000,
                     max_allowed=160_000, clock=lambda: clock[0])
    pushes: list[float] = []
    with Counter() as counter:
        start = clock[0]
        for at in range(0, len(text), DELTA):
            clock[0] += DELTA / speed
            before = view.stream_updates
            view.handle(ev.TextDelta(text=text[at:at + DELTA]))
            if view.stream_updates != before:
                pushes.append(clock[0])
        view.flush()
        pushes.append(clock[0])
        duration = clock[0] - start
    block = view.parts[0]
    assert isinstance(block, TextBlock)
    shown = block.shown() if hasattr(block, "shown") else block.text  # the "before" checkout
    gaps = [b - a for a, b in zip([start, *pushes], pushes, strict=False)]
    return {"ratio": counter.bytes / len(text), "mib": counter.bytes / 2**20, "updates": view.stream_updates,
            "per_s": view.stream_updates / duration, "max_gap": max(gaps), "identical": shown == text}


def main() -> None:
    speeds = [float(a) for a in sys.argv[1:]] or list(SPEEDS)
    text = answer()
    print(f"P3: {len(text):,}-char answer in {DELTA}-char deltas; bytes = all widget comm messages")
    for speed in speeds:
        r = run(text, speed)
        print(f"  {speed:>8,.0f} chars/s: bytes ÷ answer = {r['ratio']:.2f} ({r['mib']:.2f} MiB), "
              f"{r['updates']:,} updates = {r['per_s']:.1f}/s, longest gap {r['max_gap']:.2f} s, "
              f"identical: {r['identical']}")


if __name__ == "__main__":
    main()
