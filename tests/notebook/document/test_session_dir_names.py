"""A new session's folder never takes a name already in the folder (a kernel's count can start again)."""

from __future__ import annotations

import os
import time

from nbagent.notebook.document.replay import new_session_dir, sessions_dir, unused_session_name


def test_a_taken_name_is_skipped_for_the_next_count(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "strftime", lambda fmt, *a: fmt.replace("%Y%m%d-%H%M%S", "20260101-000000"))
    taken = f"20260101-000000-{os.getpid()}-1"
    (tmp_path / taken).mkdir()
    (tmp_path / f"20260101-000000-{os.getpid()}-2").symlink_to(tmp_path / "nowhere")  # a dangling link too

    assert unused_session_name(tmp_path, 1) == f"20260101-000000-{os.getpid()}-3"
    assert unused_session_name(tmp_path, 4) == f"20260101-000000-{os.getpid()}-4"


def test_the_record_folder_skips_a_session_folder_already_there(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "strftime", lambda fmt, *a: fmt.replace("%Y%m%d-%H%M%S", "20260101-000000"))
    first = new_session_dir(tmp_path, 1)
    first.mkdir(parents=True)

    assert new_session_dir(tmp_path, 1) != first
    assert new_session_dir(tmp_path, 1).parent == sessions_dir(tmp_path)
