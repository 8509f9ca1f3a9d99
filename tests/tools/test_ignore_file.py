"""``.nbagentignore`` is read as a small regular file: a received folder's FIFO in its place blocked
``list_files`` (a read-only tool, run unasked) on the kernel's main thread for good, and a huge one
was read whole (attacker pass 6, F9)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from nbagent.engine.loop.prompt import read_ignore_patterns
from nbagent.tools.ignore import MAX_IGNORE_BYTES, IgnoreRules, read_ignore_text


def test_a_fifo_named_nbagentignore_is_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".nbagentignore")
    finished: list[bool] = []
    for fn in (IgnoreRules.load, read_ignore_patterns):
        done = threading.Event()

        def call(f=fn, done=done) -> None:  # type: ignore[no-untyped-def]
            f(tmp_path)
            done.set()

        thread = threading.Thread(target=call, daemon=True)
        thread.start()
        thread.join(timeout=30)  # a hang breaker, not a speed bound
        finished.append(done.is_set())
        if not done.is_set():
            os.close(os.open(tmp_path / ".nbagentignore", os.O_WRONLY))  # let the blocked open return
            thread.join()
    assert finished == [True, True]
    assert IgnoreRules.load(tmp_path) == IgnoreRules() and read_ignore_patterns(tmp_path) == []


def test_a_huge_nbagentignore_is_read_up_to_its_bound(tmp_path: Path) -> None:
    (tmp_path / ".nbagentignore").write_text("*.csv\n" + "#" * (3 * MAX_IGNORE_BYTES))
    assert len(read_ignore_text(tmp_path)) == MAX_IGNORE_BYTES
    assert read_ignore_patterns(tmp_path) == ["*.csv"]
    assert IgnoreRules.load(tmp_path).ignored("a.csv", False)
