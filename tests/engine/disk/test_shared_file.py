"""The file one user's processes update in turn (the shared rate limit budget), and its folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nbagent.engine.disk.shared_file import PACING_DIR_ENV, SharedFile, UnsafePacingDirError, pacing_dir
from nbagent.engine.loop.pacing import RatePacer, budget_for

COUNT_UP = """
import sys
from pathlib import Path
from nbagent.engine.disk.shared_file import SharedFile
shared = SharedFile(Path(sys.argv[1]))
for _ in range(300):
    shared.update(lambda doc: ({"n": (doc or {"n": 0})["n"] + 1}, None))
"""


def test_two_processes_updating_the_file_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "budget.json"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    procs = [subprocess.Popen([sys.executable, "-c", COUNT_UP, str(path)], env=env) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert SharedFile(path).update(lambda doc: (doc, doc)) == {"n": 600}


def test_a_file_cut_short_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "budget.json"
    path.write_text('{"buckets": {"requ')
    assert SharedFile(path).update(lambda doc: ({"n": 1}, doc)) is None
    assert SharedFile(path).update(lambda doc: (doc, doc)) == {"n": 1}


def test_the_folder_is_made_for_the_user_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PACING_DIR_ENV, str(tmp_path / "pacing"))
    folder = pacing_dir()
    assert folder == tmp_path / "pacing" and folder.stat().st_mode & 0o777 == 0o700


def test_a_folder_others_may_write_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "open"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv(PACING_DIR_ENV, str(shared))
    with pytest.raises(UnsafePacingDirError):
        pacing_dir()
    assert budget_for("0123abcd") is None  # each kernel paces alone instead


def test_a_budget_file_replaced_by_a_link_makes_the_kernel_pace_alone(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PACING_DIR_ENV, str(tmp_path / "pacing"))
    budget = budget_for("0123abcd")
    assert budget is not None
    (tmp_path / "elsewhere.json").write_text("{}")
    (tmp_path / "pacing" / "0123abcd.json").symlink_to(tmp_path / "elsewhere.json")
    pacer = RatePacer(budget=budget)
    assert pacer.pace_delay(100).delay_s == 0.0  # no failure: the request goes, paced by this kernel alone
    assert pacer.budget is None and (tmp_path / "elsewhere.json").read_text() == "{}"


def test_a_scope_that_is_not_a_digest_names_no_file() -> None:
    assert budget_for("../../etc/passwd") is None and budget_for(None) is None


def test_a_key_s_file_unused_for_a_day_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "pacing"
    folder.mkdir(mode=0o700)
    old, fresh = folder / "0ld.json", folder / "fresh.json"
    old.write_text("{}")
    fresh.write_text("{}")
    os.utime(old, (1_000_000, 1_000_000))
    monkeypatch.setenv(PACING_DIR_ENV, str(folder))
    pacing_dir()
    assert not old.exists() and fresh.exists()
