"""Which sessions of earlier kernels a notebook's ``%agent cost`` adds: its own, cut short before
any turn finished; and such a session never replays."""

from __future__ import annotations

import os

import pytest

from nbagent.engine.contracts.errors import CorruptFileError
from nbagent.notebook.document.earlier import cut_short, cut_short_spend, earlier, link_signature, not_signed
from nbagent.notebook.document.replay import INDEX, RECORD_DIR, ReplayIndex, find_record, save_index, sessions_dir


def session(root, name: str, notebook: str | None, prompts: tuple[str, ...] = (), *, signed: bool = True) -> str:
    """A session folder and its index, linked to ``notebook`` (``signed``: by this user, as
    ``RecordKeeper.linking`` writes it)."""
    (sessions_dir(root) / name).mkdir(parents=True, exist_ok=True)
    linked = link_signature(name, notebook) if signed and notebook is not None else None
    index = ReplayIndex(session=name, notebook=notebook, linked=linked)
    for n, prompt in enumerate(prompts, 1):
        index = index.with_turn(n, prompt)
    save_index(root, index)
    return name


def test_only_this_notebooks_cut_short_sessions_of_other_kernels_are_its_earlier_spend(tmp_path):
    mine = session(tmp_path, "20261207-100000-11-1", "a.ipynb")
    session(tmp_path, "20261207-100000-12-1", "b.ipynb")  # another notebook's (a copy has another name too)
    session(tmp_path, "20261207-100000-13-1", "a.ipynb", ("q",))  # a turn finished: it replays instead
    session(tmp_path, "20261207-100000-14-1", None)  # names no notebook: nobody's
    session(tmp_path, f"20261207-100000-{os.getpid()}-1", "a.ipynb")  # this kernel's (a reset after ■)
    current = session(tmp_path, "20261207-100000-15-1", "a.ipynb")
    assert cut_short(tmp_path, "a.ipynb", current) == [sessions_dir(tmp_path) / mine]
    assert cut_short(tmp_path, "c.ipynb", None) == []


def test_a_cut_short_session_someone_else_linked_to_this_notebook_is_not_its_earlier_spend(tmp_path):
    """A received folder's index: unsigned, signed by another user's key, or copied from another
    session's or notebook's index of this user."""
    session(tmp_path, "20261207-100000-11-1", "a.ipynb", signed=False)
    theirs = link_signature("20261207-100000-12-1", "b.ipynb")
    session(tmp_path, "20261207-100000-12-1", "a.ipynb", signed=False)
    save_index(tmp_path, ReplayIndex(session="20261207-100000-12-1", notebook="a.ipynb", linked=theirs))
    save_index(tmp_path, ReplayIndex(session="20261207-100000-13-1", notebook="a.ipynb",
                                     linked=link_signature("20261207-100000-14-1", "a.ipynb")))
    (sessions_dir(tmp_path) / "20261207-100000-13-1").mkdir()
    assert cut_short(tmp_path, "a.ipynb", None) == []


def test_an_index_with_a_turn_drops_its_link_signature_and_reads_as_before(tmp_path):
    """The first turn's end rewrites the index: without the signature, in the form an earlier
    nbagent (which reads no other key) reads."""
    index = ReplayIndex(session="20261207-100000-11-1", notebook="a.ipynb", linked="x").with_turn(1, "q")
    assert "linked" not in index.to_json() and ReplayIndex.from_json(index.to_json()) == index


def test_a_cut_short_session_is_never_replayed(tmp_path):
    session(tmp_path, "20261207-100000-11-1", "a.ipynb", ("q",))
    session(tmp_path, "20261207-110000-12-1", "a.ipynb")  # newer, no turn: linked before its first request
    assert find_record(tmp_path, "q", "a.ipynb").session == "20261207-100000-11-1"  # type: ignore[union-attr]
    assert find_record(tmp_path, "q", None, holds=lambda name: name == "a.ipynb").session == "20261207-100000-11-1"  # type: ignore[union-attr]


