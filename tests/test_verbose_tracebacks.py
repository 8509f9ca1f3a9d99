"""A configuration error's traceback in ``%xmode Verbose`` holds no secret.

Verbose tracebacks print every frame's arguments and the locals of the line that failed, with
``repr``, into the cell's output (saved with the notebook). A typo in ``Agent(mcp_servers=...)``
or in an endpoint profile printed the API key read from the environment, or the profile's token.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Callable

import pytest
from IPython.core.ultratb import VerboseTB

from nbagent import Agent
from nbagent.tools.mcp import trust_mcp_json

KEY = "sk-ant-api03-" + "K" * 90
TOKEN = "gw-token-" + "T" * 30
LITERAL = "literal-token-" + "L" * 30
HEADER = "header-value-" + "H" * 30


def verbose_traceback(call: Callable[[], object]) -> str:
    """What IPython prints for the exception ``call`` raises, in ``%xmode Verbose``."""
    try:
        call()
    except Exception:
        etype, value, tb = sys.exc_info()
        assert etype is not None and value is not None
        return "\n".join(VerboseTB(theme_name="nocolor").structured_traceback(etype, value, tb))
    raise AssertionError("the call did not fail")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home, folder = tmp_path / "home", tmp_path / "project"
    (home / ".nbagent").mkdir(parents=True)
    folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("GW_TOKEN", TOKEN)
    monkeypatch.chdir(folder)
    (home / ".nbagent" / "endpoints.json").write_text(json.dumps({"endpoints": {
        "from_env": {"base_url": "http://127.0.0.1:9", "auth_token_env": "GW_TOKEN", "timeout_s": 0},
        "literal": {"base_url": "localhost:4000", "auth_token": LITERAL, "headers": {"X-Team": HEADER}},
        "not_a_number": {"base_url": "http://127.0.0.1:9", "api_key": LITERAL, "timeout_s": "soon"},
    }}))
    return folder


def assert_no_secret(text: str) -> None:
    for secret in (KEY, TOKEN, LITERAL, HEADER):
        assert secret[:20] not in text, f"{secret[:12]}… in the traceback"


@pytest.mark.parametrize("profile", ["from_env", "literal", "not_a_number"])
def test_a_typo_in_an_endpoint_profile_prints_no_token(project: Path, profile: str) -> None:
    text = verbose_traceback(lambda: Agent(endpoint=profile, read_mcp_json=False))
    assert "Error" in text  # the error itself is there, and every frame's arguments
    assert_no_secret(text)


def test_a_typo_in_mcp_servers_prints_no_key(project: Path) -> None:
    text = verbose_traceback(lambda: Agent(mcp_servers={"docs": {"url": "localhost:8000"}}, read_mcp_json=False))
    assert "McpConfigError" in text and "secret values" in text
    assert_no_secret(text)


def test_the_api_key_given_in_code_is_not_in_the_agents_frame(project: Path) -> None:
    def key_from_a_vault() -> str:  # (the caller's own line would show os.environ's repr)
        return KEY

    text = verbose_traceback(lambda: Agent(api_key=key_from_a_vault(), read_mcp_json=False,
                                           mcp_servers={"docs": {"command": "srv", "cwd": 3}}))
    assert "McpConfigError" in text
    assert_no_secret(text)


def test_a_trusted_mcp_json_refused_for_carrying_a_token_prints_no_token(project: Path) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": {"command": "echo", "args": ["${GW_TOKEN}"]}}}))
    trust_mcp_json(project)
    text = verbose_traceback(lambda: Agent(endpoint=None, secret_env=("ANTHROPIC_API_KEY", "GW_TOKEN")))
    assert "would carry a configured secret" in text
    assert_no_secret(text)


def test_the_objects_that_carry_secrets_show_none_in_their_repr() -> None:
    from nbagent.engine.loop.sanitize import Sanitizer, secret_values
    from nbagent.providers.endpoints import ProfileRow
    from nbagent.tools.mcp.config import HttpServer, StdioServer

    sanitizer = Sanitizer(secret_values((), (KEY,)))
    shown = [secret_values((), (KEY, TOKEN)), sanitizer, sanitizer.redact, sanitizer.forms,
             Sanitizer((KEY,)), ProfileRow({"auth_token": LITERAL, "api_key": LITERAL, "headers": {"X-Team": HEADER}}),
             StdioServer("s", command=TOKEN, args=("--token", TOKEN), written="srv --token ${GW_TOKEN}"),
             HttpServer("h", url=f"http://127.0.0.1:9/mcp?key={TOKEN}", written="http://127.0.0.1:9/mcp?key=${GW_TOKEN}")]
    assert_no_secret(repr(shown))
    assert "ProfileRow({'auth_token': '…', 'api_key': '…', 'headers': {'X-Team': '…'}})" in repr(shown)


def test_a_key_given_to_an_agent_that_fails_at_once_is_not_in_its_arguments(project: Path) -> None:
    def key_from_a_vault() -> str:
        return KEY

    text = verbose_traceback(lambda: Agent(api_key=key_from_a_vault(), endpoint="not_a_number", read_mcp_json=False))
    assert "api_key=<secret>" in text  # the argument is there, as what it is
    assert_no_secret(text)


def test_a_key_given_to_resume_is_not_in_its_keyword_arguments(project: Path, tmp_path: Path) -> None:
    folder = tmp_path / "task"
    agent = Agent(task_dir=folder, read_mcp_json=False, provider="simulated")

    async def one_turn() -> None:
        async for _ in agent.run("what is 6 * 7?"):
            pass

    asyncio.run(one_turn())
    agent.close()

    def key_from_a_vault() -> str:
        return KEY

    text = verbose_traceback(lambda: Agent.resume(folder, api_key=key_from_a_vault(), read_mcp_json=False,
                                                  mcp_servers={"docs": {"command": "srv", "cwd": 3}}))
    assert "McpConfigError" in text and "'api_key': <secret>" in text
    assert_no_secret(text)


def test_the_hidden_key_is_the_plain_value_where_it_is_sent() -> None:
    from nbagent.engine.loop.sanitize import hidden

    secret = hidden(KEY)
    assert repr(secret) == "<secret>" and repr({"api_key": secret}) == "{'api_key': <secret>}"
    assert str(secret) == KEY and type(str(secret)) is str and hidden(None) is None
