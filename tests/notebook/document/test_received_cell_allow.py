"""A replayed cell's ``--allow`` holds when its session goes on live (notebook 04), as it did live:
but only for a record signed with your key. A received folder's record is someone else's run: its
cells' ``--allow`` was their answer for their prompts, and replaying it grants nothing to yours."""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.notebook import magics as magics_mod
from tests.notebook.document.test_replay_inprocess import FIRST, SECOND, agent, cell, ip, restart

__all__ = ["ip"]  # the in-process shell fixture


def test_a_received_records_allow_is_not_given_to_the_users_next_prompt(ip: Any, tmp_path: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    magics = magics_mod.active_magics()
    magics.allow = []
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "their_key"))
    cell(ip, FIRST, "--allow python shell")  # the folder as its author recorded it
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "my_key"))  # received: another user runs it
    restart(magics)
    assert "not signed with your key" in cell(ip, FIRST, "--allow python shell")  # Run All: replayed, no request

    out = cell(ip, SECOND)  # the user's own next prompt, live, in the received session

    assert "replayed: session" not in out
    assert not {"python", "shell"} & set(agent().config.allow)


def test_your_own_records_allow_still_holds_when_its_session_goes_on_live(ip: Any, tmp_path: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    magics = magics_mod.active_magics()
    magics.allow = []
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "my_key"))
    cell(ip, FIRST, "--allow python")
    restart(magics)
    assert "replayed: session" in cell(ip, FIRST, "--allow python")

    cell(ip, SECOND)

    assert "python" in agent().config.allow

