"""docs/api.md lists every public name (``nbagent.__all__``) and nothing else, and every example in it
runs as written (offline, against the simulated API)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import nbagent

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE, re.S)
# A listed name is a table row whose first cell is the name in backticks: | `Agent` | one line |
LISTED = re.findall(r"^\| `([A-Za-z_][A-Za-z0-9_]*)` \| ([^|]+) \|$", PAGE, re.M)


def test_the_api_page_has_its_examples() -> None:
    assert len(BLOCKS) == 8  # the six core names (Asker twice: with and without one), then hooks and events


def test_the_api_page_lists_every_public_name_and_only_those() -> None:
    names = [name for name, _ in LISTED]
    assert sorted(set(names) - set(nbagent.__all__)) == []  # listed but not exported
    assert sorted(set(nbagent.__all__) - set(names)) == []  # exported but not listed
    assert len(names) == len(set(names))  # each once


def test_each_listed_name_has_one_line_saying_what_it_is() -> None:
    assert all(line.strip() for _, line in LISTED)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"example{i}" for i in range(len(BLOCKS))])
def test_each_api_example_runs_as_written(code: str, tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
