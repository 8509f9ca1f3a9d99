"""The MCP manager: configured secrets never show in status, notices or the task folder; the number
of MCP tools offered is capped with a notice; ``Agent.close()`` then exit leaves no server running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nbagent.providers.simulated import SimulatedAPI, text_reply

from .test_agent import SERVERS, alive, make_agent, offered_tools, wait_dead, warnings

HOSTILE = str(SERVERS / "hostile_server.py")
KEY = "sk-ant-test-0123456789abcdef"


async def test_a_secret_expanded_into_mcp_config_is_redacted_everywhere(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # Given in code (a project's .mcp.json may not carry a secret at all: test_config.py).
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    servers = {"missing": {"command": "${ANTHROPIC_API_KEY}"},
               "up": {"command": sys.executable, "args": [HOSTILE, "ok", "--key=${ANTHROPIC_API_KEY}"]}}
    api = SimulatedAPI([text_reply("hi")])
    agent = make_agent(api, tmp_path, task_dir=tmp_path / "task", mcp_servers=servers)
    try:
        events = [e async for e in agent.run("hello")]
        status = "\n".join(agent.mcp_status())
    finally:
        await agent.aclose()
    assert "could not be started: command not found: [redacted]" in "\n".join(warnings(events))
    assert "--key=${ANTHROPIC_API_KEY}" in status and KEY not in status  # the command line as written
    assert all(KEY not in str(e) for e in events)
    assert all(KEY not in p.read_text(errors="replace") for p in (tmp_path / "task").iterdir() if p.is_file())


async def test_a_token_a_server_gets_from_the_environment_is_never_shown(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``${VAR}`` keeps a token out of the file; status lines and warnings showed it again: the
    expanded command line and URL, and a server's stderr echoing its argument (any variable, not
    only a configured secret: GH_TOKEN is none)."""
    token, key = "ghp_TOKENFROMTHEENVIRONMENT12345", "docs-key-FROM-THE-ENV-0987"
    monkeypatch.setenv("GH_TOKEN", token)
    monkeypatch.setenv("DOCS_KEY", key)
    echo = "import sys; sys.stderr.write('bad token ' + sys.argv[1] + chr(10)); sys.exit(3)"
    servers = {"gh": {"command": sys.executable, "args": ["-c", echo, "${GH_TOKEN}"]},
               "docs": {"url": "http://127.0.0.1:9/mcp?key=${DOCS_KEY}"}}
    api = SimulatedAPI([text_reply("hi")])
    agent = make_agent(api, tmp_path, mcp_servers=servers)
    try:
        events = [e async for e in agent.run("hello")]
        status = "\n".join(agent.mcp_status())
    finally:
        await agent.aclose()
    shown = status + "\n".join(warnings(events))
    assert token not in shown and key not in shown
    assert "${GH_TOKEN}" in status and "mcp?key=${DOCS_KEY}" in status
    assert "bad token [redacted]" in shown  # the server's stderr, as the warning quotes it


