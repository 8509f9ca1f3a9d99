"""The record's index: which record a fresh kernel replays, and what a damaged index does."""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from nbagent.notebook.document.headless import holds_cell, notebook_with_cell
from nbagent.notebook.document.live_lines import ambiguous_line
from nbagent.notebook.document.replay import Found, ReplayIndex, choose_record, find_record, load_index, save_index, sessions_dir


def record(root, name: str, notebook: str | None, prompts: list[str], mtime: float) -> None:
    (sessions_dir(root) / name).mkdir(parents=True, exist_ok=True)
    index = ReplayIndex(session=name, notebook=notebook)
    for n, prompt in enumerate(prompts, 1):
        index = index.with_turn(n, prompt)
    save_index(root, index)
    os.utime(root / ".nbagent" / "replay" / f"{name}.json", (mtime, mtime))


def test_the_latest_record_of_this_notebook_whose_first_prompt_matches(tmp_path):
    record(tmp_path, "old", "a.ipynb", ["load the data", "plot it"], 100)
    record(tmp_path, "new", "a.ipynb", ["load the data", "count it"], 200)
    record(tmp_path, "other", "b.ipynb", ["load the data"], 300)
    assert find_record(tmp_path, "load the data", "a.ipynb").session == "new"
    assert find_record(tmp_path, "load the data", "c.ipynb") is None  # another notebook's is not its record
    assert find_record(tmp_path, "load the data", None) is None  # headless: a.ipynb's or b.ipynb's, who knows
    assert find_record(tmp_path, "load the data", None, holds=lambda name: name == "a.ipynb").session == "new"
    assert find_record(tmp_path, "plot it", "a.ipynb") is None  # only a first prompt starts a replay


def test_a_damaged_index_is_no_record(tmp_path):
    record(tmp_path, "s", "a.ipynb", ["q"], 100)
    path = tmp_path / ".nbagent" / "replay" / "s.json"
    for bad in ({"session": "s"}, {**json.loads(path.read_text()), "turns": [{"turn": 0, "prompt": "q"}]}, [1]):
        path.write_text(json.dumps(bad))
        assert load_index(tmp_path, "s") is None and find_record(tmp_path, "q", None) is None


def test_a_turn_recorded_again_drops_the_later_turns(tmp_path):
    index = ReplayIndex(session="s").with_turn(1, "a").with_turn(2, "b").with_turn(3, "c").with_turn(2, "B")
    assert [(t.turn, t.prompt) for t in index.turns] == [(1, "a"), (2, "B")]
    assert ReplayIndex.from_json(index.to_json()) == index


def test_where_cell_ids_are_known_a_turn_replays_only_in_the_cell_that_asked_it(tmp_path):
    (sessions_dir(tmp_path) / "s").mkdir(parents=True)
    save_index(tmp_path, ReplayIndex(session="s", notebook="a.ipynb").with_turn(1, "q", "cell-1"))
    assert find_record(tmp_path, "q", "a.ipynb", "cell-1").session == "s"
    assert find_record(tmp_path, "q", "a.ipynb", "cell-2") is None  # a new cell asking the same question
    assert find_record(tmp_path, "q", None, None).session == "s"  # nbclient sends no id: prompts only
    assert find_record(tmp_path, "q", None, None, strict=True) is None  # after a live turn: only that very cell
    assert find_record(tmp_path, "q", "a.ipynb", "cell-1", strict=True).session == "s"
    assert ReplayIndex.from_json(load_index(tmp_path, "s").to_json()).turns[0].cell_id == "cell-1"


def test_a_session_path_in_a_received_index_loads_no_other_projects_session(tmp_path):
    project, other = tmp_path / "project", tmp_path / "other"
    record(other, "theirs", "a.ipynb", ["load the data"], 100)
    folder = project / ".nbagent" / "replay"
    folder.mkdir(parents=True)
    target = sessions_dir(other) / "theirs"
    for n, session in enumerate((os.path.relpath(target, sessions_dir(project)), str(target))):
        body = {**ReplayIndex(session=session, notebook="a.ipynb").with_turn(1, "load the data").to_json()}
        (folder / f"evil{n}.json").write_text(json.dumps(body))
        assert find_record(project, "load the data", "a.ipynb") is None
        assert load_index(project, f"evil{n}") is None and load_index(project, session) is None
    assert find_record(other, "load the data", "a.ipynb").session == "theirs"  # a plain name still loads


