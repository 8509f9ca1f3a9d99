"""A replayed cell's session options hold when its session goes on live, as they did live.

``%%agent --window 4000 --max-session-budget 0.50 --model claude-opus-5`` set the rest of the
session when the notebook ran live. After Restart & Run All replayed it, the next live prompt ran
without them: the default model ("Continuing this session with claude-sonnet-5-5, as set here"),
the model's 1,000,000-token window (a context-window lesson stopped truncating) and no session
cap. Limits (window, budgets) hold whoever recorded the cell (a received record's only where
tighter than yours); what spends or changes what is sent (model, effort, web search, context
policy, notes, endpoint) only from your own record, as ``--allow`` does; a permission mode never.
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from typing import Any, Iterator

import pytest

from nbagent.notebook import magics as magics_mod
from tests.notebook.document.test_replay_inprocess import FIRST, SECOND, agent, cell, ip, restart

__all__ = ["ip"]  # the in-process shell fixture

@contextmanager
def _local_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[Any]:
    """An endpoint profile ``local`` (a simulated server on loopback, its token in ``LOCAL_TOKEN``),
    and no profile of this machine's user; yields the server's API (its requests)."""
    from nbagent.providers.simulated import SimulatedAPI
    from nbagent.providers.simulated.server import LoopbackServer

    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LOCAL_TOKEN", "local-token")
    api = SimulatedAPI(rejects=("cache_control",), models={"llama-local": 32_768})
    with LoopbackServer(api) as server:
        monkeypatch.setattr(magics_mod.active_magics(), "endpoints", {"local": {
            "base_url": server.base_url, "auth_token_env": "LOCAL_TOKEN", "model": "llama-local"}})
        yield api


OPTIONS = "--window 4000 --max-session-budget 0.5 --session-token-budget 900000 --model claude-opus-5"


def test_a_replayed_cells_window_budgets_and_model_hold_when_its_session_goes_on_live(ip: Any) -> None:
    cell(ip, FIRST, OPTIONS)
    restart(magics_mod.active_magics())
    assert "replayed: session" in cell(ip, FIRST, OPTIONS)

    out = cell(ip, SECOND)

    config = agent().config
    assert "replayed: session" not in out and "Continuing this session with" not in out
    assert (config.context_window, config.max_session_budget_usd, config.session_token_budget, config.model) == (
        4000, 0.5, 900000, "claude-opus-5")


def test_status_after_a_replay_names_the_window_the_replayed_cell_set(ip: Any) -> None:
    cell(ip, FIRST, "--window 4000")
    restart(magics_mod.active_magics())
    cell(ip, FIRST, "--window 4000")

    ip.run_cell("%agent status")

    assert agent().config.context_window == 4000  # not the model table's 1,000,000


def test_a_later_cells_own_option_wins_over_a_replayed_one(ip: Any) -> None:
    cell(ip, FIRST, "--window 4000")
    restart(magics_mod.active_magics())
    cell(ip, FIRST, "--window 4000")

    cell(ip, SECOND, "--window 8000")

    assert agent().config.context_window == 8000


def test_a_received_records_limits_hold_but_its_model_is_not_taken(ip: Any, tmp_path: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "their_key"))
    cell(ip, FIRST, OPTIONS + " --permissions accept_edits")
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "my_key"))  # received: another user runs it
    restart(magics_mod.active_magics())
    assert "not signed with your key" in cell(ip, FIRST, OPTIONS + " --permissions accept_edits")

    cell(ip, SECOND)

    config = agent().config
    assert (config.context_window, config.max_session_budget_usd, config.session_token_budget) == (4000, 0.5, 900000)
    assert config.model != "claude-opus-5" and config.permission_mode == "default"


def test_a_replayed_cells_session_budget_stops_the_next_live_prompt_as_it_did_live(ip: Any) -> None:
    assert "done: end_turn" in cell(ip, FIRST)
    spent = agent().totals.spent_usd  # what the kernel context makes it: measured, not assumed
    restart(magics_mod.active_magics())
    cap = f"--max-session-budget {spent * 0.9:.6f}"  # the record's first turn spent past it: no next prompt
    assert "replayed: session" in cell(ip, FIRST, cap)

    out = cell(ip, SECOND)

    assert "this run 0 request(s)" in out and "stopped: the session budget" in out


def test_status_after_a_replay_names_the_tools_the_replayed_cells_allowed(ip: Any) -> None:
    magics = magics_mod.active_magics()
    magics.allow = []
    cell(ip, FIRST, "--allow python")
    restart(magics)
    cell(ip, FIRST, "--allow python")

    ip.run_cell("%agent status")

    assert "python" in agent().config.allow  # "allowed  python", as live, not "(read-only tools only)"


def test_a_setting_changed_after_the_replayed_cells_wins_as_it_did_live(ip: Any) -> None:
    magics = magics_mod.active_magics()
    cell(ip, FIRST, "--window 4000")
    restart(magics)
    cell(ip, FIRST, "--window 4000")
    try:
        magics.context_window = 8000  # %config AgentMagics.context_window = 8000, in a cell below it

        cell(ip, SECOND)

        assert agent().config.context_window == 8000
    finally:
        magics.context_window = None


@pytest.mark.filterwarnings("ignore:nbagent has no prices")
def test_a_conversation_recorded_on_a_local_endpoint_goes_on_there_after_a_replay(
        ip: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # `--endpoint local` kept the notebook's data on a local server; after Restart & Run All the next
    # prompt sent the whole conversation to the default provider (Anthropic's API, with a key)
    with _local_endpoint(monkeypatch, tmp_path) as api:
        cell(ip, FIRST, "--endpoint local")
        restart(magics_mod.active_magics())
        assert "replayed: session" in cell(ip, FIRST, "--endpoint local")
        before = len(api.requests)

        out = cell(ip, SECOND)

        assert len(api.requests) > before and "Continuing this session with" not in out
        assert agent().endpoint is not None and agent().endpoint.name == "local"


def test_a_change_made_between_replayed_cells_is_not_undone_by_the_next_replayed_cell(ip: Any) -> None:
    cell(ip, FIRST, "--window 4000")
    cell(ip, SECOND)
    restart(magics_mod.active_magics())
    cell(ip, FIRST, "--window 4000")
    ip.run_cell("%agent status")  # loads the replayed session
    agent().reconfigure(context_window=8000)  # the user's code, between the two agent cells

    assert "replayed: session" in cell(ip, SECOND)

    assert agent().config.context_window == 8000  # live, the second cell set nothing


def test_a_permission_mode_is_never_taken_from_a_replayed_cell_not_even_your_own(ip: Any) -> None:
    """The options line is not signed: anyone can edit ``--permissions bypass`` into a notebook of
    yours, and a mode grants every tool at once (review of newcomer pass 15, F1)."""
    cell(ip, FIRST, "--window 4000 --permissions bypass")
    restart(magics_mod.active_magics())
    cell(ip, FIRST, "--window 4000 --permissions bypass")

    cell(ip, SECOND)

    config = agent().config
    assert config.context_window == 4000 and config.permission_mode == "default"


def test_a_received_records_limit_narrows_yours_but_never_widens_it(ip: Any, tmp_path: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(magics_mod.active_magics(), "max_session_budget", 0.02)  # yours
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "their_key"))
    cell(ip, FIRST, "--max-session-budget 1000 --session-token-budget 900000 --context cline --notes 2000")
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "my_key"))  # received
    restart(magics_mod.active_magics())
    cell(ip, FIRST, "--max-session-budget 1000 --session-token-budget 900000 --context cline --notes 2000")

    cell(ip, SECOND)

    config = agent().config
    assert config.max_session_budget_usd == 0.02  # not raised to the sender's 1000
    assert config.session_token_budget == 900000  # you had none: theirs narrows
    assert not config.notes and "cline" not in str(config.context)  # what is sent is yours to choose


@pytest.mark.filterwarnings("ignore:nbagent has no prices")
def test_run_all_and_status_need_no_endpoint_profile_to_show_a_record_made_on_one(
        ip: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading a record only to show it (replayed cells, ``%agent status``) takes no endpoint: on a
    machine without the record's profile, Run All went on failing with "no endpoint profile named
    'local'" (review of newcomer pass 15, F6)."""
    magics = magics_mod.active_magics()
    with _local_endpoint(monkeypatch, tmp_path):
        cell(ip, FIRST, "--endpoint local")
        cell(ip, SECOND, "--endpoint local")
    monkeypatch.setattr(magics, "endpoints", {})  # another machine: no such profile, no token
    monkeypatch.delenv("LOCAL_TOKEN")
    restart(magics)

    assert "replayed: session" in cell(ip, FIRST, "--endpoint local")
    assert ip.run_cell("%agent status").error_in_exec is None
    assert "replayed: session" in cell(ip, SECOND, "--endpoint local")


