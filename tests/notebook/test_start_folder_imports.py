"""nbagent's own imports never take a module from the folder the kernel started in, after ``%cd`` too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import os, sys
sys.path.insert(0, os.getcwd())  # the start folder by absolute path (a cell's sys.path.append(os.getcwd()))
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ["NBAGENT_NO_WARMUP"] = "1"
from IPython.testing.globalipapp import start_ipython
ip = start_ipython()
ip.run_cell("%cd data")  # the data's folder, before anything of nbagent's
ip.run_cell("%load_ext nbagent")
ip.run_cell("%%agent\\nsay hi")  # the first prompt: pandas imported, which tries pyarrow
print("pandas" in sys.modules)
"""


def test_a_start_folders_optional_dependency_never_runs_after_cd(tmp_path: Path) -> None:
    # before: the guard refused the working folder only; after %cd the notebook's folder stayed on
    # sys.path by absolute path, and pandas' try of pyarrow at the first prompt ran its pyarrow.py
    (tmp_path / "data").mkdir()
    ran = tmp_path / "ran.txt"
    (tmp_path / "pyarrow.py").write_text(f"open({str(ran)!r}, 'w').write('ran')\nraise ImportError('no')\n")
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "True"  # the prompt did import pandas
    assert not ran.exists()
