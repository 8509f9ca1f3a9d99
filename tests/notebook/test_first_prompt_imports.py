"""A first prompt imports what nbagent needs inside the own-imports guard, before anything else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import os, sys, traceback
sys.path.insert(0, "")
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ["NBAGENT_NO_WARMUP"] = "1"
from nbagent.engine.disk import own_imports
from IPython.testing.globalipapp import start_ipython
ip = start_ipython()
ip.run_cell("%load_ext nbagent")
ip.run_cell("1/0")  # a failed cell, for %agent fix / %agent retry
unguarded = set()
class Spy:
    def find_spec(self, name, path=None, target=None):
        if path is None and not getattr(own_imports._marked, "on", False) and name not in sys.modules:
            if any("/nbagent/" in f.filename for f in traceback.extract_stack()):
                unguarded.add(name)
        return None
sys.meta_path.insert(0, Spy())
ip.run_cell(FIRST)
print(sorted(unguarded & {"pydantic", "tiktoken", "tiktoken_ext", "anthropic", "pandas"}))
"""


@pytest.mark.parametrize("first", [
    "%%agent\nsay hi",
    # before (review of atk27): these imported the executor first too, unguarded
    "%agent fix",
    "%agent retry",
    "get_ipython().run_cell_magic('agent', '', 'say hi')",  # the cell magic's fallback path
])
def test_the_first_prompts_own_imports_are_all_guarded(tmp_path: Path, first: str) -> None:
    # before: the prompt imported the executor (the tools, pydantic, tiktoken) before the guarded
    # warm-up imports: a namespace package (tiktoken_ext) kept the notebook's folder's part
    root = str(Path(__file__).resolve().parents[2])
    script = f"FIRST = {first!r}\n" + SCRIPT
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
