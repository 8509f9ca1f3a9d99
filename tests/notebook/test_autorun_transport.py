"""Kernels nbagent starts itself (the unattended runner, the demo, the tests' driver) talk over
local IPC sockets: no TCP port, so no "running over TCP without encryption" warning, and no
socket files left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbclient")

SCRIPT = """
import nbformat, sys
from nbagent.notebook.autorun import run_notebook
nb = nbformat.v4.new_notebook()
nb.cells.append(nbformat.v4.new_code_cell("import os; print(41 + 1)"))
nbformat.write(nb, sys.argv[1])
out = run_notebook(sys.argv[1], kernel_name="python3", timeout=60)
print(out.cells[0].outputs[0]["text"].strip())
"""


@pytest.mark.skipif(os.name == "nt", reason="ZeroMQ has no IPC sockets on Windows: TCP there")
def test_the_runner_starts_its_kernel_without_the_tcp_warning_and_leaves_no_sockets(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)}
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "nb.ipynb")], capture_output=True, text=True,
                         timeout=120, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("42")
    assert "without encryption" not in out.stderr and "TCP" not in out.stderr, out.stderr
    assert not [p for p in runtime.iterdir() if p.name.startswith("nbagent-kernel-")]  # sockets removed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb.ipynb", "runtime"]  # none in the working folder
