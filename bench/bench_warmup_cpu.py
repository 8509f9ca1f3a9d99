"""CPU time of the warm-up until the first prompt has what it needs, with and without its pause of
automatic garbage collection (``nbagent.notebook.warmup.fewer_collections``).

Each round runs, in a fresh process after the kernel's own imports, ``warmup.import_all`` without
its ``later`` part (pandas: the first text does not wait for it), once as shipped and once with the
pause replaced by a no-op, in alternating order; it prints the median CPU seconds of each and their
ratio. CPU time, not wall time: on a shared machine the warm-up's wall time is its CPU time
stretched by the other processes, and what the pause saves is CPU. The first ``%%agent`` of a
kernel waits for whatever of this is not done when the user runs it (``bench_first_text.py``).

Run: ``.venv/bin/python bench/bench_warmup_cpu.py [ROUNDS]``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

ROUNDS = 7
SCRIPT = """
import contextlib, sys, time
import IPython, ipykernel.ipkernel, nbagent.kernel.kernel  # what the kernel imported at its start
from nbagent.notebook import warmup
if sys.argv[1] == "collecting":
    warmup.fewer_collections = contextlib.nullcontext
t = time.process_time()
failed = warmup.import_all(warmup.MODULES, ())
assert failed == [], failed
print(time.process_time() - t)
"""


def one(mode: str) -> float:
    out = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    rounds = int(argv[0]) if argv and argv[0].isdigit() else ROUNDS
    seconds: dict[str, list[float]] = {"collecting": [], "paused": []}
    for i in range(rounds):
        for mode in (("collecting", "paused") if i % 2 == 0 else ("paused", "collecting")):
            seconds[mode].append(one(mode))
    before, after = (statistics.median(seconds[m]) for m in ("collecting", "paused"))
    print(f"warm-up CPU to what the first prompt needs ({rounds} interleaved pairs): collecting "
          f"{before * 1000:.0f} ms, collection paused {after * 1000:.0f} ms; ratio {after / before:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
