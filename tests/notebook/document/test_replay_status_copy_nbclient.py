"""Headless, a copy made to show ``%agent context`` (or status, history) names the notebook it is a
copy of, so the next headless run still replays.

Notebook 08 run three times with ``nbconvert --execute`` in the notebooks folder: run 2 replays and
its ``%agent context`` cell copies the record (the kernel does not know its notebook); the copy's
index named no notebook, because that cell's text is in several notebooks of the folder (02 has it
too). Run 3 then saw "a headless run of an unnamed notebook" newer than 08's own record and asked
the model again — every other CI run a paid request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from .test_replay_changed_nbclient import text
from .test_replay_two_notebooks_nbclient import notebooks_recorded

pytestmark = pytest.mark.kernel


def write(folder: Path, name: str, cells: list[str]) -> None:
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), folder / name)


def run(folder: Path, name: str) -> Any:
    nb = nbformat.read(folder / name, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def test_a_headless_rerun_replays_after_the_run_before_copied_the_record_for_agent_context(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the offline simulated model answers
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    write(tmp_path, "lesson.ipynb", ["%load_ext nbagent\n%config AgentMagics.allow = ['python']",
                                     "%%agent\nwhat is 17 * 23? use python", "%agent context"])
    write(tmp_path, "other.ipynb", ["%load_ext nbagent", "%agent context"])  # the same inspection cell

    runs = [text(run(tmp_path, "lesson.ipynb").cells[1]) for _ in range(3)]

    assert "replayed: session" not in runs[0]
    assert all("replayed: session" in out and "no recorded answer" not in out for out in runs[1:]), runs[2]
    assert "" not in notebooks_recorded(tmp_path)  # every record names the notebook it belongs to
