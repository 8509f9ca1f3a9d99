"""A cell the agent's code became is an input of the answer that quotes it: edited since (``.sum()``
→ ``.mean()``), the replayed answer says so before it is shown, as for a changed variable or file.
In-process kernel with the Python front-end (the real one in tests/e2e/test_day_three.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.notebook.document import made_cells
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.inputs import TurnInputs, cell_key
from nbagent.notebook.document.made_cells import edited_made_cells, made_keys, notebook_now

from .test_replay_from_notebook import Lab, lab  # noqa: F401  (fixture)

CHANGED = "changed since this answer was recorded"


def _made(front: Lab) -> list[dict[str, Any]]:
    return [c for c in front.front.cells if (c["metadata"].get("nbagent") or {}).get("kind") == "code"]


def _recorded_with_one_made_cell(lab: Lab) -> dict[str, Any]:  # noqa: F811
    assert "391" in lab.run()
    made = _made(lab)
    assert len(made) == 1 and "17" in made[0]["source"]
    return made[0]


def test_a_replayed_answer_says_when_a_cell_its_code_made_was_edited(lab):  # noqa: F811
    made = _recorded_with_one_made_cell(lab)
    lab.restart()
    again = lab.run()
    assert "replayed: session" in again and CHANGED not in again  # as made: the record, silently

    made["source"] = "print(17 * 24)"  # the user's edit: Run All now runs this under the old answer
    lab.restart()
    lab.front.requests.clear()
    again = lab.run()
    reads = [r for r in lab.front.requests if r["op"] == "read"]
    assert reads and all(r.get("lean") is True for r in reads)  # texts and marks: no plots nor records sent for it

    line = "the cell `print(17 * 24)` the agent made changed since this answer was recorded: add --live"
    assert line in again and again.index(line) < again.index("391"), again


def test_an_edited_made_cell_fails_the_replay_under_the_fail_policy(lab):  # noqa: F811
    made = _recorded_with_one_made_cell(lab)
    made["source"] = made["source"] + "\nprint('and more')"
    lab.restart()
    lab.front.cells[0]["source"] = lab.front.cells[0]["source"].replace("%%agent", "%%agent --if-changed fail")
    lab.run(expect_error=True)
    assert "the agent made changed since this answer was recorded (replay policy 'fail')" in lab.error, lab.error


def test_a_deleted_or_copied_made_cell_is_not_called_edited(lab):  # noqa: F811
    made = _recorded_with_one_made_cell(lab)
    copy = {**made, "id": "c-copy", "source": "17 * 23 + 1", "metadata": dict(made["metadata"])}
    lab.front.cells.append(copy)  # a pasted copy the user changed; the original is as made
    lab.restart()
    assert CHANGED not in lab.run()

    lab.front.cells.remove(made)  # deleted: Run All no longer runs it (the copy alone is not the answer's)
    lab.front.cells.remove(copy)
    lab.restart()
    assert CHANGED not in lab.run()


def test_the_fingerprint_of_code_holding_a_secret_is_not_saved():
    redact = lambda text: text.replace("hunter22", "[redacted]")  # noqa: E731
    keys = made_keys({"toolu_1": "x = 1", "toolu_2": "pw = 'hunter22'"}, redact)
    assert keys == {"toolu_1": cell_key("x = 1"), "toolu_2": ""}
    # "" is never compared: an edited cell whose made code held a secret is not reported
    cell = {"cell_type": "code", "source": "pw = 'other'", "metadata": {"nbagent": {"kind": "code", "tool_use_id": "toolu_2"}}}
    assert edited_made_cells(keys, [cell]) == []  # type: ignore[list-item]


def test_the_made_cells_travel_in_the_record_and_an_older_record_reads_as_before():
    inputs = TurnInputs(made={"toolu_1": cell_key("x = 1")})
    assert TurnInputs.from_json(inputs.to_json()) == inputs
    older = TurnInputs().to_json()
    assert "made" not in older and TurnInputs.from_json(older).made == {}
    with pytest.raises(ValueError):
        TurnInputs.from_json({**older, "made": {"toolu_1": 3}})


def test_a_headless_run_reads_the_made_cells_from_the_notebook_file(tmp_path: Path, monkeypatch):
    agent = "%%agent\nwhat is 17 * 23? use python"
    made = nbformat.v4.new_code_cell("print(17 * 24)", metadata={"nbagent": {"kind": "code", "tool_use_id": "toolu_1"}})
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(agent), made])
    nbformat.write(nb, tmp_path / "analysis.ipynb")
    monkeypatch.setattr(made_cells, "executing_code", lambda: agent)  # what nbclient sends: the text alone

    cells = notebook_now(Bridge(), tmp_path)  # no page answers here

    assert cells is not None
    assert edited_made_cells({"toolu_1": cell_key("print(17 * 23)")}, cells) == [
        "the cell `print(17 * 24)` the agent made"]


def test_an_edited_made_cell_is_named_without_the_key_typed_into_it():
    key = "sk-ant-api03-" + "Zq7" * 30
    cell = {"cell_type": "code", "source": f'client = make(api_key="{key}")',
            "metadata": {"nbagent": {"kind": "code", "tool_use_id": "toolu_1"}}}
    named = edited_made_cells({"toolu_1": cell_key("client = make()")}, [cell])  # type: ignore[list-item]
    assert named == ['the cell `client = make(api_key="[redacted]")` the agent made']


def test_a_received_record_cannot_check_a_guess_of_a_key_typed_into_a_made_cell():
    key = "sk-ant-api03-" + "Zq7" * 30
    source = f'client = make(api_key="{key}")'
    cell = {"cell_type": "code", "source": source, "metadata": {"nbagent": {"kind": "code", "tool_use_id": "toolu_1"}}}
    right, wrong = cell_key(source), cell_key(source.replace("Zq7", "Zq8", 1))
    assert edited_made_cells({"toolu_1": right}, [cell]) == edited_made_cells({"toolu_1": wrong}, [cell])  # type: ignore[list-item]


def test_an_edited_made_cell_holding_a_password_of_the_notebook_is_named_without_it(lab):  # noqa: F811
    """The replay's redaction knows the namespace's credentials (a variable named as one), not only
    key shapes: a password typed into the agent's cell is not printed in the changed line."""
    made = _recorded_with_one_made_cell(lab)
    lab.ip.user_ns["db_password"] = "correct-horse-battery"
    made["source"] = 'connect(password="correct-horse-battery")'
    lab.restart()
    again = lab.run()
    assert "correct-horse-battery" not in again and "the agent made changed since" in again, again
    del lab.ip.user_ns["db_password"]


