"""An append log made empty (``[]``) is appended to in place from its first item, and several files
written at once are each atomic, with one wait for the disk for them all."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.disk.append_log import AppendLog, read_log
from nbagent.engine.disk.persist import atomic_write_files, dumps_line


def test_an_empty_log_takes_its_first_item_in_place(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    atomic_write_files(tmp_path, {path.name: b"[]"})
    log = AppendLog(path)
    log.prime([])
    inode = path.stat().st_ino
    log.save([{"a": 1}], dumps_line)
    log.save([{"a": 1}, {"b": 2}], dumps_line)
    log.close()
    assert path.stat().st_ino == inode  # appended, not rewritten
    assert path.read_text() == '[\n{"a":1},\n{"b":2}\n]' and json.loads(path.read_text()) == [{"a": 1}, {"b": 2}]


def test_a_first_append_cut_short_loads_empty_with_a_notice(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_text('[\n{"a":')  # killed during the first append to "[]"
    notices: list[str] = []
    assert read_log(path, notices) == [] and "cut short" in notices[0]


@pytest.mark.parametrize("on_disk", ["missing", '[\n{"someone":"else"}\n]'])
def test_an_empty_log_whose_file_is_not_empty_is_written_whole(tmp_path: Path, on_disk: str) -> None:
    path = tmp_path / "log.json"
    if on_disk != "missing":
        path.write_text(on_disk)
    log = AppendLog(path)
    log.prime([])  # what it believes: nothing there yet
    log.save([{"a": 1}], dumps_line)
    log.close()
    assert json.loads(path.read_text()) == [{"a": 1}]


def test_files_written_at_once_wait_for_the_disk_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "old.json").write_text("old")
    ops: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        ops.append(("sync", "folder" if os.path.isdir(f"/proc/self/fd/{fd}") else "file"))
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        ops.append(("rename", Path(dst).name))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    atomic_write_files(tmp_path, {"old.json": b"new", "a.json": b"[]", "b.json": b"{}"})
    # Every file made durable, then every rename, then the folder once (two files are new).
    assert ops == [("sync", "file")] * 3 + [("rename", "old.json"), ("rename", "a.json"), ("rename", "b.json"),
                                            ("sync", "folder")]
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"old.json": "new", "a.json": "[]", "b.json": "{}"}


def test_a_failure_leaves_each_file_old_or_new_and_no_temp_file(tmp_path: Path) -> None:
    (tmp_path / "kept.json").write_text("old")
    (tmp_path / "dir.json").mkdir()  # a rename over a folder fails
    with pytest.raises(OSError):
        atomic_write_files(tmp_path, {"kept.json": b"new", "dir.json": b"x", "after.json": b"y"})
    assert (tmp_path / "kept.json").read_text() in ("old", "new") and not (tmp_path / "after.json").exists()
    assert not list(tmp_path.glob(".*.tmp"))
