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


def test_many_patterns_are_matched_in_one_pass_per_path(tmp_path: Path) -> None:
    """Each path was matched against each pattern in Python: a received folder's 25,000 patterns took
    7.5 s a list_files of 300 files, 75 s of 3,000, unasked (attacker pass 20)."""
    import time

    from nbagent.tools.ignore import parse_ignore

    rules = IgnoreRules(parse_ignore("".join(f"part-{i:07d}-*.parquet\n" for i in range(5_000)) + "secret/\n"))
    start = time.process_time()
    shown = [p for i in range(2_000) if not rules.ignored(p := f"data/f{i}.csv", False)]
    assert len(shown) == 2_000 and rules.ignored("x/part-0004999-a.parquet", False) and rules.ignored("secret", True)
    assert time.process_time() - start < 2.0, "one regex per group of rules, not a call per rule"


def test_the_last_matching_line_still_wins_across_groups() -> None:
    from nbagent.tools.ignore import parse_ignore

    rules = IgnoreRules(parse_ignore("*.csv\n!keep*.csv\nkeep-not.csv\nbuild/\n!build/docs/\n/top.txt\n"))
    assert rules.ignored("a/b.csv", False) and not rules.ignored("a/keep1.csv", False)
    assert rules.ignored("a/keep-not.csv", False)
    assert rules.ignored("build", True) and not rules.ignored("build", False)
    assert rules.ignored("top.txt", False) and not rules.ignored("a/top.txt", False)
    assert not rules.ignored("build/docs", True)