def test_a_session_another_live_kernel_still_runs_is_not_cut_short(tmp_path):
    """Two kernels of one notebook: the other one's first prompt is still running (its lock held,
    its index naming the notebook and no turn yet). It was not cut short by a restart."""
    import subprocess
    import sys

    running = session(tmp_path, "20261207-100000-11-1", "a.ipynb")
    task = sessions_dir(tmp_path) / running
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom nbagent.engine.disk.task_lock import FolderLock\n"
         f"FolderLock({str(task)!r}).acquire()\nprint('held', flush=True)\nsys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert cut_short(tmp_path, "a.ipynb", None) == []
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
    assert cut_short(tmp_path, "a.ipynb", None) == [task]  # its kernel gone (or a restart): cut short


def test_a_damaged_index_beside_the_notebook_is_no_earlier_spend_and_no_error(tmp_path):
    """A received (or half-pulled, merge-conflicted) folder: an index that is no JSON, or a FIFO,
    named as a session's. ``%agent cost`` / ``%agent status`` read past it (before: CorruptFileError
    out of both commands)."""
    mine = session(tmp_path, "20261207-100000-11-1", "a.ipynb")
    folder = tmp_path / RECORD_DIR / INDEX
    (folder / "20261207-100000-12-1.json").write_text("<<<<<<< HEAD\n{")
    os.mkfifo(folder / "20261207-100000-13-1.json")
    assert cut_short(tmp_path, "a.ipynb", None) == [sessions_dir(tmp_path) / mine]
    assert cut_short_spend(tmp_path, "a.ipynb", None) is None and not_signed(tmp_path, "a.ipynb", None) == 0


def test_a_dead_kernels_lock_naming_a_pid_now_reused_is_cut_short(tmp_path):
    """The lock file a dead kernel left names its pid; after a reboot (or pids wrapping) a live,
    unrelated process has it. No one holds the lock: the session was cut short and its money counts
    (before: read as "still running" from the pid alone, and left out of %agent cost silently)."""
    import subprocess
    import sys

    mine = session(tmp_path, "20261207-100000-11-1", "a.ipynb")
    task = sessions_dir(tmp_path) / mine
    unrelated = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        (task / "nbagent.lock").write_text(str(unrelated.pid))  # alive, holding nothing
        assert cut_short(tmp_path, "a.ipynb", None) == [task]
    finally:
        assert unrelated.stdin is not None
        unrelated.stdin.close()
        unrelated.wait(timeout=60)


def test_a_received_unsigned_sessions_folder_is_counted_never_loaded(tmp_path, monkeypatch):
    """A received folder's cut-short sessions of this notebook (unsigned links): each folder may hold
    files of up to 256 MB (a few compressed megabytes of a zip), and adds no money, only the count of
    those left out. They are counted from their records file's size, never loaded (before: every
    %agent cost / status parsed them whole: 3 sessions of 30 MB history, 10 s)."""
    import nbagent.classroom

    loaded: list[object] = []
    real = nbagent.classroom._folder_figures
    monkeypatch.setattr(nbagent.classroom, "_folder_figures", lambda task: loaded.append(task) or real(task))
    billed = session(tmp_path, "20261207-100000-11-1", "a.ipynb", signed=False)
    (sessions_dir(tmp_path) / billed / "requests.json").write_text('[\n{"turn":1,"request":1}\n]\n')
    session(tmp_path, "20261207-100000-12-1", "a.ipynb", signed=False)  # no request left: not said
    left_out = not_signed(tmp_path, "a.ipynb", None)
    assert loaded == []  # main: both folders loaded whole
    assert left_out == 1
    mine = session(tmp_path, "20261207-100000-13-1", "a.ipynb")
    cut_short_spend(tmp_path, "a.ipynb", None)
    assert loaded == [sessions_dir(tmp_path) / mine]  # the user's own: read for its money


