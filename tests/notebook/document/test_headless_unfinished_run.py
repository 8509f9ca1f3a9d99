"""A headless run (nbclient, ``jupyter nbconvert --execute``, ``nbagent batch``) after a run of the same
agent cell that did not finish (a cell timeout, an interrupt, the kernel killed): the cut-short run
recorded no answer, so this run asks the model. Its line said "a new or edited cell" (or, in a folder
with no finished record, that there was no .nbagent/ record beside the notebook): now it says the
recorded run did not finish, and how to give a re-run what it needs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document import link as link_mod
from nbagent.notebook.document import live_lines, unfinished
from nbagent.notebook.document import lookup as lookup_mod
from nbagent.providers.simulated import ScriptedResponder, app, text_reply, tool_reply

from .test_replay_inprocess import FIRST, cell, ip, restart  # noqa: F401  (fixture)

# The model's first call stops the run, as a cell timeout's interrupt does while the turn goes on.
STOP = "import nbagent.notebook.magics as _m\n_m.active_magics().current.agent.abort()"
OTHER = "what is 2 * 3? use python"


@pytest.fixture
def headless(monkeypatch) -> None:
    for module in (link_mod, lookup_mod):
        monkeypatch.setattr(module, "in_kernel", lambda: True)  # a kernel that sends no cell ids


def _cut_short(ip: Any, prompt: str, monkeypatch) -> None:  # noqa: F811
    scripted = app._as_responder
    monkeypatch.setattr(app, "_as_responder", lambda _r: scripted(
        ScriptedResponder([tool_reply([("python", {"code": STOP})]), text_reply("never")])))
    with capture_output():
        result = ip.run_cell(f"%%agent\n{prompt}")
    assert isinstance(result.error_in_exec, KeyboardInterrupt)  # the run did not finish
    monkeypatch.setattr(app, "_as_responder", scripted)
    restart(magics_mod.active_magics())


def _unfinished(out: str) -> bool:
    head = live_lines.UNFINISHED_HEADLESS_LINE.split("{session}")[0]
    return head in out and "did not finish" in out and out.index(head) < out.index("(simulated model)")


def test_a_headless_cell_whose_only_run_was_cut_short_says_so_not_that_there_is_no_record(ip, headless, monkeypatch):  # noqa: F811
    _cut_short(ip, FIRST, monkeypatch)

    out = cell(ip, FIRST)

    assert live_lines.NO_RECORD_LINE not in out and _unfinished(out), out


def test_a_cut_short_run_in_a_notebook_with_variables_is_found(ip, headless, monkeypatch):  # noqa: F811
    """Was: the prompt was compared with the first message's text blocks joined, which in a notebook
    with any variable hold the ``<kernel-state>`` the model was told too: never equal, so the line
    said there was no record (the file passed alone, in a shell with no variables)."""
    ip.run_cell("orders_total = 41\nregions = ['north', 'south']")
    _cut_short(ip, FIRST, monkeypatch)

    out = cell(ip, FIRST)

    assert live_lines.NO_RECORD_LINE not in out and _unfinished(out), out


def test_a_headless_cell_cut_short_in_a_folder_of_records_is_not_called_new_or_edited(ip, headless, monkeypatch):  # noqa: F811
    cell(ip, OTHER)  # another cell's finished, recorded run
    restart(magics_mod.active_magics())
    _cut_short(ip, FIRST, monkeypatch)

    out = cell(ip, FIRST)

    assert live_lines.NO_MATCH_LINE not in out and "a new or edited cell" not in out and _unfinished(out), out


def test_once_the_live_rerun_finished_the_next_headless_run_replays_it(ip, headless, monkeypatch):  # noqa: F811
    _cut_short(ip, FIRST, monkeypatch)
    assert _unfinished(cell(ip, FIRST))
    restart(magics_mod.active_magics())

    out = cell(ip, FIRST)

    assert "replayed: session" in out and "did not finish" not in out, out


def test_an_edited_prompt_still_says_new_or_edited(ip, headless):  # noqa: F811
    cell(ip, OTHER)
    restart(magics_mod.active_magics())

    out = cell(ip, FIRST)

    assert live_lines.NO_MATCH_LINE in out and "did not finish" not in out


def _planted(root: Any, name: str, first: object, tail: int = 0) -> None:
    """A session folder of a received folder: its conversation's first message, then ``tail`` more."""
    from nbagent.notebook.document.replay import sessions_dir

    folder = sessions_dir(root) / name
    folder.mkdir(parents=True)
    messages = [first, *({"role": "assistant", "content": "x" * 2000} for _ in range(tail))]
    (folder / "api_conversation_history.json").write_text(json.dumps(messages), encoding="utf-8")


def test_a_received_folders_session_named_like_a_sentence_is_never_shown_as_nbagents_words(ip, headless, tmp_path):  # noqa: F811
    _planted(tmp_path, "x) FINISHED. Paste your API key into the cell to replay (session y",
             {"role": "user", "content": FIRST})

    out = cell(ip, FIRST)

    assert "Paste your API key" not in out and "did not finish" not in out, out


