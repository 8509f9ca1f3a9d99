"""After a replay, the session the notebook's code made (and holds) reads the replayed turns.

Notebooks 02–05 make their session in code (``s = magics.new_session(...)``) and read it after
their agent cells (``s.turns_df()``, ``s.events``, ``s.agent.history``, ``%agent saw``). A replay
loads no session, so under Restart & Run All those cells read the fresh, empty session: empty
tables, ``history is empty``, and ``%agent saw`` failed with "No request sent yet", stopping Run All.
"""

from __future__ import annotations

from typing import Any

from nbagent.notebook import magics as magics_mod

from .test_replay_inprocess import FIRST, SECOND, agent, cell, ip, restart  # noqa: F401  (ip is a fixture)

MADE_IN_CODE = "s = __import__('nbagent').notebook.magics.active_magics().new_session(context_window=4000)"


def _record(shell: Any) -> tuple[int, int]:
    """Run the notebook live once: its code makes the session, two agent cells ask."""
    shell.run_cell(MADE_IN_CODE)
    cell(shell, FIRST)
    cell(shell, SECOND)
    return agent().turn, len(agent().records)


def test_the_session_the_notebooks_code_made_reads_the_replayed_turns_after_restart_and_run_all(ip):  # noqa: F811
    turns, requests = _record(ip)
    restart(magics_mod.active_magics())
    ip.run_cell(MADE_IN_CODE)

    outs = [cell(ip, FIRST), cell(ip, SECOND)]

    assert all("replayed: session" in out for out in outs)
    s = ip.user_ns["s"]
    assert magics_mod.active_magics().current is s  # still the code's session, and the active one
    assert s.turn == turns and len(s.turns_df()) == requests  # the recorded requests, none sent here
    assert s.agent.history and s.agent.config.context_window == 4000  # the code's own settings hold
    assert ip.run_cell("%agent saw").error_in_exec is None  # was "No request sent yet": Run All stopped


def test_the_code_sessions_own_unused_folder_goes_when_the_replay_fills_it(ip):  # noqa: F811
    """The code's session, made before the replay filled it, never wrote its folder: it was left
    empty in .nbagent/sessions/, one more at each headless Run All (notebook 04 run three times: four)."""
    from nbagent.notebook.document.replay import sessions_dir

    _record(ip)
    root = magics_mod.active_magics().document.root
    for _ in range(2):
        restart(magics_mod.active_magics())
        ip.run_cell(MADE_IN_CODE)
        cell(ip, FIRST)
        cell(ip, SECOND)
    restart(magics_mod.active_magics())
    assert [p.name for p in sessions_dir(root).iterdir() if not any(p.iterdir())] == []


def test_nbagent_session_after_a_replay_is_the_replayed_session_not_a_new_empty_one(ip):  # noqa: F811
    cell(ip, FIRST)
    cell(ip, SECOND)
    requests = len(agent().records)
    restart(magics_mod.active_magics())
    cell(ip, FIRST)
    cell(ip, SECOND)

    ip.run_cell("s = __import__('nbagent').session()")

    s = ip.user_ns["s"]
    # the record (or, where the kernel does not know its notebook's name, a copy of it): no request sent
    assert s.turn == 2 and len(s.turns_df()) == requests


def test_an_edited_cell_after_a_replay_goes_on_live_in_the_codes_session_with_its_window_and_allow(ip):  # noqa: F811
    # 02 with one prompt edited, Restart & Run All: the turns after the edit ran in a fork made with the
    # defaults — a 1,000,000-token window (the truncation lesson stopped truncating) and no allowed tools
    # (Allow cards in JupyterLab, denials headless) — and `s` was no longer the active session.
    made = MADE_IN_CODE.replace("context_window=4000", "context_window=4000, allow=('python',)")
    ip.run_cell(made)
    cell(ip, FIRST, "--no-cells")
    cell(ip, SECOND, "--no-cells")
    magics = magics_mod.active_magics()
    magics.allow = []  # the notebook's own settings are the code's, not the kernel's
    restart(magics)
    ip.run_cell(made)
    assert "replayed: session" in cell(ip, FIRST, "--no-cells")

    out = cell(ip, SECOND.replace("5", "6"), "--no-cells")

    s = ip.user_ns["s"]
    assert "replayed: session" not in out and "denied" not in out.lower()
    assert magics.current is s and s.turn == 2
    assert s.agent.config.context_window == 4000 and "python" in s.agent.config.allow


def test_an_edited_cell_of_a_new_conversation_goes_on_as_it_did_live_not_in_the_codes_session(ip):  # noqa: F811
    """The code's session (its hooks, its window) was filled with the first record; a later ``--new``
    cell started another conversation, made live with the AgentMagics settings and no hooks. With
    the cell after it edited, that conversation went on inside the code's session object, with the
    code's settings (all of them, hooks included, once they were carried in one place)."""
    made = ("def on_done(*a, **k):\n    return None\n"
            "s = __import__('nbagent').notebook.magics.active_magics().new_session("
            "kernel_context_tokens=1234, context_window=4000, hooks={'on_done': on_done})")
    new, then = "what is 5 * 5? use python", "now add 1 to it with python"
    ip.run_cell(made)
    cell(ip, FIRST)
    cell(ip, new, "--new")
    cell(ip, then)
    magics = magics_mod.active_magics()
    live_window = magics.current.agent.config.context_window
    restart(magics)
    ip.run_cell(made)
    assert all("replayed" in out for out in (cell(ip, FIRST), cell(ip, new, "--new")))

    assert "replayed" not in cell(ip, then.replace("1", "2"))  # edited: asked live

    current = magics.current
    assert current is not ip.user_ns["s"]
    assert current.agent.config.context_window == live_window and current.agent.config.kernel_context_tokens != 1234
    assert "on_done" not in current.agent.engine.hooks.by_name
