"""A gateway key your endpoint profile reads from a variable of your own naming (``ACME_GW``) is a
configured secret everywhere: in a session on another endpoint (the simulated API here), before
any session (a serve client's reply, a replay's lines), and kept from the shell tool. An in-process
shell with the offline simulated API (atk17)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod

GW_KEY = "gwk-4fT9qLm2Xz8RbN7c"  # no key's shape, no credential's name: known only from the profile
MAGICS_KEY = "Hq7-Lw3pZ9-xT2vN"


@pytest.fixture
def ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    home = tmp_path / "home" / ".nbagent"
    home.mkdir(parents=True)
    (home / "endpoints.json").write_text(json.dumps({"endpoints": {
        "gw": {"base_url": "http://127.0.0.1:4000", "auth_token_env": "ACME_GW"}}}))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ACME_GW", GW_KEY)
    monkeypatch.setenv("TEAM_PROXY", MAGICS_KEY)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    shell = InteractiveShell.instance()
    with capture_output():
        shell.run_cell("%load_ext nbagent")
    magics = magics_mod.active_magics()
    if magics.current is not None:
        magics.current.agent.close()
    magics.current, magics._document = None, None
    magics.endpoints = {"team": {"base_url": "http://127.0.0.1:4001", "api_key_env": "TEAM_PROXY"}}
    yield shell
    magics.endpoints = {}
    if magics.current is not None:
        magics.current.agent.close()
    magics.current, magics._document = None, None


def test_a_profiles_key_held_in_a_variable_is_not_sent_by_a_session_on_another_endpoint(ip: Any) -> None:
    with capture_output():
        for cell in ["import os", "gw = os.environ['ACME_GW']", "team = os.environ['TEAM_PROXY']", "gw",
                     "%%agent --simulated\nwhat are `gw` and `team`?"]:
            assert ip.run_cell(cell, store_history=True).error_in_exec is None
    session = magics_mod.active_magics().current
    assert session is not None
    sent = "\n".join(json.dumps(r.body) for r in session.agent.simulated_api.requests)
    assert "kernel-state" in sent and "gw" in sent
    assert GW_KEY not in sent and MAGICS_KEY not in sent
    # and kept from the shell tool's and MCP servers' environments, as secret_env variables are
    assert {"ACME_GW", "TEAM_PROXY"} <= set(session.agent.config.secret_env)


def test_with_no_session_loaded_a_profiles_key_is_redacted_where_nbagent_shows_the_kernel(ip: Any) -> None:
    from nbagent.notebook.document.input_changes import secrets_at_hand

    with capture_output():
        assert ip.run_cell("import os\ngw = os.environ['ACME_GW']", store_history=True).error_in_exec is None
    magics = magics_mod.active_magics()
    assert magics.current is None  # a replay after a restart, a serve client before any prompt
    redact = secrets_at_hand(magics)
    assert redact(f"the cell `x = '{GW_KEY}'` and `y = '{MAGICS_KEY}'` changed") == \
        "the cell `x = '[redacted]'` and `y = '[redacted]'` changed"
