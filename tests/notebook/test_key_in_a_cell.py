"""Issue 33: ``os.environ["ANTHROPIC_API_KEY"] = "sk-ant-…"`` in a cell, then ``%%agent``: the key is
not in what the model is sent (recent cell inputs, outputs, variables), nor in the history or the
task folder. An in-process shell with the offline simulated API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod
from tests.notebook.no_session import forget_session, shell_without_session

KEY = "sk-ant-api03-" + "Kx9" * 30


@pytest.fixture
def ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.chdir(tmp_path)
    # setenv first, so that the teardown removes the key the test's cell sets in this process's
    # environment (a leaked key would send every later kernel of the run to the real API).
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with shell_without_session() as (shell, magics):
        magics.allow = ["python"]  # the model's look at `key` runs (its output is redacted too)
        try:
            yield shell
        finally:
            magics.allow = []


def test_a_key_set_in_a_cell_is_not_sent_nor_saved(ip: Any, tmp_path: Path) -> None:
    with capture_output():
        for cell in ["import os", f'os.environ["ANTHROPIC_API_KEY"] = "{KEY}"', "key = os.environ['ANTHROPIC_API_KEY']",
                     "key", "%%agent --simulated\nwhat is in `key`?"]:
            result = ip.run_cell(cell, store_history=True)
            assert result.error_in_exec is None
    session = magics_mod.active_magics().current
    assert session is not None
    agent = session.agent
    sent = "\n".join(json.dumps(r.body) for r in agent.simulated_api.requests)
    assert "kernel-state" in sent and "[redacted]" in sent and KEY not in sent
    assert KEY not in json.dumps(list(agent.history))
    task_dir = agent.session.task_dir
    assert task_dir is not None
    saved = "".join(p.read_text(errors="replace") for p in Path(task_dir).rglob("*") if p.is_file())
    assert "api_conversation_history" in " ".join(p.name for p in Path(task_dir).iterdir())
    assert KEY not in saved


def test_a_token_known_only_by_its_value_is_not_given_away_cut_short(ip: Any, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # No key shape: only its value (a gateway's token in secret_env) tells it; a DataFrame's levels
    # are shown cut to 38 characters + "…", and the cut start must not reach the model either.
    token = "Zq7abcdefghijkLMNOPQRSTUVWxyz0123456789A"
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", token)
    with capture_output():
        for cell in ["import os, pandas as pd",
                     "accounts = pd.DataFrame({'user': ['ann', 'bob'], 'token': [os.environ['ANTHROPIC_AUTH_TOKEN']] * 2})",
                     "%%agent --simulated\nWhat columns does `accounts` have?"]:
            assert ip.run_cell(cell, store_history=True).error_in_exec is None
        context = ip.run_cell("%agent context", store_history=True)
    session = magics_mod.active_magics().current
    assert session is not None
    agent = session.agent
    task_dir = agent.session.task_dir
    assert task_dir is not None
    sent = "\n".join(json.dumps(r.body) for r in agent.simulated_api.requests)
    saved = "".join(p.read_text(errors="replace") for p in Path(task_dir).rglob("*") if p.is_file())
    assert "token: str" in sent and "[redacted]" in sent
    for text in (sent, saved, str(context.result)):
        assert token[:12] not in text


def test_a_key_typed_into_an_agent_cell_is_not_saved_in_the_record_and_the_cell_still_replays(
        ip: Any, tmp_path: Path) -> None:
    cell = f"%%agent --simulated\nThe key {KEY} was pasted here by mistake. What is 2 + 2?"
    with capture_output():
        assert ip.run_cell(cell, store_history=True).error_in_exec is None
    magics = magics_mod.active_magics()
    assert magics.current is not None
    forget_session(magics)  # a fresh kernel for the same notebook
    saved = "".join(p.read_text(errors="replace") for p in (tmp_path / ".nbagent").rglob("*") if p.is_file())
    assert "[redacted] was pasted here" in saved and KEY not in saved

    with capture_output() as again:
        assert ip.run_cell(cell, store_history=True).error_in_exec is None

    assert "replayed: session" in again.stdout + "".join(str(o.data) for o in again.outputs)
    assert magics.current is None  # nothing was asked


CREDENTIALS = {"GITHUB_TOKEN": "ghp_" + "Gh7" * 12, "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "Aw5" * 4,
               "JUPYTER_TOKEN": "9f8e7d6c5b4a3928" * 3}


def test_a_credential_named_variable_of_the_environment_a_cell_shows_is_not_sent(
        ip: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shell tool never gets them; nor does the model, when a cell copies or prints the environment."""
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PLAIN_SETTING", "a-plain-value-1234")  # not a credential's name: kept
    with capture_output():
        for cell in ["import os", "env = dict(os.environ)", "gh = os.environ['GITHUB_TOKEN']",
                     "print({k: v for k, v in os.environ.items() if k.endswith(('KEY', 'TOKEN'))})",
                     "%%agent --simulated\nwhy do `env` and `gh` not work? see the output above"]:
            assert ip.run_cell(cell, store_history=True).error_in_exec is None
    session = magics_mod.active_magics().current
    assert session is not None
    sent = "\n".join(json.dumps(r.body) for r in session.agent.simulated_api.requests)
    assert "kernel-state" in sent and "a-plain-value-1234" in sent
    for value in CREDENTIALS.values():
        assert json.dumps(value)[1:-1] not in sent and value[:12] not in sent


