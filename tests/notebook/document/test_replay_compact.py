"""Restart & Run All of a notebook with an ``%agent compact`` cell replays; it never asks.

The replayed session holds the whole record (the turns after the compact cell too), so the compact
cell compacted that — a live summary request in the middle of a replay, on the user's key for a
received notebook, that rewrote turns Run All had not reached yet; and each Run All did it again.
"""

from __future__ import annotations

from typing import Any

import pytest
from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod
from tests.notebook.document.test_replay_inprocess import FIRST, SECOND, agent, cell, ip, restart

__all__ = ["ip"]  # the in-process shell fixture

LATER = ["what is 2 + 2? use python", "what is 3 + 3? use python"]


def run(ip: Any, code: str) -> str:
    ip.display_pub.outputs.clear()
    with capture_output() as cap:
        result = ip.run_cell(code)
    assert result.error_in_exec is None, (result.error_in_exec, cap.stdout)  # Run All goes on
    shown = [o.data.get("text/plain", "") for o in cap.outputs]
    return "\n".join([cap.stdout, *shown, *(o["data"].get("text/plain", "") for o in ip.display_pub.outputs)])


def _notebook(ip: Any) -> list[str]:
    outs = [cell(ip, FIRST), cell(ip, SECOND), run(ip, "%agent compact")]
    return outs + [cell(ip, p) for p in LATER]


def test_run_all_of_a_notebook_with_a_compact_cell_sends_no_request_and_keeps_the_record(ip: Any) -> None:
    _notebook(ip)
    live = agent()
    requests, spent, history = len(live.records), live.totals.spent_usd, list(live.history)
    restart(magics_mod.active_magics())

    outs = _notebook(ip)

    assert all("replayed: session" in o for o in outs[:2] + outs[3:])
    assert "this compaction is in the record (after turn 2" in outs[2] and "no request sent" in outs[2]
    replayed = agent()
    assert (len(replayed.records), replayed.totals.spent_usd) == (requests, spent)  # nothing asked
    assert list(replayed.history) == history  # the later turns were not compacted again


def test_a_compact_cell_before_the_records_last_turn_says_so_under_run_all_and_sends_nothing(
        ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")  # the notebook's own record
    cell(ip, FIRST)
    cell(ip, SECOND)
    requests = len(agent().records)
    restart(magics_mod.active_magics())
    cell(ip, FIRST)

    out = run(ip, "%agent compact")  # a cell added since, between two recorded turns

    assert "nothing compacted: this kernel is replaying the record (1 turn(s) shown" in out
    assert len(agent().records) == requests
    assert "replayed: session" in cell(ip, SECOND)  # Run All goes on replaying


def test_a_compact_cell_after_your_records_last_turn_compacts_and_the_next_run_all_shows_it(
        ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # It refused even here, where no recorded turn follows: the next prompt then sent the history
    # uncompacted, though the user had asked to compact it.
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")  # the notebook's own record
    cell(ip, FIRST)
    cell(ip, SECOND)
    requests = len(agent().records)
    restart(magics_mod.active_magics())
    cell(ip, FIRST)
    cell(ip, SECOND)

    out = run(ip, "%agent compact")  # a cell added since the notebook last ran live, at its end

    assert "the replay has shown the record's last turn (turn 2)" in out and "Compacted messages" in out
    assert len(agent().records) == requests + 1  # the summary request, on the record itself
    later = cell(ip, LATER[0])
    assert "replayed: session" not in later and agent().session.task_dir is not None
    restart(magics_mod.active_magics())
    outs = [cell(ip, FIRST), cell(ip, SECOND), run(ip, "%agent compact"), cell(ip, LATER[0])]
    assert "this compaction is in the record (after turn 2" in outs[2]
    assert "replayed: session" in outs[3]


def test_a_compact_cell_at_your_records_end_with_too_little_to_summarise_says_so_and_sends_nothing(
        ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # It said "compacting now (a summary request)", and the compaction then found nothing to compact.
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")  # the notebook's own record
    cell(ip, FIRST)
    requests = len(agent().records)
    restart(magics_mod.active_magics())
    cell(ip, FIRST)

    out = run(ip, "%agent compact")

    assert "nothing compacted: the replay has shown the record's last turn (turn 1)" in out
    assert "compacting now" not in out and "Compaction failed" not in out
    assert len(agent().records) == requests


def test_a_compact_cell_at_the_end_of_a_record_that_is_not_this_notebooks_asks_nothing(ip: Any) -> None:
    cell(ip, FIRST)  # no notebook name: the record is not this notebook's own (a copy, headless)
    requests = len(agent().records)
    restart(magics_mod.active_magics())
    cell(ip, FIRST)

    out = run(ip, "%agent compact")

    assert "nothing compacted" in out and "Compacted messages" not in out
    assert len(agent().records) == requests


def test_after_a_live_prompt_compact_compacts_as_it_does_live(ip: Any) -> None:
    cell(ip, FIRST)
    restart(magics_mod.active_magics())
    cell(ip, FIRST)
    cell(ip, SECOND, "--live")

    out = run(ip, "%agent compact")

    assert "Compacted messages" in out


def test_a_received_records_compact_cell_at_its_end_asks_nothing_on_your_key(
        ip: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")  # the same notebook name: sent with its folder
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "their_key"))
    cell(ip, FIRST)
    requests = len(agent().records)
    restart(magics_mod.active_magics())
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "my_key"))  # received: another user runs it
    assert "replayed: session" in cell(ip, FIRST)

    out = run(ip, "%agent compact")

    assert "nothing compacted" in out and "Compacted messages" not in out
    assert len(agent().records) == requests