def test_a_received_cell_that_starts_a_session_leaves_the_limits_kept_for_it(ip: Any, tmp_path: Any,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A received cell's ``--new`` names a session it did not start for you: it clears nothing
    (review of newcomer pass 15, F4)."""
    from nbagent.notebook.document.replayed_options import remember

    link: Any = type("Link", (), {"replayed_options": {"s1": {"max_session_budget_usd": 0.02}}, "replayed_allow": {},
                                  "replayed_mine": {}})()
    args = argparse.Namespace(new=True, window=None, max_session_budget=None, session_token_budget=None,
                              allow=None, endpoint=None)
    remember(link, "s1", args, mine=False)
    assert link.replayed_options["s1"] == {"max_session_budget_usd": 0.02}
    remember(link, "s1", args, mine=True)  # your own record's --new did start it
    assert link.replayed_options["s1"] == {}


@pytest.mark.filterwarnings("ignore:nbagent has no prices")
@pytest.mark.parametrize("notebook", ["analysis.ipynb", None], ids=["its-own-record", "a-copy-of-the-record"])
def test_a_local_endpoints_conversation_goes_on_there_after_status_loaded_the_replayed_session(
        ip: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, notebook: str | None) -> None:
    # %agent status loads the replayed session to describe it, without its endpoint (showing needs
    # no profile); the next prompt then continued that loaded session as it was: on the default
    # provider. The notebook's own record is continued in place; with no notebook name (so, not
    # its own) status loads a copy, and the prompt goes on in a copy of that.
    if notebook is not None:
        monkeypatch.setenv("JPY_SESSION_NAME", notebook)
    with _local_endpoint(monkeypatch, tmp_path) as api:
        cell(ip, FIRST, "--endpoint local")
        restart(magics_mod.active_magics())
        assert "replayed: session" in cell(ip, FIRST, "--endpoint local")
        ip.run_cell("%agent status")
        before = len(api.requests)

        cell(ip, SECOND)

        assert len(api.requests) > before
        assert agent().endpoint is not None and agent().endpoint.name == "local"
        assert agent().config.model == "llama-local"  # the profile's model, as live


@pytest.mark.filterwarnings("ignore:nbagent has no prices")
def test_the_session_your_code_read_after_a_replay_goes_on_live_on_the_records_endpoint(
        ip: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # `s = nbagent.session()` after Run All loads the replayed session (without its endpoint); the
    # next prompt loaded it again with the endpoint, into a new object: `s` then read a closed
    # agent that never saw the turn (`s.turns_df()` of an audit cell missed it).
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    with _local_endpoint(monkeypatch, tmp_path) as api:
        cell(ip, FIRST, "--endpoint local")
        restart(magics_mod.active_magics())
        cell(ip, FIRST, "--endpoint local")
        ip.run_cell("s = __import__('nbagent').session()")
        before = len(api.requests)

        cell(ip, SECOND)

        s = magics_mod.active_magics().current
        assert s is ip.user_ns["s"] and s is not None and s.turn == 2  # the object your code holds goes on
        assert s.agent.endpoint is not None and s.agent.endpoint.name == "local" and len(api.requests) > before


@pytest.mark.filterwarnings("ignore:nbagent has no prices")
def test_a_local_endpoints_conversation_goes_on_there_when_the_notebooks_code_made_the_session(
        ip: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The replay fills the session the code made (without the endpoint: showing needs no profile),
    # and the next prompt went on in it as it was: on the default provider, the history with it.
    from tests.notebook.document.test_replay_code_session import MADE_IN_CODE

    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    with _local_endpoint(monkeypatch, tmp_path) as api:
        ip.run_cell(MADE_IN_CODE)
        cell(ip, FIRST, "--endpoint local")
        restart(magics_mod.active_magics())
        ip.run_cell(MADE_IN_CODE)
        assert "replayed: session" in cell(ip, FIRST, "--endpoint local")
        before = len(api.requests)

        cell(ip, SECOND)

        assert len(api.requests) > before
        assert agent().endpoint is not None and agent().endpoint.name == "local"
        assert magics_mod.active_magics().current is ip.user_ns["s"]  # the code's session goes on
        assert agent().config.model == "llama-local"  # the profile's model: live, --endpoint started a new session


@pytest.mark.filterwarnings("ignore:nbagent has no prices")
def test_an_edited_prompt_forks_the_codes_session_onto_the_records_endpoint_with_its_settings(
        ip: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.notebook.document.test_replay_code_session import MADE_IN_CODE

    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    with _local_endpoint(monkeypatch, tmp_path) as api:
        ip.run_cell(MADE_IN_CODE)
        cell(ip, FIRST, "--endpoint local")
        cell(ip, SECOND)
        restart(magics_mod.active_magics())
        ip.run_cell(MADE_IN_CODE)
        assert "replayed: session" in cell(ip, FIRST, "--endpoint local")
        before = len(api.requests)

        cell(ip, "now add 6 to it with python")  # edited: a fork of the record at turn 1

        assert len(api.requests) > before
        assert agent().endpoint is not None and agent().endpoint.name == "local"
        assert agent().config.model == "llama-local" and magics_mod.active_magics().current is ip.user_ns["s"]