PASSWORD, NESTED = "Tr0ub4dor&3-" + "pw9" * 4, "xoxb-" + "4s1" * 10


def test_a_credential_named_variable_of_the_notebook_is_not_sent(ip: Any, tmp_path: Path) -> None:
    """Not only the environment's: ``db_password = "…"`` typed in a cell, a config dict's token, in the
    cell's input, its output, the variables' descriptions and the model's own look at them."""
    with capture_output():
        for cell in [f'db_password = "{PASSWORD}"', f'settings = {{"slack": {{"bot_token": "{NESTED}"}}}}',
                     "token = 'the cat sat'", "print(db_password, settings)",
                     "%%agent --simulated\nwhy can I not connect with db_password and settings?"]:
            assert ip.run_cell(cell, store_history=True).error_in_exec is None
    session = magics_mod.active_magics().current
    assert session is not None
    sent = "\n".join(json.dumps(r.body) for r in session.agent.simulated_api.requests)
    assert "kernel-state" in sent and "db_password" in sent and "[redacted]" in sent
    assert "the cat sat" in sent  # text with spaces in it is not taken for a credential
    for value in (PASSWORD, NESTED):
        assert json.dumps(value)[1:-1] not in sent and value[:10] not in sent


def test_a_password_typed_in_a_call_and_a_token_in_a_headers_literal_are_not_sent(ip: Any) -> None:
    """``connect(password="…")`` and ``headers={"Authorization": "token ghp_…"}`` keep no variable holding
    the secret: the cell's text, sent as a recent cell, carried both to the model (attacker pass 13)."""
    password, github = "S3cret-Pg-pw!", "ghp_Zk3LqW9xT2mP7rV4bN8cY1hJ6dF0sA5gE"
    with capture_output():
        for cell in ["def connect(**kw): return object()",
                     f'conn = connect(host="db", user="ana", password="{password}")',
                     f'headers_used = len({{"Authorization": "token {github}"}})',
                     "%%agent --simulated\nwhy does `conn` fail?"]:
            assert ip.run_cell(cell, store_history=True).error_in_exec is None
    session = magics_mod.active_magics().current
    assert session is not None
    sent = "\n".join(json.dumps(r.body) for r in session.agent.simulated_api.requests)
    assert "connect(host=" in sent and "[redacted]" in sent
    assert password not in sent and github not in sent