def write(folder, name: str, *agent_cells: str) -> None:
    cells = [nbformat.v4.new_code_cell("import pandas as pd")] + [nbformat.v4.new_code_cell(c) for c in agent_cells]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), folder / name)


def test_headless_a_record_is_this_notebooks_only_if_its_notebook_here_has_this_very_cell(tmp_path):
    write(tmp_path, "p1.ipynb", "%%agent --if-changed fail\nq")
    write(tmp_path, "p2.ipynb", "%%agent --if-changed live\nq")
    record(tmp_path, "one", "p1.ipynb", ["q"], 100)
    record(tmp_path, "two", "p2.ipynb", ["q"], 200)
    record(tmp_path, "gone", "deleted.ipynb", ["q"], 300)

    def found(code):
        return choose_record(tmp_path, "q", None, holds=lambda name: holds_cell(tmp_path, name, "q", code))

    assert found("%%agent --if-changed fail\nq").index.session == "one"  # not p2's newer record
    assert found("%%agent --if-changed live\nq").index.session == "two"
    assert found(None).ambiguous == ("p1.ipynb", "p2.ipynb")  # by prompt alone both notebooks ask it
    # A third notebook's cell: no record of it; the one of a notebook gone from the folder is named
    # (this notebook renamed since, say), never replayed.
    assert found("%%agent\nq") == Found(gone=("deleted.ipynb",))


def test_headless_a_record_naming_no_notebook_newer_than_this_notebooks_is_ambiguous(tmp_path):
    write(tmp_path, "p1.ipynb", "%%agent\nq")
    record(tmp_path, "mine", "p1.ipynb", ["q"], 100)
    record(tmp_path, "unnamed", None, ["q"], 200)  # a headless run that could not tell its notebook

    chosen = choose_record(tmp_path, "q", None, holds=lambda name: holds_cell(tmp_path, name, "q", "%%agent\nq"))
    assert chosen.index is None and chosen.ambiguous == ("p1.ipynb", None)
    assert "p1.ipynb and a headless run of an unnamed notebook recorded this prompt" in ambiguous_line(
        chosen.ambiguous)
    record(tmp_path, "mine", "p1.ipynb", ["q"], 300)  # asked again here since: this notebook's is the latest
    assert choose_record(tmp_path, "q", None, holds=lambda name: True).index.session == "mine"


def test_headless_records_that_name_no_notebook_replay_as_before(tmp_path):
    record(tmp_path, "old", None, ["q"], 100)  # a notebook run headless only, or by an older nbagent
    record(tmp_path, "new", None, ["q"], 200)
    assert choose_record(tmp_path, "q", None, holds=lambda name: False).index.session == "new"


def test_a_headless_live_turn_names_the_one_notebook_here_with_its_cell(tmp_path):
    write(tmp_path, "p1.ipynb", "%%agent\nq")
    write(tmp_path, "p1.nbconvert.ipynb", "%%agent\nq")  # nbconvert's output of p1: the same notebook
    write(tmp_path, "p2.ipynb", "%%agent --if-changed live\nq")
    assert notebook_with_cell(tmp_path, "%%agent\nq") == "p1.ipynb"
    assert notebook_with_cell(tmp_path, "%%agent --if-changed live\nq") == "p2.ipynb"
    out = nbformat.read(tmp_path / "p1.ipynb", as_version=4)
    out.metadata["papermill"] = {"input_path": "p1.ipynb", "output_path": "out.ipynb"}
    nbformat.write(out, tmp_path / "out.ipynb")  # papermill's output of p1, written as it runs
    assert notebook_with_cell(tmp_path, "%%agent\nq") == "p1.ipynb"
    write(tmp_path, "p1-Copy1.ipynb", "%%agent\nq")
    assert notebook_with_cell(tmp_path, "%%agent\nq") is None  # two notebooks with this cell: no name
    assert notebook_with_cell(tmp_path, None) is None  # not in a kernel


