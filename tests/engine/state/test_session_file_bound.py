"""A received session folder's files (history, events, requests; up to 256 MB each) are read when its
record replays or its session resumes: one of millions of ``[]`` (a few hundred kB zipped) is refused
before it is parsed, named as unreadable, and never read line by line as a crash's torn log is; a long
real session's files stay far under the bound."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from nbagent import Agent
from nbagent.engine.contracts.errors import CorruptFileError
from nbagent.engine.disk import json_depth, persist
from nbagent.engine.state.folder_load import load_folder
from nbagent.engine.state.store import HISTORY_FILE, REQUESTS_FILE, UI_FILE
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.soak import SOAK


def _bomb(path: Path, arrays: int, torn: bool) -> None:
    """A log of ``arrays`` empty arrays in the append log's form (one a line), its last line cut short."""
    path.write_text("[\n" + "[],\n" * arrays + ("[" if torn else "[]\n]"))


@pytest.mark.parametrize("name", [HISTORY_FILE, UI_FILE, REQUESTS_FILE])
@pytest.mark.parametrize("torn", [False, True])
def test_a_received_session_file_of_millions_of_arrays_is_refused_unparsed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, torn: bool) -> None:
    monkeypatch.setattr(persist, "MAX_TASK_FILE_CONTAINERS", 1_000, raising=False)  # the bomb, scaled down
    parsed: list[int] = []
    loads = json.loads

    def counted(text: str | bytes, *args: object, **kwargs: object) -> object:
        parsed.append(len(text))
        return loads(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(json, "loads", counted)
    _bomb(tmp_path / name, 5_000, torn)
    with pytest.raises(CorruptFileError) as refused:
        load_folder(tmp_path)
    assert refused.value.path == tmp_path / name
    assert "more than 1,000 JSON arrays and objects" in str(refused.value)
    assert "corrupt" not in str(refused.value) and "%agent reset" in str(refused.value)  # it may be the user's own
    assert parsed == []  # neither whole nor line by line


def _record(root: Path, turns: int) -> Path:
    """A session of ``turns`` turns, three tool calls each (a 40 kB JSON file read, a listing, an edit)."""
    rng = random.Random(0)
    (root / "data.json").write_text(json.dumps([{"id": i, "tags": ["a"], "pos": [rng.random(), rng.random()]}
                                                for i in range(600)]))
    (root / "notes.txt").write_text("line\n" * 200)
    replies = []
    for _ in range(turns):
        replies += [tool_reply([("read_file", {"path": "data.json"}), ("list_files", {"path": "."})]),
                    tool_reply("edit_file", {"path": "notes.txt", "old": "line\n", "new": "line\n"}),
                    text_reply("found it " * 200)]
    task = root / "task"
    agent = Agent(provider=simulated_provider(SimulatedAPI(replies)), task_dir=task, cwd=root,
                  allow=["read_file", "list_files", "edit_file"])
    for t in range(turns):
        agent.run_sync(f"turn {t}: read data.json, list the files, fix notes.txt")
    agent.close()
    return task


@pytest.mark.parametrize("turns", [pytest.param(5), pytest.param(200, marks=SOAK)])
def test_a_long_sessions_files_hold_a_fraction_of_the_bound_and_load(tmp_path: Path, turns: int) -> None:
    task = _record(tmp_path, turns)
    for path in task.glob("*.json"):
        text = path.read_text()
        # 200 turns: ~5,200 in the history and the events (the outputs are strings): 1/200 of the bound
        assert not json_depth.containers_exceed(text, persist.MAX_TASK_FILE_CONTAINERS // 100), path.name
    started = time.perf_counter()
    assert len(load_folder(task).history) == 6 * turns  # a prompt, three replies, two results a turn
    assert time.perf_counter() - started < 30


def test_a_task_file_whose_strings_hold_millions_of_brackets_is_scanned_once_and_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A long session's streamed code or JSON text: brackets over the bound counted plainly, few
    # outside strings. Taking its strings out is the slowest step (22 MB: ~0.5 s); it was done twice,
    # in the bytes for the bound and again in the text for the depth.
    monkeypatch.setattr(persist, "MAX_TASK_FILE_CONTAINERS", 1_000, raising=False)
    scans: list[int] = []
    unquoted = json_depth._unquoted

    def counted(text: str | bytes) -> str | bytes:
        scans.append(len(text))
        return unquoted(text)

    monkeypatch.setattr(json_depth, "_unquoted", counted)
    events = [{"kind": "text_delta", "text": '[1, 2] {"a": "b\\\\"} ' * 20} for _ in range(200)]
    (tmp_path / "ui_messages.json").write_text(json.dumps(events))

    assert persist.read_json(tmp_path / "ui_messages.json") == events
    assert len(scans) == 1


def test_a_history_nbagent_wrote_of_a_million_points_in_tool_inputs_is_read(tmp_path: Path) -> None:
    # 130 turns of a tool called with 8,000 [x, y] pairs (what Agent wrote through the simulated API:
    # 1,040,000 arrays in 10 MB): its resume was refused as "corrupt" by a 1,000,000 bound.
    points = [[0.5, i] for i in range(8_000)]
    history = [message for turn in range(130) for message in (
        {"role": "user", "content": [{"type": "text", "text": f"turn {turn}: plot"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{turn}", "name": "plot",
                                           "input": {"points": points}}]})]
    (tmp_path / HISTORY_FILE).write_text(json.dumps(history))

    assert len(persist.read_json(tmp_path / HISTORY_FILE)) == 260
