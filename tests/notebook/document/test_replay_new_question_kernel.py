"""Replay belongs to re-running a recorded notebook, not to a new question (real kernels, cells
sent with ids as JupyterLab and Notebook 7 send them): a ``--new`` prompt typed in a live kernel, a
cell that did not ask the recorded turn, or another notebook in the same folder asks the model."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.kernel_driver import KernelDriver

pytestmark = pytest.mark.kernel

QUESTION = "Which region has the largest total revenue in sales?"
OLD = "pd.DataFrame({'region': ['north', 'west'], 'revenue': [262.0, 50.0]})"
NEW = "pd.DataFrame({'region': ['north', 'west'], 'revenue': [262.0, 871.5]})"
SETUP = "%load_ext nbagent\n%config AgentMagics.allow = ['python']\nimport pandas as pd"


class Notebook:
    """A kernel running cells of one notebook, each with its cell id."""

    def __init__(self, cwd: Path, name: str = "analysis.ipynb") -> None:
        self.d = KernelDriver("python3", env={"JPY_SESSION_NAME": str(cwd / name)}, cwd=str(cwd))

    def run(self, code: str, cell_id: str | None) -> str:
        run = self.d.wait_done(self.d.execute(code, cell_id=cell_id), 120)
        assert run.status == "ok", run.text
        return run.text

    def close(self) -> None:
        self.d.close()


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Iterator[Path]:
    """A folder holding the record of analysis.ipynb: setup, data, and the agent cell ``ask``."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    nb = Notebook(tmp_path)
    try:
        nb.run(SETUP, "setup")
        nb.run(f"sales = {OLD}", "data")
        assert "north has the largest total revenue (262.00)" in nb.run(f"%%agent\n{QUESTION}", "ask")
    finally:
        nb.close()
    yield tmp_path


def test_the_recorded_cell_run_again_after_a_restart_replays(folder):
    nb = Notebook(folder)
    try:
        nb.run(SETUP, "setup")
        nb.run(f"sales = {OLD}", "data")
        assert "replayed: session" in nb.run(f"%%agent\n{QUESTION}", "ask")
    finally:
        nb.close()


def test_a_new_cell_asking_the_same_question_of_new_data_asks_the_model(folder):
    nb = Notebook(folder)
    try:
        nb.run(SETUP, "setup")
        nb.run(f"sales = {NEW}", "data-2")
        out = nb.run(f"%%agent --new\n{QUESTION}", "new-question")
    finally:
        nb.close()
    assert "replayed" not in out and "west has the largest total revenue (871.50)" in out


def test_after_a_live_turn_a_new_prompt_without_a_cell_id_asks_the_model(folder):
    nb = Notebook(folder)
    try:
        nb.run(SETUP, None)
        nb.run(f"sales = {OLD}", None)
        nb.run("%%agent\nwhat is 2 + 2? use python", None)  # a live turn: this kernel asks its own questions
        nb.run(f"sales = {NEW}", None)
        out = nb.run(f"%%agent --new\n{QUESTION}", None)  # as a console sends it
    finally:
        nb.close()
    assert "replayed" not in out and "west has the largest total revenue (871.50)" in out


def test_another_notebook_in_the_same_folder_asking_the_same_prompt_asks_the_model(folder):
    nb = Notebook(folder, "second.ipynb")
    try:
        nb.run(SETUP, "setup")
        nb.run(f"sales = {OLD}", "data")
        out = nb.run(f"%%agent\n{QUESTION}", "ask")  # even a copied cell id: another notebook's record
    finally:
        nb.close()
    assert "replayed" not in out and "north has the largest total revenue (262.00)" in out