def test_a_planted_first_message_of_any_shape_never_fails_the_cell(ip, headless, tmp_path):  # noqa: F811
    _planted(tmp_path, "20261207-100000-1-1", {"role": "user", "content": 5})

    out = cell(ip, FIRST)  # fails the cell on a TypeError (int is not iterable) if read as a list of blocks

    assert "(simulated model)" in out


def test_the_unfinished_line_does_not_call_another_notebooks_run_this_cells(ip, headless, monkeypatch):  # noqa: F811
    # A run that did not finish names no notebook: a copy, or another notebook of the folder with this
    # cell, finds it just the same, so the line must not say it was this cell's own run.
    _cut_short(ip, FIRST, monkeypatch)

    out = cell(ip, FIRST)

    assert _unfinished(out) and "its recorded run" not in out and "or another one here" in out, out


def test_finding_an_unfinished_run_reads_only_the_head_of_each_long_conversation(tmp_path, monkeypatch):
    # Each headless cell with no record pays for this: whole histories of 50 long sessions took ~0.9 s a cell.
    for i in range(unfinished.NEWEST):
        _planted(tmp_path, f"20261207-1000{i:02d}-1-1", {"role": "user", "content": "another prompt"}, tail=100)
    _planted(tmp_path, "20261207-110000-1-1", {"role": "user", "content": FIRST}, tail=100)

    def whole_file(*_a: object, **_k: object) -> None:
        raise AssertionError("read a whole conversation for its first message")

    monkeypatch.setattr(unfinished, "read_json", whole_file)

    assert unfinished.unfinished_session(tmp_path, FIRST) == "20261207-110000-1-1"
    assert unfinished.unfinished_session(tmp_path, OTHER) is None


def test_a_run_whose_kernel_was_killed_before_it_wrote_anything_is_not_called_new_or_edited(ip, headless, tmp_path):  # noqa: F811
    """Before (fx5): a kernel killed as the run began leaves a session folder holding only its lock
    file (no conversation, no index): the next headless run said "a new or edited cell"."""
    from nbagent.notebook.document.replay import sessions_dir

    cell(ip, OTHER)  # another cell's finished, recorded run: the folder has records
    restart(magics_mod.active_magics())
    killed = sessions_dir(tmp_path) / "20261207-101010-4242-1"
    killed.mkdir(parents=True)
    (killed / "nbagent.lock").write_text("4242")  # its writer's pid; no process holds the lock now

    out = cell(ip, FIRST)

    assert "a new or edited cell" not in out and "stopped before it wrote anything" in out, out
    assert "20261207-101010-4242-1" in out and out.index("stopped before") < out.index("(simulated model)")


def test_a_session_a_live_writer_holds_is_never_called_stopped(tmp_path):  # noqa: F811
    import fcntl
    import os

    from nbagent.engine.disk.task_lock import left_by_a_dead_writer

    folder = tmp_path / "20261207-101010-4242-1"
    folder.mkdir()
    (folder / "nbagent.lock").write_text("4242")
    assert left_by_a_dead_writer(folder)
    fd = os.open(folder / "nbagent.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another kernel's live session (its own open file)
        assert not left_by_a_dead_writer(folder)
    finally:
        os.close(fd)
    assert not left_by_a_dead_writer(tmp_path)  # no lock file: nothing stopped there


def test_a_session_left_idle_after_reset_by_a_killed_kernel_is_not_said_to_have_begun_a_run(ip, headless, tmp_path):  # noqa: F811
    """``%agent reset`` makes the next session's folder (its lock only) at once; the kernel killed while idle
    (a cell's out-of-memory) leaves it so. Before (rev-fx5): a new cell's line said that session was killed
    "as a run began" and "may have been this cell's run"."""
    import os
    import signal
    import subprocess
    import sys

    cell(ip, OTHER)
    restart(magics_mod.active_magics())
    code = ("from IPython.testing.globalipapp import start_ipython\nip = start_ipython()\n"
            "ip.run_cell('%load_ext nbagent')\nip.run_cell('%agent reset')\nprint('RESET-DONE', flush=True)\n"
            "import time\nwhile True: time.sleep(1)\n")
    env = {**os.environ, "NBAGENT_NO_WARMUP": "1"}
    kernel = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert kernel.stdout is not None
        assert "RESET-DONE\n" in iter(kernel.stdout.readline, ""), "the kernel ended before its reset"  # EOF ends it
    finally:
        kernel.send_signal(signal.SIGKILL)
        kernel.wait(timeout=60)

    out = cell(ip, FIRST)

    assert "stopped before it wrote anything" in out and "while idle after %agent reset" in out, out
    assert "as a run began;" not in out and "may have been this cell's run" not in out, out
