"""``%%agent --endpoint NAME`` (issue 25): a profile from ``AgentMagics.endpoints`` sends the
session's requests to another Messages API endpoint (the simulator on loopback, as a local server
that refuses prompt caching and serves a model Claude's table does not know); ``%agent status``
names the endpoint, the model, the window's source and what was switched off; secrets never show."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from nbagent.notebook import magics as magics_mod
from nbagent.providers.simulated import SimulatedAPI
from nbagent.providers.simulated.server import LoopbackServer

from .test_magics_inprocess import fails, ip, run, session  # noqa: F401  (ip is a fixture)

TOKEN = "sk-local-SENTINEL-token-9a8b7c6d5e"


@pytest.fixture(autouse=True)
def _home(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no profile of this machine's user


def error_of(ip: Any, code: str) -> str:  # noqa: F811
    """The message of the error that failed the cell (it must fail: Run All stops there)."""
    from IPython.utils.capture import capture_output

    with capture_output():
        result = ip.run_cell(code)
    assert result.error_in_exec is not None, result
    return str(result.error_in_exec)


@pytest.fixture
def local(ip: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackServer]:  # noqa: F811
    monkeypatch.setenv("LOCAL_TOKEN", TOKEN)
    with LoopbackServer(SimulatedAPI(rejects=("cache_control",), models={"llama-local": 32_768})) as server:
        magics = magics_mod.active_magics()
        magics.endpoints = {"local": {"base_url": server.base_url, "auth_token_env": "LOCAL_TOKEN",
                                      "model": "llama-local", "headers": {"X-Course": "nb-101"}}}
        try:
            yield server
        finally:
            magics.endpoints = {}
            magics.new_session()


@pytest.mark.filterwarnings("ignore:nbagent has no prices")
def test_a_cell_on_an_endpoint_profile_reports_endpoint_window_and_what_was_switched_off(ip, local):  # noqa: F811
    out = run(ip, "%%agent --endpoint local --allow python\nWhat is 17 * 23?")
    assert "391" in out and "done: end_turn" in out and out.count("switched off for this endpoint") == 1
    assert f"· local at {local.base_url} ·" in out  # the header names the host, not only the profile
    s = session()
    assert s.agent.endpoint.name == "local" and s.agent.config.model == "llama-local"
    sent = [r for r in local.api.requests if r.path.endswith("/v1/messages")]
    assert sent and all(r.headers["x-course"] == "nb-101" for r in sent)
    status = run(ip, "%agent status")
    assert f"endpoint     local at {local.base_url} (bearer token, headers X-Course)" in status
    assert "window 32,768 (reported by the endpoint or its profile)" in status
    assert "switched off: cache_control" in status and "llama-local (local)" in status
    table = s.turns_df()
    assert set(table["cost"]) == {"–"} and set(table["switched off"]) == {"cache_control"}
    assert "unknown (" in run(ip, "%agent cost")  # never $0.0000
    shown = run(ip, "%agent config")
    assert "AgentMagics.endpoints: local (names only)" in shown
    for text in (out, status, shown, run(ip, "%agent history")):
        assert TOKEN not in text
    run(ip, "%%agent\nWhat is 2 * 4?")  # the next cell stays on the endpoint
    assert session().agent.endpoint.name == "local"


@pytest.mark.filterwarnings("ignore:nbagent has no prices")
def test_a_dollar_budget_on_the_unpriced_endpoint_model_fails_the_cell_and_a_token_budget_stops_it(ip, local):  # noqa: F811
    message = error_of(ip, "%%agent --endpoint local --max-budget 0.5\nWhat is 17 * 23?")
    assert "dollar budget cannot be enforced" in message and "--token-budget" in message
    assert not [r for r in local.api.requests if r.path.endswith("/v1/messages")]
    out = run(ip, "%%agent --endpoint local --token-budget 10 --allow python\nWhat is 17 * 23?")
    assert "token budget 10 reached" in out


def test_an_unknown_profile_and_endpoint_with_simulated_fail_the_cell_clearly(ip):  # noqa: F811
    assert "no endpoint profile named 'nowhere'" in error_of(ip, "%%agent --endpoint nowhere\nhi")
    assert "leave out --simulated" in fails(ip, "%%agent --endpoint x --simulated\nhi")


def test_a_literal_token_in_the_endpoints_setting_is_refused_and_never_printed(ip, caplog):  # noqa: F811
    from IPython.utils.capture import capture_output

    magics = magics_mod.active_magics()
    with capture_output() as cap:
        ip.run_cell('%config AgentMagics.endpoints = {"gw": {"base_url": "http://127.0.0.1:4000", '
                    f'"auth_token": "{TOKEN}"}}}}')
        ip.run_cell("%config AgentMagics")
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("literal auth_token" in e and "auth_token_env" in e for e in errors), errors
    assert magics.endpoints == {}
    assert TOKEN not in cap.stdout and not any(TOKEN in e for e in errors)


def test_a_credential_header_in_the_endpoints_setting_is_refused_and_never_printed(ip, caplog):  # noqa: F811
    from IPython.utils.capture import capture_output

    magics = magics_mod.active_magics()
    with capture_output() as cap:
        ip.run_cell('%config AgentMagics.endpoints = {"gw": {"base_url": "http://127.0.0.1:4000", '
                    f'"headers": {{"X-Course": "nb-101", "x-api-key": "{TOKEN}"}}}}}}')
        ip.run_cell("%config AgentMagics")
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("'x-api-key' carries a credential" in e for e in errors), errors
    assert magics.endpoints == {}
    assert TOKEN not in cap.stdout and not any(TOKEN in e for e in errors)


@pytest.mark.filterwarnings("ignore:nbagent has no prices")
def test_a_received_projects_profile_for_a_host_you_trusted_never_gets_your_anthropic_key(
        ip, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Attacker pass 24: a cloned repository's ``.nbagent/endpoints.json`` names a host you trusted (for
    another project, or a local port) and no key: the SDK filled in your ``ANTHROPIC_API_KEY``."""
    import json

    from nbagent.providers.endpoint_trust import trust_host

    key = "sk-ant-api03-USERS-OWN-" + "k" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "x-portkey-api-key: pk9f3a7c2e1b8d4f6a0c5e")
    api = SimulatedAPI(models={"llama-local": 32_768})
    with LoopbackServer(api) as server:
        trust_host(server.base_url)
        repo = tmp_path / "cloned"
        (repo / ".nbagent").mkdir(parents=True)
        (repo / ".nbagent" / "endpoints.json").write_text(json.dumps(
            {"endpoints": {"lab": {"base_url": server.base_url, "model": "llama-local"}}}))
        monkeypatch.chdir(repo)
        try:  # the simulator wants a key, as a gateway does: the file names none, so none is sent
            error = error_of(ip, "%%agent --endpoint lab\nWhat is 17 * 23?")
        finally:
            magics_mod.active_magics().new_session()
        sent = [r for r in api.requests if r.path.endswith("/v1/messages")]
    assert "x-api-key header is required" in error and sent
    assert not any(key in value or "pk9f3a" in value for r in sent for value in r.headers.values())
