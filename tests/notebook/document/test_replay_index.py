"""The record's index: which record a fresh kernel replays, and what a damaged index does."""

from __future__ import annotations

import json
import os

from nbagent.notebook.document.replay import ReplayIndex, find_record, load_index, save_index, sessions_dir


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
    assert find_record(tmp_path, "load the data", None).session == "other"  # nbclient: any notebook's
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
