"""Kernels nbagent starts itself (the unattended runner, the demo, the tests' driver) talk over
local IPC sockets: no TCP port, so no "running over TCP without encryption" warning, and no
socket files left behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
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
    # Short: a socket's address has at most ~103 bytes (pytest-xdist's folders are deeper)
    runtime = Path(tempfile.mkdtemp(prefix="rt-"))
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)}
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "nb.ipynb")], capture_output=True, text=True,
                         timeout=120, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("42")
    assert "without encryption" not in out.stderr and "TCP" not in out.stderr, out.stderr
    assert not [p for p in runtime.iterdir() if p.name.startswith("nbagent-kernel-")]  # sockets removed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb.ipynb"]  # none in the working folder
    shutil.rmtree(runtime)


@pytest.mark.skipif(os.name == "nt", reason="ZeroMQ has no IPC sockets on Windows: TCP there")
def test_a_runtime_folder_too_deep_for_a_socket_address_keeps_the_kernel_on_tcp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_client import KernelManager

    from nbagent.notebook.autorun import IPC_PATH_MAX, local_transport

    deep = tmp_path / ("d" * 40) / ("e" * 40)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(deep))
    km = local_transport(KernelManager(kernel_name="python3"))
    assert km.transport == "tcp" and not deep.exists()  # it would have failed "File name too long"
    short = Path(tempfile.mkdtemp(prefix="rt-"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(short))
    km = local_transport(KernelManager(kernel_name="python3"))
    shutil.rmtree(short)
    assert km.transport == "ipc" and len(km.ip) + 3 <= IPC_PATH_MAX and km.ip.startswith(str(short))
