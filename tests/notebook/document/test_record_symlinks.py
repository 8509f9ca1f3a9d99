"""A received folder cannot make nbagent write its records elsewhere: a symlinked ``.nbagent/``,
``.nbagent/replay/``, ``.nbagent/sessions/`` or session folder is neither replayed nor written
through (attacker pass 6, F5). A replay index written through ``.nbagent/replay -> ~/.bashrc.d``
put the notebook's name (``x$(curl … | sh).ipynb``) into a file bash sources at the next login."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document.replay import (
    RecordFolderError,
    ReplayIndex,
    record_dir_problem,
    save_index,
    sessions_dir,
)

from .test_replay_inprocess import FIRST, agent, cell, ip, restart  # noqa: F401  (ip is a fixture)


@pytest.mark.parametrize("link", [".nbagent", ".nbagent/replay", ".nbagent/sessions"])
def test_a_symlinked_record_folder_is_not_written_through(ip, tmp_path, monkeypatch, link):  # noqa: F811
    monkeypatch.setenv("JPY_SESSION_NAME", "x$(touch PWNED).ipynb")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    target = tmp_path / link
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(outside, target_is_directory=True)
    try:
        out = cell(ip, FIRST)
        assert "6" in out and "391" in out  # answered, live
        assert "no replay and no record here" in out and f"{link} is a symbolic link" in out
        assert list(outside.iterdir()) == []  # on the old code: the index (and the session) landed here
        restart(magics_mod.active_magics())
        assert "replayed" not in cell(ip, FIRST)  # nothing was recorded, nothing replays
    finally:
        shutil.rmtree(outside)


def test_a_symlinked_session_folder_is_named_and_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    sessions_dir(tmp_path).mkdir(parents=True)
    os.symlink(outside, sessions_dir(tmp_path) / "s1")
    assert record_dir_problem(tmp_path) is None
    assert record_dir_problem(tmp_path, "s1") == ".nbagent/sessions/s1 is a symbolic link"
    with pytest.raises(RecordFolderError, match="symbolic link"):
        save_index(tmp_path, ReplayIndex(session="s1", notebook="n.ipynb", provider=None, turns=()))
    (tmp_path / ".nbagent" / "replay").write_text("")
    assert record_dir_problem(tmp_path) == ".nbagent/replay is not a folder"


def test_a_recorded_session_whose_folder_is_a_link_is_neither_replayed_nor_continued(ip, tmp_path):  # noqa: F811
    cell(ip, FIRST)
    recorded = Path(agent().session.task_dir)
    restart(magics_mod.active_magics())
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    shutil.move(str(recorded), elsewhere)  # the received folder's session: a link to a folder outside
    recorded.symlink_to(elsewhere, target_is_directory=True)
    before = {p.name: p.read_bytes() for p in elsewhere.iterdir() if p.is_file()}
    try:
        out = cell(ip, FIRST)
        assert "replayed" not in out and f".nbagent/sessions/{recorded.name} is a symbolic link" in out
        assert {p.name: p.read_bytes() for p in elsewhere.iterdir() if p.is_file()} == before
        assert Path(agent().session.task_dir).parent == sessions_dir(tmp_path)  # a new record of its own
        assert Path(agent().session.task_dir) != recorded
    finally:
        shutil.rmtree(elsewhere)


def test_a_link_planted_under_a_new_sessions_name_is_not_followed(tmp_path: Path, monkeypatch) -> None:
    import time

    from nbagent.notebook.document.replay import new_session_dir, refuse_unsafe

    monkeypatch.setattr(time, "strftime", lambda fmt: fmt.replace("%Y%m%d-%H%M%S", "20261205-080000"))
    name = f"20261205-080000-{os.getpid()}-1"  # the name it would get
    sessions_dir(tmp_path).mkdir(parents=True)
    (sessions_dir(tmp_path) / name).symlink_to(tmp_path, target_is_directory=True)
    made = new_session_dir(tmp_path, 1)
    assert made.name != name and not made.is_symlink()  # a name taken, by a link too, is passed over
    with pytest.raises(RecordFolderError, match=f"{name} is a symbolic link"):
        refuse_unsafe(tmp_path, name)  # and one planted after that look is refused where it is used
