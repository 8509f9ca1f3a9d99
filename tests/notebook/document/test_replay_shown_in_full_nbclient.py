"""An answer the model gave from what it was shown, without running code, is stale when what it
was shown changed: the kernel context described ``sales`` in full (its columns' levels, missing
counts and sample rows), or quoted a cell's ``Out[n]``. A replay after one value of the CSV changed
must say so, although the frame's shape and columns are the same (all that a variable only shown was
compared by) and no variable holds the output; or sent a plot's image (no variable, no ``Out[n]``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tests.notebook.document.test_replay_changed_nbclient import text  # a cell's printed text

pytestmark = pytest.mark.kernel

ROWS = "region,revenue\nnorth,262\nsouth,100\nwest,50\n"
SETUP = ("%load_ext nbagent\nimport nbagent\n"
         "from nbagent.providers.simulated.script import ScriptedResponder, text_reply\n"
         "nbagent.notebook.magics.active_magics().new_session()\n"
         "nbagent.session().agent.simulated_api.responder = ScriptedResponder(\n"
         "    [text_reply('From the rows shown: north has the most revenue (262).')])")
WARNING = "`sales` changed since this answer was recorded: add --live to ask again."


ASK_SHOWN = "%%agent\nWhich region of `sales` has the most revenue? Answer from what you were shown."
OUTPUT = "pd.read_csv('sales.csv').revenue.sum()"


def run(cwd: Path, middle: str = "sales = pd.read_csv('sales.csv')", ask: str = ASK_SHOWN) -> Any:
    cells = [SETUP + "\nimport pandas as pd", middle, ask]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def test_a_changed_value_of_a_frame_described_in_full_makes_its_replay_say_so(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the offline simulated model answers
    (tmp_path / "sales.csv").write_text(ROWS)
    live = run(tmp_path)
    assert "north has the most revenue" in text(live.cells[2]) and "replayed" not in text(live.cells[2])
    again = run(tmp_path)  # unchanged: replayed silently
    assert "replayed: session" in text(again.cells[2]) and "changed since" not in text(again.cells[2])

    (tmp_path / "sales.csv").write_text(ROWS.replace("west,50", "west,871.5"))  # same shape and columns
    again = run(tmp_path)
    out = text(again.cells[2])
    assert "replayed: session" in out and WARNING in out, out


def test_a_changed_output_the_model_was_told_makes_its_replay_say_so(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "sales.csv").write_text(ROWS)
    ask = "%%agent\nWhat is the total revenue above? Answer from the output."
    live = run(tmp_path, OUTPUT, ask)
    assert "412" in text(live.cells[1]) and "north has the most revenue" in text(live.cells[2])
    again = run(tmp_path, OUTPUT, ask)
    assert "replayed: session" in text(again.cells[2]) and "changed since" not in text(again.cells[2])

    (tmp_path / "sales.csv").write_text(ROWS.replace("west,50", "west,871.5"))
    again = run(tmp_path, OUTPUT, ask)
    out = text(again.cells[2])
    assert f"the output of the cell `{OUTPUT}` changed since this answer was recorded" in out, out


def test_a_changed_image_the_model_was_sent_makes_its_replay_say_so(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "sales.csv").write_text(ROWS)
    plot = "pd.read_csv('sales.csv').revenue.plot();"  # no variable holds it, and no Out[n]: the image only
    ask = "%%agent\nWhat does the plot show? Answer from the image."
    live = run(tmp_path, plot, ask)
    assert "north has the most revenue" in text(live.cells[2])
    # The inline backend shows the figure after the cell's code ran: it is In[2]'s, not the next cell's.
    sent = "".join(p.read_text() for p in tmp_path.glob(".nbagent/sessions/*/api_conversation_history.json"))
    assert "Image displayed by In[2]" in sent and "Image displayed by In[3]" not in sent
    again = run(tmp_path, plot, ask)  # the same data draws the same PNG: replayed silently
    assert "replayed: session" in text(again.cells[2]) and "changed since" not in text(again.cells[2])

    (tmp_path / "sales.csv").write_text(ROWS.replace("west,50", "west,871.5"))
    again = run(tmp_path, plot, ask)
    out = text(again.cells[2])
    assert f"the image of the cell `{plot}` changed since this answer was recorded" in out, out


EXPERIMENT = ("import json\n"
              "class Experiment:\n"
              "    def __init__(self, runs): self.runs = runs\n"
              "    def _repr_llm_(self):\n"
              "        return f'Experiment: {len(self.runs)} runs, best loss {min(self.runs):.3f}'\n"
              "exp = Experiment(json.load(open('runs.json')))")
ASK_EXP = "%%agent\nWhat is the best loss of `exp`? Answer from what you were shown."


def test_a_changed_llm_repr_the_model_was_told_makes_its_replay_say_so(tmp_path, monkeypatch):
    # The model answered from `exp`'s _repr_llm_ text; nbagent has no content fingerprint for an
    # object of the user's class, so a replay after the runs changed showed the old best loss as current.
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "runs.json").write_text("[0.5, 0.25]")
    live = run(tmp_path, EXPERIMENT, ASK_EXP)
    assert "replayed" not in text(live.cells[2])
    again = run(tmp_path, EXPERIMENT, ASK_EXP)  # unchanged: replayed silently
    assert "replayed: session" in text(again.cells[2]) and "changed since" not in text(again.cells[2])

    (tmp_path / "runs.json").write_text("[0.5, 0.125]")  # the same cell, another best loss
    again = run(tmp_path, EXPERIMENT, ASK_EXP)
    out = text(again.cells[2])
    assert "replayed: session" in out and "`exp` changed since this answer was recorded" in out, out
