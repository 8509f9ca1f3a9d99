"""P6: what a user waits for at kernel start, the nbagent kernel ÷ the stock ipykernel.

Each round starts a fresh process of each kernel from a fresh kernelspec through jupyter_client and
times it until the ``kernel_info`` reply (see ``fresh_kernels.start``), in interleaved pairs whose
order alternates (so neither kernel always profits from a warm disk cache); the ratio is the median
of the per-pair ratios. Goal: P6 ≤ 1.2. Also ``%load_ext nbagent`` ÷ ``import anthropic`` (goal ≤ 1.5:
the SDK loads with the first prompt) and ``import nbagent`` ÷ ``import IPython``, in fresh processes.
``--old-way`` also times ``start_new_kernel`` (the previous version of this bench), for comparison.

Run: ``.venv/bin/python bench/bench_startup.py [PAIRS] [--old-way]``. ``NBAGENT_SRC`` points the
kernels at another checkout (the "before" figure). Other processes on the machine add noise: compare
ratios from one run, not seconds across runs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from fresh_kernels import cpu_seconds, kernelspec_manager, ratio_summary, start, stop
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

PAIRS = 7
PY = sys.executable


def in_fresh_process(code: str) -> float:
    out = subprocess.run([PY, "-c", f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


LOAD_EXT = ("from IPython.core.interactiveshell import InteractiveShell; ip = InteractiveShell.instance(); "
            "t = time.perf_counter(); ip.run_line_magic('load_ext', 'nbagent'); import sys; "
            "assert 'anthropic' not in sys.modules, 'the SDK was imported'")


def old_way(ksm: KernelSpecManager, name: str) -> float:
    """What ``jupyter_client.start_new_kernel`` (the previous version of this bench) times."""
    t0 = time.perf_counter()
    km = KernelManager(kernel_name=name, kernel_spec_manager=ksm)
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    elapsed = time.perf_counter() - t0
    stop(km, kc)
    return elapsed


def main(argv: list[str]) -> int:
    pairs = int(next((a for a in argv if a.isdigit()), PAIRS))
    ksm, _tmp = kernelspec_manager()
    starts: list[tuple[float, float]] = []
    cpus: list[tuple[float, float]] = []
    olds: list[tuple[float, float]] = []
    for i in range(pairs):
        order = ("python3", "nbagent") if i % 2 == 0 else ("nbagent", "python3")
        took, cpu = {}, {}
        for name in order:
            km, kc, took[name] = start(ksm, name)
            cpu[name] = cpu_seconds(km)
            stop(km, kc)
        starts.append((took["python3"], took["nbagent"]))
        if cpu["python3"] and cpu["nbagent"]:
            cpus.append((cpu["python3"], cpu["nbagent"]))
        if "--old-way" in argv:
            old = {name: old_way(ksm, name) for name in order}
            olds.append((old["python3"], old["nbagent"]))
    stock, ours, ratio = ratio_summary(starts)
    print(f"kernel start to kernel_info reply ({pairs} interleaved pairs, fresh kernelspecs): ipykernel "
          f"{stock * 1000:.0f} ms, nbagent {ours * 1000:.0f} ms (+{(ours - stock) * 1000:.0f} ms); "
          f"P6 ratio {ratio:.2f} (goal <= 1.2)")
    if cpus:
        stock, ours, ratio = ratio_summary(cpus)
        print(f"  CPU time of the kernel process to that reply: ipykernel {stock * 1000:.0f} ms, nbagent "
              f"{ours * 1000:.0f} ms (+{(ours - stock) * 1000:.0f} ms); ratio {ratio:.2f}")
    if olds:
        stock, ours, ratio = ratio_summary(olds)
        print(f"  the old way (start_new_kernel, iopub flush included): ipykernel {stock * 1000:.0f} ms, "
              f"nbagent {ours * 1000:.0f} ms; ratio {ratio:.2f}")
    times: dict[str, list[float]] = {k: [] for k in ("sdk", "load_ext", "ipython", "import")}
    for _ in range(max(3, pairs // 2)):
        times["sdk"].append(in_fresh_process("import anthropic"))
        times["load_ext"].append(in_fresh_process(LOAD_EXT))
        times["ipython"].append(in_fresh_process("import IPython"))
        times["import"].append(in_fresh_process("import nbagent"))
    m = {k: statistics.median(v) for k, v in times.items()}
    print(f"%load_ext nbagent {m['load_ext']:.3f} s ÷ import anthropic {m['sdk']:.3f} s = "
          f"{m['load_ext'] / m['sdk']:.2f} (goal <= 1.5)")
    print(f"import nbagent {m['import'] * 1000:.1f} ms ÷ import IPython {m['ipython'] * 1000:.1f} ms = "
          f"{m['import'] / m['ipython']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