@pytest.mark.filterwarnings("ignore:nbagent has no prices")
def test_a_compact_cell_at_the_end_of_a_local_endpoints_record_compacts_there(
        ip: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.notebook.document.test_replay_session_options import _local_endpoint

    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    with _local_endpoint(monkeypatch, tmp_path) as api:
        cell(ip, FIRST, "--endpoint local")
        cell(ip, SECOND)
        restart(magics_mod.active_magics())
        cell(ip, FIRST, "--endpoint local")
        cell(ip, SECOND)
        before = len(api.requests)

        assert "Compacted messages" in run(ip, "%agent compact")

        assert len(api.requests) == before + 1  # the summary request went where the conversation is kept


def test_a_new_cell_after_a_live_compact_replays_its_record_headless(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The compaction at the first record's end marked the kernel as having asked a turn live, so a
    # headless run (no cell ids) asked the recorded --new cell below it again, on your key (rule 3
    # is about turns asked here, and no turn was).
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    cell(ip, FIRST)
    cell(ip, SECOND)
    cell(ip, LATER[0], "--new")
    restart(magics_mod.active_magics())
    cell(ip, FIRST)
    cell(ip, SECOND)
    assert "Compacted messages" in run(ip, "%agent compact")  # a cell added since, between the sessions
    requests = len(agent().records)

    later = cell(ip, LATER[0], "--new")

    assert "replayed: session" in later
    assert len(agent().records) == requests


def test_a_later_sessions_recorded_compact_after_a_live_compact_sends_nothing(
        ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # After the live compact the kernel counted as live, so the later session's recorded compact
    # cell compacted the session in memory (the first one) again, into the first record.
    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    cell(ip, FIRST)
    cell(ip, SECOND)
    cell(ip, LATER[0], "--new")
    cell(ip, LATER[1])
    run(ip, "%agent compact")
    restart(magics_mod.active_magics())
    cell(ip, FIRST)
    cell(ip, SECOND)
    run(ip, "%agent compact")  # added since: compacts the first record, live
    first = agent()
    requests = len(first.records)
    assert "replayed: session" in cell(ip, LATER[0], "--new") and "replayed: session" in cell(ip, LATER[1])

    out = run(ip, "%agent compact")

    assert "this compaction is in the record (after turn 2" in out and "Compacted messages" not in out
    assert len(first.records) == requests


def test_a_compact_cell_at_your_records_end_asks_no_other_provider_than_the_records(
        ip: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # A record made on Anthropic's API, Run All where the key is not set (a replay needs none): the
    # compaction went to the offline simulated model, and its summary was written into the record.
    import json

    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    cell(ip, FIRST)
    cell(ip, SECOND)
    requests = len(agent().records)
    for index in (tmp_path / ".nbagent" / "replay").glob("*.json"):  # as if recorded with a key
        data = json.loads(index.read_text())
        index.write_text(json.dumps({**data, "provider": "anthropic"}))
    restart(magics_mod.active_magics())
    cell(ip, FIRST)
    cell(ip, SECOND)

    out = run(ip, "%agent compact")

    assert "the record's turns were answered by anthropic" in out and "Compacted messages" not in out
    assert len(agent().records) == requests


@pytest.mark.filterwarnings("ignore:nbagent has no prices")
def test_a_compact_cell_at_the_end_of_a_record_whose_endpoint_has_no_profile_here_lets_run_all_go_on(
        ip: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Showing the record needs no endpoint profile, but the compact cell at its end failed with
    # "no endpoint profile named 'local'", stopping Run All (before, it said nothing compacted).
    from tests.notebook.document.test_replay_session_options import _local_endpoint

    monkeypatch.setenv("JPY_SESSION_NAME", "analysis.ipynb")
    with _local_endpoint(monkeypatch, tmp_path):
        cell(ip, FIRST, "--endpoint local")
        cell(ip, SECOND)
    monkeypatch.setattr(magics_mod.active_magics(), "endpoints", {})  # another machine of yours
    restart(magics_mod.active_magics())
    cell(ip, FIRST, "--endpoint local")
    cell(ip, SECOND)

    out = run(ip, "%agent compact")  # run() asserts the cell did not fail

    assert "nothing compacted" in out and "no endpoint profile named 'local'" in out
