"""Two notebooks of one folder that start with the same question, run headless (nbclient, as
``nbconvert --execute`` and papermill do: no notebook name, no cell ids). After the data changes
and the other notebook asks again under ``--if-changed live``, the ``fail`` notebook must still
fail on its own record, never replay the other notebook's new answer as its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from .test_replay_changed_nbclient import text

pytestmark = pytest.mark.kernel

QUESTION = "Which region has the largest total revenue in sales?"
ROWS = "region,revenue\nnorth,262\nsouth,100\nwest,50\nnorth,0\n"  # whole numbers: a total said as pandas prints it, (262)
CHANGED = ROWS.replace("west,50", "west,871.5")


def write(folder: Path, name: str, policy: str) -> None:
    cells = ["%load_ext nbagent\n%config AgentMagics.allow = ['python']",
             "import pandas as pd\nsales = pd.read_csv('sales.csv')", f"%%agent --if-changed {policy}\n{QUESTION}"]
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), folder / name)


def run(folder: Path, name: str) -> Any:
    nb = nbformat.read(folder / name, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def notebooks_recorded(folder: Path) -> list[str | None]:
    return sorted((json.loads(p.read_text())["notebook"] or "") for p in (folder / ".nbagent" / "replay").glob("*.json"))


def test_a_fail_notebook_still_fails_after_another_notebook_asked_again_headless(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the offline simulated model answers
    (tmp_path / "sales.csv").write_text(ROWS)
    write(tmp_path, "p1_fail.ipynb", "fail")
    write(tmp_path, "p2_live.ipynb", "live")
    for name in ("p1_fail.ipynb", "p2_live.ipynb"):  # recorded in the browser: the front-end names the notebook
        monkeypatch.setenv("JPY_SESSION_NAME", name)
        assert "north has the largest total revenue (262)" in text(run(tmp_path, name).cells[2])
    monkeypatch.delenv("JPY_SESSION_NAME")
    (tmp_path / "sales.csv").write_text(CHANGED)

    with pytest.raises(CellExecutionError) as first:
        run(tmp_path, "p1_fail.ipynb")
    assert first.value.ename == "ReplayInputsChanged"
    asked = text(run(tmp_path, "p2_live.ipynb").cells[2])
    assert "asking the model again" in asked and "west has the largest total revenue (871.50)" in asked

    with pytest.raises(CellExecutionError) as again:
        run(tmp_path, "p1_fail.ipynb")
    assert again.value.ename == "ReplayInputsChanged" and "`sales` changed since" in again.value.evalue
    assert notebooks_recorded(tmp_path).count("p2_live.ipynb") == 2  # the headless run named its notebook


def test_a_headless_notebook_replays_its_own_record_not_the_newer_one_of_another(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "sales.csv").write_text(ROWS)
    write(tmp_path, "ifx.ipynb", "warn")
    write(tmp_path, "ifl.ipynb", "live")
    run(tmp_path, "ifx.ipynb")  # recorded headless: the only notebook of the folder with this cell
    (tmp_path / "sales.csv").write_text(CHANGED)
    run(tmp_path, "ifl.ipynb")  # asks (no record of its own) and records the new answer, named

    out = text(run(tmp_path, "ifx.ipynb").cells[2])
    assert "replayed: session" in out and "`sales` changed since this answer was recorded" in out
    assert "north has the largest total revenue (262)" in out and "871.50" not in out


def test_identical_notebooks_recorded_apart_are_not_guessed_headless(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "sales.csv").write_text(ROWS)
    for name in ("nb.ipynb", "nb-Copy1.ipynb"):  # a copy, each recorded in the browser
        write(tmp_path, name, "warn")
        monkeypatch.setenv("JPY_SESSION_NAME", name)
        run(tmp_path, name)
    monkeypatch.delenv("JPY_SESSION_NAME")

    out = text(run(tmp_path, "nb.ipynb").cells[2])
    assert "replayed: session" not in out
    assert ("ⓘ no recorded answer for this cell here: nb-Copy1.ipynb and nb.ipynb recorded this prompt, and a "
            "headless run (nbclient, papermill, nbconvert --execute) cannot tell which notebook it is") in out
    assert "north has the largest total revenue (262)" in out  # asked the model again


def test_a_recorded_cell_after_one_that_could_not_replay_says_why_it_asks_headless(tmp_path, monkeypatch):
    """The first agent cell's question is in two notebooks' records, so a headless run cannot tell
    which is this one and asks (saying so); the next agent cell, whose turn only this notebook
    recorded, went live too with no line at all (a silent live run where a replay was expected)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "sales.csv").write_text(ROWS)
    for name in ("nb.ipynb", "nb-Copy1.ipynb"):
        write(tmp_path, name, "warn")
    nb = nbformat.read(tmp_path / "nb.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("%%agent\nWhat is 12 * 12?"))
    nbformat.write(nb, tmp_path / "nb.ipynb")
    for name in ("nb.ipynb", "nb-Copy1.ipynb"):  # each recorded in the browser
        monkeypatch.setenv("JPY_SESSION_NAME", name)
        run(tmp_path, name)
    monkeypatch.delenv("JPY_SESSION_NAME")

    cells = run(tmp_path, "nb.ipynb").cells
    assert "cannot tell which notebook it is" in text(cells[2])
    later = text(cells[3])
    assert ("ⓘ this cell's recorded answer (turn 2) is not replayed: an agent cell before it asked the model in "
            "this kernel, so the conversation that answer followed has changed: asking the model.") in later
    assert "12 * 12 = 144" in later


def test_a_renamed_notebook_run_headless_names_the_record_of_its_old_name(tmp_path, monkeypatch):
    """Recorded as ``sales.ipynb`` (the browser named it), renamed ``report.ipynb``, then run with
    nbconvert or papermill: no notebook of the folder is ``sales.ipynb``, so the cell asks the model,
    and it said no record began with its prompt ("a new or edited cell"), which was untrue (newcomer
    pass 19): it now names the record's notebook and why it is not replayed."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "sales.csv").write_text(ROWS)
    write(tmp_path, "sales.ipynb", "warn")
    monkeypatch.setenv("JPY_SESSION_NAME", "sales.ipynb")
    run(tmp_path, "sales.ipynb")
    monkeypatch.delenv("JPY_SESSION_NAME")
    (tmp_path / "sales.ipynb").rename(tmp_path / "report.ipynb")

    out = text(run(tmp_path, "report.ipynb").cells[2])
    assert "the record beside the notebook (.nbagent/) that begins with this prompt is sales.ipynb's, which is " \
           "not in this folder (renamed, moved or deleted since)" in out, out
    assert "a new or edited cell" not in out and "replayed: session" not in out


def test_a_notebook_whose_sessions_folder_was_deleted_says_so_headless(tmp_path, monkeypatch):
    """``.nbagent/sessions/`` (the folder's big part) deleted, ``.nbagent/replay/`` kept, then the
    notebook run with nbconvert: a replay needs the session, so the cell asks the model, and it said
    no record began with its prompt ("a new or edited cell"), which was untrue (newcomer pass 25)."""
    import shutil

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "sales.csv").write_text(ROWS)
    write(tmp_path, "sales.ipynb", "warn")
    run(tmp_path, "sales.ipynb")
    shutil.rmtree(tmp_path / ".nbagent" / "sessions")

    out = text(run(tmp_path, "sales.ipynb").cells[2])
    assert "the record beside the notebook (.nbagent/replay/) that begins with this prompt has lost its session " \
           "folder (.nbagent/sessions/ deleted or moved), which a replay needs: asking the model." in out, out
    assert "a new or edited cell" not in out and "replayed: session" not in out
