"""Corrupt session files (issue 4, test 8): each of the files of a task folder, corrupted in
several ways, gives a ``CorruptFileError`` naming that file, and no file on disk changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.errors import CorruptFileError
from nbagent.engine.state.store import (
    CONTEXT_FILE,
    HISTORY_FILE,
    LOCK_FILE,
    MARKS_FILE,
    REQUESTS_FILE,
    SENT_FILE,
    SESSION_FILE,
    UI_FILE,
    SessionStore,
)
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import make_engine, run

HALF = object()  # marker: the file's own bytes, cut in half

CORRUPTIONS: dict[str, list[Any]] = {
    # (the history cut in half is a torn last append: it loads, with a notice)
    HISTORY_FILE: [
        b"[{not json", b"", b"\xff\xfe\x00\x81",
        {"role": "user", "content": "hi"},
        [{"role": "user", "content": 5}],
        [{"role": "robot", "content": "beep"}],
        [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}],
        [{"role": "assistant", "content": "first"}],
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": [
            {"type": "tool_use", "id": ["unhashable"], "name": "x", "input": {}}]}],
    ],
    # (ui_messages.json cut in half is the torn last append of a killed process: it loads; see
    # test_hostile_input.py)
    UI_FILE: [
        b"[{not json", b"", b"\xff\xfe\x00\x81", b"[\n{not json\n{\"kind\":\"done\"}\n]",
        {"kind": "done"}, [{"kind": "nope"}], [{"kind": "done", "bogus": 1}], ["done"], [{"kind": "request_completed",
                                                                                        "record": {"turn": 1}}],
    ],
    CONTEXT_FILE: [
        b"[{not json", b"", b"\xff\xfe\x00\x81", HALF, {"a": 1}, [[1, 2]], [["x", [0, []]]], "text",
    ],
    # (like the event log, the request log cut in half is a torn last append and loads)
    REQUESTS_FILE: [
        b"[{not json", b"", b"\xff\xfe\x00\x81", {"a": 1}, [{"turn": 1}], [5], "x",
        [{"turn": 1, "request": 1, "model": "m", "usage": {"input_tokens": "9"}}],
    ],
    # (what each request sent; cut in half it is a torn last append, and loads)
    SENT_FILE: [
        b"[{not json", b"", {"a": 1}, [5], [{"request": 1}],
        [{"request": 1, "turn": 1, "model": "m", "history_len": 1, "last_blocks": 1, "deleted_range": None,
          "ts": 1, "system": "s", "tools": [], "bogus": 1}],
        [{"request": 1, "turn": 1, "model": "m", "history_len": 1, "last_blocks": 1, "deleted_range": None,
          "ts": 1}],  # the first line without the system prompt: nothing before it to take it from
    ],
    # (the turn marks; cut in half it is a torn last append, and loads)
    MARKS_FILE: [
        b"[{not json", b"", {"a": 1}, [5], [{"turn": 1}], "x",
        [{"turn": 1, "history_len": -1, "deleted_range": None, "ts": 1, "records_len": 0}],
        [{"turn": 1, "history_len": 2, "deleted_range": None, "ts": 1, "records_len": 0, "bogus": 1}],
    ],
    # ("marks" in session.json: a folder of version 1, which kept them there)
    SESSION_FILE: [
        b"{not json", b"", b"\xff\xfe\x00\x81", HALF,
        [], {"records": [{"turn": 1}]}, {"deleted_range": "ab"}, {"deleted_range": [2]}, {"last_ts": "soon"},
        {"marks": [5]}, {"marks": [{"turn": 1}]}, {"previous_usage": [1, 2]}, {"model": 3}, {"records": "x"},
    ],
}
CASES = [(name, i) for name, variants in CORRUPTIONS.items() for i in range(len(variants))]


@pytest.fixture(scope="module")
def good_session(tmp_path_factory: Any) -> dict[str, bytes]:
    """The seven files of a real two-turn session with a truncation (so every file has content)."""
    import asyncio

    tmp = tmp_path_factory.mktemp("good")
    words = " ".join(f"word{i}" for i in range(40))
    api = SimulatedAPI([tool_reply("echo", {"text": words}) for _ in range(3)] + [text_reply("done"),
                       tool_reply("echo", {"text": "x"}), text_reply("done again")])
    engine = make_engine(api, tmp, context_window=2_000, custom_system_prompt="x " * 900)

    async def go() -> None:
        await run(engine, "first task")
        await run(engine, "second task")

    asyncio.run(go())
    assert engine.session.deleted_range is not None and len(engine.session.context.updates) > 0
    task = engine.config.task_dir
    assert task is not None
    files = {p.name: p.read_bytes() for p in task.iterdir() if p.name != LOCK_FILE}
    assert set(files) == {HISTORY_FILE, UI_FILE, CONTEXT_FILE, SESSION_FILE, REQUESTS_FILE, SENT_FILE, MARKS_FILE}
    return files


@pytest.mark.parametrize("name, variant", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_each_corrupt_file_is_named_and_left_untouched(tmp_path: Path, good_session: dict[str, bytes],
                                                       name: str, variant: int) -> None:
    task = tmp_path / "task"
    task.mkdir()
    for fname, data in good_session.items():
        (task / fname).write_bytes(data)
    bad = CORRUPTIONS[name][variant]
    if bad is HALF:
        bad = good_session[name][: len(good_session[name]) // 2]
    elif not isinstance(bad, bytes):
        bad = json.dumps(bad).encode()
    (task / name).write_bytes(bad)
    before = {p.name: p.read_bytes() for p in task.iterdir()}

    with pytest.raises(CorruptFileError) as info:
        SessionStore(task).load()
    assert Path(info.value.path).name == name and name in str(info.value)
    with pytest.raises(CorruptFileError) as info2:
        make_engine(SimulatedAPI([]), tmp_path, resume=True)
    assert Path(info2.value.path).name == name
    assert "left untouched" in str(info2.value)

    after = {p.name: p.read_bytes() for p in task.iterdir()}
    assert after == before


def test_the_good_session_loads(tmp_path: Path, good_session: dict[str, bytes]) -> None:
    task = tmp_path / "task"
    task.mkdir()
    for fname, data in good_session.items():
        (task / fname).write_bytes(data)
    engine = make_engine(SimulatedAPI([]), tmp_path, resume=True)
    assert len(engine.session.history) == 12 and engine.session.deleted_range is not None and len(engine.session.records) == 6
    assert engine.session.truncations >= 1 and engine.session.turn == 2


def test_a_missing_folder_is_not_mistaken_for_a_corrupt_one(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        SessionStore(tmp_path / "nowhere").load()