async def test_a_servers_token_echoed_in_a_tool_result_never_reaches_the_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A token given to a server by ``${VAR}`` (in ``env`` named like one, or any header) is the
    user's credential: a server answering "invalid token <it>" handed it to the model, its
    history and the task folder. A ``${VAR}`` that is no credential (a path) is not redacted."""
    from nbagent.engine.contracts.permissions import Allow
    from nbagent.providers.simulated import tool_reply

    token, home = "files-token-FROM-THE-ENV-1234567", str(tmp_path / "lib")
    monkeypatch.setenv("FILES_TOKEN", token)
    monkeypatch.setenv("LIB_DIR", home)
    servers = {"h": {"command": sys.executable, "args": [HOSTILE, "echoenv", "API_TOKEN"],
                     "env": {"API_TOKEN": "${FILES_TOKEN}", "PYTHONPATH": "${LIB_DIR}"}}}
    api = SimulatedAPI([tool_reply("mcp__h__echo", {"s": "x"}), text_reply(f"done in {home}")])

    async def allow(*_: object) -> Allow:
        return Allow()

    agent = make_agent(api, tmp_path, task_dir=tmp_path / "task", mcp_servers=servers, can_use_tool=allow)
    try:
        events = [e async for e in agent.run("call it")]
    finally:
        await agent.aclose()
    assert len(api.requests) == 2 and "invalid token [redacted]" in json.dumps(api.requests[1].body)
    assert all(token not in json.dumps(r.body) for r in api.requests)
    assert all(token not in str(e) for e in events)
    assert all(token not in p.read_text(errors="replace") for p in (tmp_path / "task").iterdir() if p.is_file())
    assert any(home in str(e) for e in events)  # a path is not a secret: the answer naming it is shown


async def test_a_servers_token_in_its_tool_description_or_schema_never_reaches_the_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool definitions are part of every request (and of sent_requests.json): a server whose
    description or schema names its token, or the user's key, sent it with each request."""
    token = "files-token-FROM-THE-ENV-7654321"
    monkeypatch.setenv("FILES_TOKEN", token)
    servers = {"h": {"command": sys.executable, "args": [HOSTILE, "describeenv", "API_TOKEN"],
                     "env": {"API_TOKEN": "${FILES_TOKEN}"}}}
    api = SimulatedAPI([text_reply("hi")])
    agent = make_agent(api, tmp_path, task_dir=tmp_path / "task", mcp_servers=servers, tool_wait_s=60.0)
    try:
        [e async for e in agent.run("hello")]
    finally:
        await agent.aclose()
    offered = [t for t in offered_tools(api.requests[0]) if t["name"] == "mcp__h__echo"]
    assert offered and "with token [redacted]" in json.dumps(offered)  # the tool is offered, redacted
    assert all(token not in json.dumps(r.body) for r in api.requests)
    assert all(token not in p.read_text(errors="replace") for p in (tmp_path / "task").iterdir() if p.is_file())


async def test_thousands_of_mcp_tools_are_capped_with_a_notice(tmp_path: Path) -> None:
    api = SimulatedAPI([text_reply("hi")])
    # 5,000 tools take seconds to list and check on a loaded machine: wait for them (a hang breaker,
    # not a speed bound), else the first request goes out before the server is connected.
    agent = make_agent(api, tmp_path, tool_wait_s=120.0,
                       mcp_servers={"many": {"command": sys.executable, "args": [HOSTILE, "many", "5000"]}})
    try:
        events = [e async for e in agent.run("hello")]
    finally:
        await agent.aclose()
    assert len(offered_tools(api.requests[0])) == 200
    assert any("MCP servers offer 5,000 tools; only the first 200" in w for w in warnings(events))


def test_close_then_exit_stops_the_server(tmp_path: Path) -> None:
    pidfile = tmp_path / "server.pid"
    script = textwrap.dedent(f"""
        import asyncio, sys
        from nbagent import Agent
        from nbagent.providers.anthropic import simulated_provider
        from nbagent.providers.simulated import SimulatedAPI, text_reply
        agent = Agent(provider=simulated_provider(SimulatedAPI([text_reply("hi")])), tools=[], cwd={str(tmp_path)!r},
                      mcp_servers={{"s": {{"command": sys.executable, "args": [{HOSTILE!r}, "pid", {str(pidfile)!r}]}}}})
        agent.run_sync("hello")
        assert agent.mcp.state("s") == "connected"
        agent.close()
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[3], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    pid = int(pidfile.read_text())
    try:
        assert wait_dead(pid), "the MCP server outlived the process"
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)  # the server this test started


async def test_a_failed_servers_log_line_is_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    """The "nbagent.mcp" logger got the error before redaction: a notebook that logs at INFO
    (``logging.basicConfig(level=logging.INFO)``) printed the key into the cell's output (attacker pass 6, F8)."""
    import logging

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    caplog.set_level(logging.INFO, logger="nbagent.mcp")
    agent = make_agent(SimulatedAPI([text_reply("hi")]), tmp_path, mcp_servers={"missing": {"command": "${ANTHROPIC_API_KEY}"}})
    try:
        events = [e async for e in agent.run("hello")]
    finally:
        await agent.aclose()
    assert "command not found: [redacted]" in "\n".join(warnings(events))
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "missing" in logged and KEY not in logged
