"""Fresh kernelspecs and the one wait a user has at kernel start, shared by the start-up benches.

Both kernels get a kernelspec written to a temporary folder: ``argv[0]`` is this Python and
``PYTHONPATH`` points at the nbagent checkout under test (``NBAGENT_SRC``, default this one), so
what is measured is this source, not whatever kernelspec or nbagent happens to be installed.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from queue import Empty
from typing import Any

from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

SRC = os.environ.get("NBAGENT_SRC", str(Path(__file__).resolve().parents[1]))
KERNELS = {"python3": "ipykernel_launcher", "nbagent": "nbagent.kernel"}


def kernelspec_manager(env: dict[str, str] | None = None) -> tuple[KernelSpecManager, tempfile.TemporaryDirectory[str]]:
    """A manager that sees only the two fresh kernelspecs (keep the returned folder alive)."""
    tmp = tempfile.TemporaryDirectory(prefix="nbagent-bench-")
    for name, module in KERNELS.items():
        folder = Path(tmp.name) / name
        folder.mkdir()
        spec = {"argv": [sys.executable, "-m", module, "-f", "{connection_file}"], "display_name": name,
                "language": "python", "env": {"PYTHONPATH": SRC, **(env or {})}}
        (folder / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    return KernelSpecManager(kernel_dirs=[tmp.name]), tmp


def start(ksm: KernelSpecManager, name: str, timeout: float = 60.0) -> tuple[KernelManager, BlockingKernelClient, float]:
    """Start a fresh kernel process; seconds from the launch until its ``kernel_info`` reply.

    Not ``jupyter_client.start_new_kernel`` (this bench's previous way): after the reply its
    ``wait_for_ready`` also waits for an iopub message and then flushes iopub until 0.2 s of silence,
    so every start carries at least 0.2 s that no front-end makes the user wait; added to both
    kernels, it dilutes their ratio (measured in one run: 1.81 this way, 1.50 the old way).
    """
    km = KernelManager(kernel_name=name, kernel_spec_manager=ksm)
    t0 = time.perf_counter()
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    msg_id = kc.kernel_info()
    deadline = t0 + timeout
    while True:
        try:
            reply = kc.get_shell_msg(timeout=max(0.01, deadline - time.perf_counter()))
        except Empty:
            raise RuntimeError(f"kernel {name} did not answer kernel_info in {timeout} s") from None
        if reply["parent_header"].get("msg_id") == msg_id:
            return km, kc, time.perf_counter() - t0


def cpu_seconds(km: KernelManager) -> float | None:
    """CPU time (user + system) the kernel process has used so far, from ``/proc`` (Linux; else
    ``None``). Read right after the reply, it is the start's cost with the machine's other load
    left out, which wall-clock time on a shared machine is not (10 ms resolution)."""
    process = getattr(km.provisioner, "process", None)
    if process is None:
        return None
    try:
        fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (AttributeError, OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(km: KernelManager, kc: BlockingKernelClient) -> None:
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def ratio_summary(pairs: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Median of A, median of B and the median of the per-pair ratios B/A."""
    import statistics

    return (statistics.median(a for a, _ in pairs), statistics.median(b for _, b in pairs),
            statistics.median(b / a for a, b in pairs))


def drain(kc: BlockingKernelClient) -> list[dict[str, Any]]:
    msgs = []
    while True:
        try:
            msgs.append(kc.get_iopub_msg(timeout=0.05))
        except Empty:
            return msgs