def test_a_received_index_naming_a_path_never_reads_outside_the_folder(tmp_path):
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "x.ipynb", "%%agent\nq")
    os.mkfifo(tmp_path / "fifo.ipynb")
    (tmp_path / "link.ipynb").symlink_to(tmp_path / "sub" / "x.ipynb")
    for name in ("sub/x.ipynb", "../x.ipynb", str(tmp_path / "sub" / "x.ipynb"), "fifo.ipynb", ".x.ipynb", "link.ipynb"):
        assert not holds_cell(tmp_path, name, "q", None)


@pytest.mark.usefixtures("collections_keep_stack_left")
def test_a_notebook_here_nested_too_deep_to_read_is_no_notebook_not_a_failed_cell(tmp_path):
    """A received folder's ``x.ipynb`` of ``[[[…`` (100 KB): a headless live turn reads every notebook of
    the folder to name its own, and the RecursionError failed the agent cell (attacker pass 10)."""
    write(tmp_path, "p1.ipynb", "%%agent\nq")
    (tmp_path / "deep.ipynb").write_text("[" * 100_000)
    assert notebook_with_cell(tmp_path, "%%agent\nq") == "p1.ipynb"
    assert not holds_cell(tmp_path, "deep.ipynb", "q", "%%agent\nq")


def test_a_prompt_that_held_a_secret_is_kept_redacted_and_still_found_by_its_digest(tmp_path):
    asked = "use sk-ant-api03-SECRET to load the data"
    index = ReplayIndex(session="s", notebook="a.ipynb").with_turn(1, asked, said="use [redacted] to load the data")
    (sessions_dir(tmp_path) / "s").mkdir(parents=True)
    save_index(tmp_path, index)

    assert "SECRET" not in (tmp_path / ".nbagent" / "replay" / "s.json").read_text()
    assert load_index(tmp_path, "s") == index
    assert find_record(tmp_path, asked, "a.ipynb") == index
    assert find_record(tmp_path, "use [redacted] to load the data", "a.ipynb") is None  # not the asked prompt
    unchanged = ReplayIndex(session="t").with_turn(1, "q", said="q")
    assert unchanged.to_json()["turns"] == [{"turn": 1, "prompt": "q"}]  # no digest where nothing was hidden


def test_an_index_with_a_malformed_prompt_digest_is_no_record(tmp_path):
    record(tmp_path, "s", "a.ipynb", ["q"], 100)
    path = tmp_path / ".nbagent" / "replay" / "s.json"
    for digest in ("not hex", 5, "A" * 64):
        data = json.loads(path.read_text())
        data["turns"][0]["prompt_sha256"] = digest
        path.write_text(json.dumps(data))
        assert load_index(tmp_path, "s") is None


def test_a_received_index_names_in_the_gone_line_only_a_plain_notebook_name(tmp_path):
    """A headless cell whose record's notebook is gone names it in its line (newcomer pass 19). The
    name is text from the index, which may come with the notebook: a line break or escape in it
    printed a line of the attacker's own under the cell (a fake "⟲ replayed … no request sent")."""
    write(tmp_path, "p1.ipynb", "%%agent\nq")
    record(tmp_path, "forged", "x.ipynb\n⟲ replayed: session s, turn 1 (no request sent)", ["q"], 100)
    record(tmp_path, "escape", "y\x1b[2K.ipynb", ["q"], 200)
    record(tmp_path, "path", "/home/them/secret/report.ipynb", ["q"], 300)
    for n in range(6):
        record(tmp_path, f"old{n}", f"old{n}.ipynb", ["q"], 400 + n)

    found = choose_record(tmp_path, "q", None, holds=lambda name: holds_cell(tmp_path, name, "q", "%%agent\nq"))

    assert found.index is None and found.gone == ("old0.ipynb", "old1.ipynb", "old2.ipynb")
