"""First cell to first text: a fresh nbagent kernel, a user's pause, then ``%%agent``.

Each round starts the nbagent kernel from a fresh kernelspec (see ``fresh_kernels``), waits for its
``kernel_info`` reply, pauses as a user would before running the first cell (``--pause``, default
3 s), then runs an ``%%agent --simulated`` prompt against the offline simulated API and times
from the ``execute_request`` to the first comm message that carries streamed answer text (an
Output widget's ``text/html``): the first text the user sees. Goal ≤ 0.5 s.

Rounds alternate the warm-up on and off (``NBAGENT_NO_WARMUP``), so the two are interleaved pairs.
Each round also times a trivial first cell (``x = 1``) run right after ``kernel_info``, while the
warm-up thread is busy: what the warm-up costs a user who starts typing at once.

Run: ``.venv/bin/python bench/bench_first_text.py [ROUNDS] [--pause S]``. Other processes on the
machine add noise: compare the two columns of one run.
"""

from __future__ import annotations

import statistics
import sys
import time
from queue import Empty
from typing import Any

from fresh_kernels import kernelspec_manager, start, stop

ROUNDS = 5
PROMPT = "%%agent --simulated\nSay hello in one sentence."


def first_text(msg: dict[str, Any]) -> bool:
    """Whether an iopub message shows the answer's text: an Output widget's outputs with HTML."""
    if msg["msg_type"] not in ("comm_msg", "comm_open"):
        return False
    state = msg["content"].get("data", {}).get("state", {})
    outputs = state.get("outputs") or ()
    return any(o.get("data", {}).get("text/html", "").strip() for o in outputs if isinstance(o, dict))


def run_cell(kc: Any, code: str, until_text: bool, timeout: float = 60.0) -> tuple[float | None, float]:
    """Seconds to the first streamed text (``None`` if none) and to the execute reply."""
    t0 = time.perf_counter()
    msg_id = kc.execute(code)
    text_at: float | None = None
    while True:
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError(f"no reply in {timeout} s")
        try:
            msg = kc.get_iopub_msg(timeout=0.05)
        except Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if until_text and text_at is None and first_text(msg):
            text_at = time.perf_counter() - t0
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return text_at, time.perf_counter() - t0


def one_round(warm: bool, pause: float) -> tuple[float, float]:
    ksm, _tmp = kernelspec_manager({} if warm else {"NBAGENT_NO_WARMUP": "1"})
    km, kc, _ = start(ksm, "nbagent")
    try:
        _, trivial = run_cell(kc, "x = 1", until_text=False)
        time.sleep(pause)
        text_at, _ = run_cell(kc, PROMPT, until_text=True)
        if text_at is None:
            raise RuntimeError("the prompt showed no text")
        return trivial, text_at
    finally:
        stop(km, kc)


def main(argv: list[str]) -> int:
    rounds = int(argv[0]) if argv and argv[0].isdigit() else ROUNDS
    pause = float(argv[argv.index("--pause") + 1]) if "--pause" in argv else 3.0
    results: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for i in range(rounds):
        for warm in ((True, False) if i % 2 == 0 else (False, True)):
            results[warm].append(one_round(warm, pause))
    for warm, label in ((False, "no warm-up"), (True, "warm-up   ")):
        trivial = statistics.median(t for t, _ in results[warm])
        text = statistics.median(x for _, x in results[warm])
        print(f"{label}: first cell to first text {text * 1000:.0f} ms (goal <= 500); "
              f"'x = 1' right after start {trivial * 1000:.0f} ms")
    print(f"({rounds} interleaved pairs, fresh kernels, {pause:.1f} s pause before the prompt)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
