"""P6: start of the nbagent kernel ÷ stock ipykernel (until the first reply), interleaved; and
``%load_ext nbagent`` ÷ ``import anthropic``, ``import nbagent`` ÷ ``import IPython`` (fresh
processes). Goals: P6 ≤ 1.2, load_ext ÷ SDK import ≤ 1.5 (the SDK is imported only when the first
prompt needs a provider). Needs both kernelspecs installed (``python -m nbagent.kernel install``).
Run: ``.venv/bin/python bench/bench_startup.py [ROUNDS]``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from jupyter_client.manager import start_new_kernel

ROUNDS = 5
PY = sys.executable


def kernel_start(name: str) -> float:
    start = time.perf_counter()
    km, kc = start_new_kernel(kernel_name=name)  # returns once the kernel answered kernel_info
    elapsed = time.perf_counter() - start
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    return elapsed


def in_fresh_process(code: str) -> float:
    out = subprocess.run([PY, "-c", f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


LOAD_EXT = ("from IPython.core.interactiveshell import InteractiveShell; ip = InteractiveShell.instance(); "
            "t = time.perf_counter(); ip.run_line_magic('load_ext', 'nbagent'); import sys; "
            "assert 'anthropic' not in sys.modules, 'the SDK was imported'")


def main(argv: list[str]) -> int:
    rounds = int(argv[0]) if argv else ROUNDS
    times: dict[str, list[float]] = {k: [] for k in ("python3", "nbagent", "sdk", "load_ext", "ipython", "import")}
    for _ in range(rounds):
        for name in ("python3", "nbagent"):
            times[name].append(kernel_start(name))
        times["sdk"].append(in_fresh_process("import anthropic"))
        times["load_ext"].append(in_fresh_process(LOAD_EXT))
        times["ipython"].append(in_fresh_process("import IPython"))
        times["import"].append(in_fresh_process("import nbagent"))
    m = {k: statistics.median(v) for k, v in times.items()}
    print(f"kernel start: ipykernel {m['python3']:.3f} s, nbagent {m['nbagent']:.3f} s; "
          f"P6 ratio {m['nbagent'] / m['python3']:.2f} (goal <= 1.2)")
    print(f"%load_ext nbagent {m['load_ext']:.3f} s ÷ import anthropic {m['sdk']:.3f} s = "
          f"{m['load_ext'] / m['sdk']:.2f} (goal <= 1.5)")
    print(f"import nbagent {m['import'] * 1000:.1f} ms ÷ import IPython {m['ipython'] * 1000:.1f} ms = "
          f"{m['import'] / m['ipython']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