def test_another_sessions_cell_with_the_same_tool_id_is_not_this_answers(lab):  # noqa: F811
    """The offline model numbers tool ids from 1 in each session: agent cell B (``--new``) made a
    cell with A's id. A's own cell deleted, A's replay named B's cell, unchanged, "changed" (review)."""
    made = _recorded_with_one_made_cell(lab)
    lab.front.cells.append({"id": "b-agent", "cell_type": "code", "source": "%%agent --new\nwhat is 5 * 7? use python",
                            "metadata": {}, "outputs": [], "execution_count": None})
    assert "35" in lab.run(len(lab.front.cells) - 1)
    ids = [c["metadata"]["nbagent"]["tool_use_id"] for c in _made(lab)]
    assert len(ids) == 2 and ids[0] == ids[1]  # the collision this test is about
    lab.front.cells.remove(made)
    lab.restart()
    again = lab.run()
    assert "replayed: session" in again and CHANGED not in again, again


def test_a_password_typed_into_a_made_cell_is_neither_shown_nor_a_guess_oracle() -> None:
    """A literal the code names as a credential is a secret no session holds (review, finding 2)."""
    source = 'conn = connect(host="db", password="Tr0ub4dor&3")'
    cell = {"cell_type": "code", "source": source, "metadata": {"nbagent": {"kind": "code", "tool_use_id": "toolu_1"}}}
    named = edited_made_cells({"toolu_1": cell_key("conn = connect(host='db')")}, [cell])  # type: ignore[list-item]
    assert named == ['the cell `conn = connect(host="db", password="[redacted]")` the agent made']
    right, wrong = cell_key(source), cell_key(source.replace("Tr0ub", "Tr1ub"))
    assert edited_made_cells({"toolu_1": right}, [cell]) == edited_made_cells({"toolu_1": wrong}, [cell])  # type: ignore[list-item]
    assert made_keys({"toolu_1": source}, None) == {"toolu_1": ""}  # not recorded either