def test_a_replay_index_of_millions_of_brackets_is_refused_unparsed(tmp_path, monkeypatch):
    """A received folder's index named as a session's: 12 MB of ``[],`` (a few kB zipped). Parsed,
    it took ~4 s and ~400 MB per 12 MB, up to the 256 MB any task file may have (minutes, and the
    kernel out of memory) at every %agent cost / status and every first agent cell's replay lookup.
    It is left out as unreadable, named, before any parse."""
    from nbagent.notebook.document import replay

    mine = session(tmp_path, "20261207-100000-11-1", "a.ipynb")
    folder = tmp_path / RECORD_DIR / INDEX
    bomb = folder / "20261207-100000-12-1.json"
    bomb.write_text('{"version": 1, "session": "20261207-100000-12-1", "notebook": "a.ipynb", "provider": null, '
                    '"turns": [], "linked": ' + "[" + "[]," * 4_000_000 + "[]]}")
    parsed: list[object] = []
    real = replay.read_json
    monkeypatch.setattr(replay, "read_json", lambda path, *a: parsed.append(path) or real(path, *a))
    e = earlier(tmp_path, "a.ipynb", None)
    assert [u.split(" ")[0] for u in e.unreadable] == [str(bomb.relative_to(tmp_path))]
    assert bomb not in parsed  # main: parsed whole (several seconds), then dropped as no index
    assert cut_short(tmp_path, "a.ipynb", None) == [sessions_dir(tmp_path) / mine]


def test_a_long_sessions_index_of_bracket_heavy_prompts_still_reads(tmp_path):
    """The bound is far from what nbagent writes: 1,000 turns, each a prompt of pasted code with 100 brackets."""
    from nbagent.notebook.document.replay import load_index

    index = ReplayIndex(session="20261207-100000-11-1", notebook="a.ipynb")
    for n in range(1, 1001):
        index = index.with_turn(n, f"why does this fail? {n}\n" + "df[df['a'] > 1][['a', 'b']]; " * 25)
    save_index(tmp_path, index)
    assert load_index(tmp_path, "20261207-100000-11-1") == index


def test_a_users_own_index_of_prompts_pasting_json_still_reads(tmp_path):
    """Three turns each pasting a JSON table of 100,000 rows (``[[1, 2], …]``, 1.5 MB: a 1M-token
    model reads it) hold 300,000 ``[`` inside the prompts' strings. Counted as the index's own arrays,
    the user's own index was refused: every first agent cell of the folder's notebooks failed on it,
    and each later turn's record could not be read to add the turn."""
    import json

    from nbagent.notebook.document.replay import choose_record, load_index

    pasted = json.dumps([[i, 2 * i] for i in range(100_000)])
    index = ReplayIndex(session="20261207-100000-11-1", notebook="a.ipynb")
    for n in range(1, 4):
        index = index.with_turn(n, f"summarise this table {n}:\n{pasted}")
    save_index(tmp_path, index)
    (sessions_dir(tmp_path) / index.session).mkdir(parents=True)
    assert load_index(tmp_path, index.session) == index
    assert choose_record(tmp_path, index.turns[0].prompt, "a.ipynb").index == index


def test_brackets_outside_an_index_strings_are_counted_whatever_its_strings_hold(tmp_path):
    """(Guard) A received index mixing 300,000 ``[]`` with strings full of brackets (and escaped quotes
    and backslashes) is still refused unparsed; so is one of more strings than any index holds."""
    from nbagent.notebook.document.replay import load_index

    folder = tmp_path / RECORD_DIR / INDEX
    folder.mkdir(parents=True)
    head = '{"version": 1, "session": "S", "notebook": "a.ipynb", "provider": null, "turns": [], "linked": '
    bombs = {"20261207-100000-12-1": "[" + '"[[\\"[\\\\",[],[],[],' * 100_000 + "[]]}",
             "20261207-100000-12-2": "[" + '"",[],' * 600_000 + "[]]}"}
    for name, tail in bombs.items():
        (folder / f"{name}.json").write_text(head.replace('"S"', f'"{name}"') + tail)
        with pytest.raises(CorruptFileError, match="more than 250,000"):
            load_index(tmp_path, name)
