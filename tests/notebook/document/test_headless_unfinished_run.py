"""A headless run (nbclient, ``jupyter nbconvert --execute``, ``nbagent batch``) after a run of the same
agent cell that did not finish (a cell timeout, an interrupt, the kernel killed): the cut-short run
recorded no answer, so this run asks the model. Its line said "a new or edited cell" (or, in a folder
with no finished record, that there was no .nbagent/ record beside the notebook): now it says the
recorded run did not finish, and how to give a re-run what it needs."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document import link as link_mod
from nbagent.notebook.document import live_lines
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
