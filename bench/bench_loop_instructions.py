"""Loop overhead in instructions: ``bench_loop.py``'s two loops counted under valgrind's cachegrind.

CPU time on a shared VM moves with the neighbours: the same code read 1.08-1.25 in ``bench_loop.py``
within one hour, and two runs of the *same* SDK loop paired against each other read 1.055 (median
of 15 pairs). What the processor executes does not move: this bench runs each loop once in its own
process under cachegrind (``PYTHONHASHSEED=0``, after the same warm-up as ``bench_loop.py``'s
body check) and subtracts a process that only warms up, so each figure is one run of 100
requests. Repeated counts agree to within 0.01 %. It also simulates where the time goes besides
instructions: branch mispredictions, and misses of a 32 KB first-level cache (instructions and
data) and of a 1 MB second level (fixed sizes, so that every machine reads the same). The
instruction ratio is the floor of the CPU ratio: the engine's extra code misses more per
instruction than the SDK's (more small functions and objects), so its time ratio is higher.

Needs ``valgrind`` (Debian: ``apt-get install valgrind``; skipped without it); the three processes
take ~7 min on 2 cores.
Run: ``.venv/bin/python bench/bench_loop_instructions.py [--context POLICY] [--persist]``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_loop  # noqa: E402

from nbagent.engine.contracts.context_policy import DEFAULT_POLICY  # noqa: E402

LOOPS = ("warm-up only", "SDK loop", "engine")
CACHES = ("--I1=32768,8,64", "--D1=32768,8,64", "--LL=1048576,8,64")
COUNTERS = {  # cachegrind's summary line -> what the table calls it
    "I   refs": "instructions",
    "Mispredicts": "branch mispredictions",
    "I1  misses": "L1 instruction misses",
    "D1  misses": "L1 data misses",
    "LL misses": "1 MB cache misses",
}


def child(loop: str, persist: bool, policy: str) -> None:
    """One process's work: the warm-up, then one run of ``loop`` (nothing more for the warm-up only)."""
    system, tools = bench_loop.engine_request_shape()
    bench_loop.check_bodies(persist, policy, system, tools)
    gc.collect()
    if loop == "SDK loop":
        asyncio.run(bench_loop.run_baseline(system, tools, bench_loop.anchors(policy)))
    elif loop == "engine":
        asyncio.run(bench_loop.run_engine(persist, policy))


def counted(loop: str, persist: bool, policy: str) -> dict[str, int]:
    """Cachegrind's totals for one child process."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes", *CACHES,
               "--cachegrind-out-file=/dev/null", sys.executable, __file__, "--child", loop, "--context", policy,
               *(["--persist"] if persist else [])]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"},
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"the {loop} process failed under valgrind ({done.returncode}):\n{done.stderr[-2000:]}")
    totals: dict[str, int] = {}
    for line in done.stderr.splitlines():
        match = re.match(r"==\d+== (.+?):\s+([\d,]+)", line)
        if match and match.group(1) in COUNTERS:
            totals[COUNTERS[match.group(1)]] = int(match.group(2).replace(",", ""))
    missing = set(COUNTERS.values()) - set(totals)
    if missing:
        raise SystemExit(f"cachegrind printed no {', '.join(sorted(missing))} for the {loop} process")
    return totals


def main(argv: list[str]) -> int:
    persist = "--persist" in argv
    policy = argv[argv.index("--context") + 1] if "--context" in argv else DEFAULT_POLICY
    if "--child" in argv:
        child(argv[argv.index("--child") + 1], persist, policy)
        return 0
    if shutil.which("valgrind") is None:
        print("skipped: valgrind is not installed (Debian: apt-get install valgrind)")  # make bench goes on
        return 0
    with ThreadPoolExecutor(max_workers=len(LOOPS)) as pool:
        warm, base, engine = pool.map(lambda loop: counted(loop, persist, policy), LOOPS)
    requests = bench_loop.PROMPTS * (bench_loop.TOOLS_PER_PROMPT + 1)
    print(f"One run of each loop ({requests} requests, context {policy}, "
          f"{'task folder' if persist else 'in memory'}), the warm-up's counts subtracted; per request:")
    print(f"  {'':<24}{'SDK loop':>12}{'engine':>12}{'engine / SDK loop':>20}")
    for name in COUNTERS.values():
        b, e = base[name] - warm[name], engine[name] - warm[name]
        print(f"  {name:<24}{b / requests:>12,.0f}{e / requests:>12,.0f}{e / b:>20.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