@pytest.mark.parametrize("odd", [{"metadata": ["not", "a", "dict"]}, {"metadata": "x"},
                                 {"source": ["print(1)", 3, None]}])
def test_a_malformed_cell_in_the_notebook_file_fails_no_replay(tmp_path: Path, monkeypatch, odd):
    agent = "%%agent\nwhat is 17 * 23? use python"
    made: dict[str, Any] = {"cell_type": "code", "source": "print(17 * 24)", "outputs": [], "execution_count": None,
            "metadata": {"nbagent": {"kind": "code", "tool_use_id": "toolu_1"}}}
    cells: list[dict[str, Any]] = [{"cell_type": "code", "source": agent, "metadata": {}, "outputs": [],
                                    "execution_count": None},
             {"cell_type": "markdown", "source": "notes", "metadata": {}}, made]
    (cells[1] if "metadata" in odd else made).update(odd)
    (tmp_path / "analysis.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                         "nbformat_minor": 5}))
    monkeypatch.setattr(made_cells, "executing_code", lambda: agent)
    found = notebook_now(Bridge(), tmp_path)
    assert found is not None
    assert edited_made_cells({"toolu_1": cell_key("print(17 * 23)")}, found) == [
        "the cell `print(1)` the agent made" if "source" in odd else "the cell `print(17 * 24)` the agent made"]


def test_a_page_that_stopped_answering_holds_a_replay_briefly_and_once(monkeypatch):
    """The check is advisory: it asks with a short timeout and no second try (the review measured
    a 10 s stall per replay where the tab had closed; before the check a replay asked nothing)."""
    from tests.notebook.document.fake_frontend import FakeFrontEnd

    front = FakeFrontEnd()
    bridge = front.connect(Bridge())
    front.answer = False
    asked: list[tuple[float, bool]] = []

    def unanswered(op: str, timeout: float = 10.0, *, retry: bool = True, **args: Any) -> Any:
        asked.append((timeout, retry))
        from nbagent.notebook.document.bridge import BridgeUnavailable
        raise BridgeUnavailable("no answer")
    monkeypatch.setattr(bridge, "request_sync", unanswered)

    assert notebook_now(bridge, Path(".")) is None
    assert asked == [(made_cells.CHECK_TIMEOUT_S, False)] and made_cells.CHECK_TIMEOUT_S <= 3


def test_a_headless_run_all_parses_each_notebook_of_the_folder_once(tmp_path: Path, monkeypatch):
    """Every replayed agent cell asks which notebook holds it (and, with made cells, reads that one):
    a folder of 12 notebooks cost ~0.3 s per agent cell when each was parsed every time (review)."""
    from nbagent.notebook.document import headless

    agents = [f"%%agent\nquestion {i}" for i in range(5)]
    for n in range(4):
        cells = [nbformat.v4.new_code_cell(a if n == 0 else f"x = {n}") for a in agents]
        nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / f"nb{n}.ipynb")
    parsed: list[str] = []
    real = headless._read
    def counted(path: Path) -> dict[str, object]:
        parsed.append(path.name)
        return real(path)
    monkeypatch.setattr(headless, "_read", counted)
    for agent in agents:  # one Run All: each agent cell in turn
        assert headless.notebook_with_cell(tmp_path, agent) == "nb0.ipynb"
    assert sorted(parsed) == [f"nb{n}.ipynb" for n in range(4)]
