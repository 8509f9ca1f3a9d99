"""A gateway key your endpoint profile reads from a variable of your own naming (``ACME_GW``) is a
configured secret everywhere: in a session on another endpoint (the simulated API here), before
any session (a serve client's reply, a replay's lines), and kept from the shell tool. An in-process
shell with the offline simulated API (atk17)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod
from tests.notebook.no_session import shell_without_session

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
    with shell_without_session() as (shell, magics):
        magics.endpoints = {"team": {"base_url": "http://127.0.0.1:4001", "api_key_env": "TEAM_PROXY"}}
        try:
            yield shell
        finally:
            magics.endpoints = {}


def test_a_profiles_key_held_in_a_variable_is_not_sent_by_a_session_on_another_endpoint(ip: Any) -> None:
    with capture_output():
        for cell in ["import os", "gw = os.environ['ACME_GW']", "team = os.environ['TEAM_PROXY']", "gw",
                     "%%agent --simulated --allow python\nwhat are `gw` and `team`?"]:
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


def test_a_project_mcp_server_carrying_a_profiles_key_is_not_trusted_and_the_error_names_the_profile(ip: Any) -> None:
    # Review of atk17, MEDIUM 4: trust accepted the file, then every %%agent cell failed naming secret_env.
    Path(".mcp.json").write_text(json.dumps({"mcpServers": {"search": {"command": "true", "env": {"GW_TOKEN": "${ACME_GW}"}}}}))
    with capture_output() as shown:
        ip.run_cell("%agent mcp")
    assert "refused" in shown.stdout and "ACME_GW" in shown.stdout and "endpoint profile 'gw'" in shown.stdout
    with capture_output() as trusted:
        result = ip.run_cell("%agent mcp trust")
    assert result.error_in_exec is not None
    message = str(result.error_in_exec)
    assert "not trusted" in message and "env.GW_TOKEN" in message
    assert "the value of ACME_GW, read as the auth_token_env of your endpoint profile 'gw'" in message
    assert "secret_env" not in message and GW_KEY not in message + trusted.stdout + shown.stdout
    with capture_output():  # not trusted: its servers do not start, and the session runs
        assert ip.run_cell("%%agent --simulated\nhello", store_history=True).error_in_exec is None


def test_a_session_refusing_a_trusted_servers_gateway_key_names_the_variable_and_its_profile(ip: Any) -> None:
    from nbagent.tools.mcp.config import McpConfigError, resolve_servers

    Path(".mcp.json").write_text(json.dumps({"mcpServers": {"search": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                                                                       "headers": {"X-Key": "Bearer ${ACME_GW}"}}}}))
    with pytest.raises(McpConfigError) as refused:
        resolve_servers({}, Path.cwd(), secrets=(GW_KEY,))
    assert "'headers.X-Key' would carry the value of ACME_GW, read as the auth_token_env of your endpoint profile 'gw'" \
        in str(refused.value)


def test_one_invalid_profile_row_does_not_drop_the_other_profiles_variables(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Review of atk17, LOW 6: one row with an unknown field made every profile's key no secret anywhere.
    from nbagent.providers.endpoints import profile_secret_env

    (tmp_path / ".nbagent").mkdir()
    (tmp_path / ".nbagent" / "endpoints.json").write_text(json.dumps({"endpoints": {
        "gw": {"base_url": "http://127.0.0.1:4000", "auth_token_env": "ACME_GW"},
        "old": {"base_url": "http://127.0.0.1:4002", "api_key_env": "OLD_KEY", "tiemout": 3}}}))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert profile_secret_env() == ("ACME_GW", "OLD_KEY")


def test_a_short_profile_variable_is_named_as_a_profiles_in_another_endpoints_notice(
        ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Review of atk17, LOW 5: the notice said ACME_GW was "listed in secret_env", which the user never did.
    monkeypatch.setenv("ACME_GW", "dev")
    with capture_output() as shown:
        assert ip.run_cell("%%agent --simulated\nhello", store_history=True).error_in_exec is None
    text = shown.stdout + "".join(str(o.data.get("text/plain", "")) for o in shown.outputs)
    assert "The value of ACME_GW (listed in secret_env, or read by one of your endpoint profiles)" in text
