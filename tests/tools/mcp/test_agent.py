"""MCP servers through the real loop: a scripted simulated model calls a real MCP server's tools.

The servers are small scripts under ``servers/`` (the mcp SDK's MCPServer over stdio or
streamable HTTP on 127.0.0.1), started with ``sys.executable``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from nbagent import Agent
from nbagent.engine.contracts.config import SessionConfig
from nbagent.engine.contracts.events import Done, Notice, PermissionAsked, ToolResult
from nbagent.engine.contracts.json_types import JSONObject
from nbagent.engine.contracts.permissions import Allow, Deny, PermissionRequest
from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.engine.loop.query import QueryEngine
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import RecordedRequest, Reply, SimulatedAPI, text_reply, tool_reply
from nbagent.tools.mcp.build import build_mcp_manager
from nbagent.tools.mcp.trust import is_trusted, trust_file, trust_mcp_json

SERVERS = Path(__file__).parent / "servers"
DEMO = str(SERVERS / "demo_server.py")
SILENT = str(SERVERS / "silent_server.py")
WAIT = 8.0  # generous for a loaded CI machine; the bounded-wait tests use 1 s


def demo_entry() -> dict[str, Any]:
    return {"command": sys.executable, "args": [DEMO]}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def wait_dead(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def offered_tools(request: RecordedRequest) -> list[JSONObject]:
    """The tool definitions a recorded request offered (the body is the client's JSON: narrowed)."""
    tools = request.body.get("tools", [])
    assert isinstance(tools, list)
    assert all(isinstance(t, dict) for t in tools)
    return [t for t in tools if isinstance(t, dict)]


def make_agent(api: SimulatedAPI, tmp_path: Path, **kw: Any) -> Agent:
    kw.setdefault("tool_wait_s", WAIT)
    return Agent(provider=simulated_provider(api), tools=[], cwd=tmp_path, **kw)


def results(events: list[Any]) -> list[ToolResult]:
    return [e for e in events if isinstance(e, ToolResult)]


def warnings(events: list[Any]) -> list[str]:
    return [e.message for e in events if isinstance(e, Notice) and e.level == "warning"]


def test_an_untrusted_mcp_json_starts_nothing_and_the_first_prompt_says_so(tmp_path: Path) -> None:
    ran = tmp_path / "server-ran"
    server = {"command": sys.executable, "args": ["-c", f"open({str(ran)!r}, 'w')"]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"planted": server}}))

    agent = make_agent(SimulatedAPI([text_reply("ok")]), tmp_path)
    events = agent.run_sync("hello").events

    assert agent.mcp is None and not ran.exists()
    assert any("none was started" in w and "%agent mcp trust" in w for w in warnings(events))
    assert not is_trusted(tmp_path)
    trust_mcp_json(tmp_path)
    assert is_trusted(tmp_path)
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"planted": server, "more": server}}))
    assert not is_trusted(tmp_path)  # changed since it was trusted: asks again
    agent.close()


def test_a_received_mcp_json_linked_to_a_trusted_one_is_not_trusted(tmp_path: Path) -> None:
    project, received = tmp_path / "project", tmp_path / "received"
    project.mkdir()
    received.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"local": {"command": "python",
                                                                              "args": ["server.py"]}}}))
    trust_mcp_json(project)
    (received / ".mcp.json").symlink_to(project / ".mcp.json")  # would run received/server.py
    assert is_trusted(project) and not is_trusted(received)


def test_a_trust_entry_not_signed_with_the_users_key_trusts_nothing(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {}}))
    trust_mcp_json(tmp_path)
    store = json.loads(trust_file().read_text())
    for entry in store.values():
        entry["signature"] = "0" * 64  # planted by someone else (or the model's file tools)
    trust_file().write_text(json.dumps(store))
    assert not is_trusted(tmp_path)


async def test_stdio_server_from_mcp_json_with_permission_prompts(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": demo_entry()}}))
    trust_mcp_json(tmp_path)  # the user read the file and trusts it
    asked: list[tuple[str, dict[str, Any]]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], request: PermissionRequest) -> Allow | Deny:
        asked.append((name, tool_input))
        return Allow() if tool_input["text"] == "yes" else Deny("not this one")

    note, refused = tmp_path / "note.txt", tmp_path / "refused.txt"
    api = SimulatedAPI([
        tool_reply("mcp__demo__add", {"a": 2, "b": 3}),  # read-only: runs without asking
        tool_reply("mcp__demo__write_note", {"path": str(note), "text": "yes"}),
        tool_reply("mcp__demo__write_note", {"path": str(refused), "text": "no"}),
        tool_reply("mcp__demo__add", {"a": "two", "b": 3}),  # invalid: checked before asking
        text_reply("done"),
    ])
    agent = make_agent(api, tmp_path, can_use_tool=can_use_tool)
    assert agent.mcp is not None
    try:
        events = [e async for e in agent.run("use the demo server")]
        status = agent.mcp_status()
    finally:
        await agent.aclose()

    got = results(events)
    assert [(r.name, r.is_error) for r in got] == [
        ("mcp__demo__add", False), ("mcp__demo__write_note", False),
        ("mcp__demo__write_note", True), ("mcp__demo__add", True)]
    assert got[0].content == "5"
    assert "denied" in got[2].content and "not this one" in got[2].content
    assert "a: 'two' is not of type 'integer'" in got[3].content
    assert asked == [("mcp__demo__write_note", {"path": str(note), "text": "yes"}),
                     ("mcp__demo__write_note", {"path": str(refused), "text": "no"})]
    assert [e.name for e in events if isinstance(e, PermissionAsked)] == ["mcp__demo__write_note"] * 2
    assert note.read_text() == "yes" and not refused.exists()
    assert isinstance(events[-1], Done) and events[-1].reason == "end_turn"
    assert not warnings(events)

    # The first request already offered the server's tools, with the server's own JSON schemas.
    offered = {t["name"]: t for t in offered_tools(api.requests[0])}
    assert {"mcp__demo__add", "mcp__demo__write_note", "mcp__demo__pid"} <= set(offered)
    add_schema = offered["mcp__demo__add"]["input_schema"]
    assert isinstance(add_schema, dict) and add_schema["required"] == ["a", "b"]
    # The results went back to the model in history.
    answers = [b for m in agent.history if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b["type"] == "tool_result"]
    assert answers[0]["content"] == "5" and not answers[0].get("is_error")
    assert answers[2]["is_error"] is True
    assert status[0].startswith("demo (stdio: ") and "connected, 5 tools" in status[0]
    assert "closed" in agent.mcp_status()[0]


async def test_a_server_that_never_answers_delays_the_first_request_by_the_bound_only(tmp_path: Path) -> None:
    pidfile = tmp_path / "silent.pid"
    api = SimulatedAPI([text_reply("first"), text_reply("second")])
    agent = make_agent(api, tmp_path, tool_wait_s=1.0, mcp_servers={
        "silent": {"command": sys.executable, "args": [SILENT, str(pidfile)]},
        "missing": {"command": str(tmp_path / "no-such-program")},
    })
    try:
        started = time.perf_counter()
        first = [e async for e in agent.run("hello")]
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        second = [e async for e in agent.run("again")]
        second_s = time.perf_counter() - started
        assert agent.mcp is not None and agent.mcp.state("silent") == "connecting"
    finally:
        await agent.aclose()

    assert 0.9 <= first_s < 3.0, first_s
    assert second_s < 0.8, second_s  # each connection is waited for once
    assert warnings(first) == [
        "MCP server silent is still connecting after 1 s; this request goes without its tools",
        f"MCP server missing could not be started: command not found: {tmp_path / 'no-such-program'}",
    ]
    assert warnings(second) == []
    assert [e.reason for e in first + second if isinstance(e, Done)] == ["end_turn", "end_turn"]
    assert "tools" not in api.requests[0].body or not api.requests[0].body["tools"]
    assert wait_dead(int(pidfile.read_text())), "the silent server outlived the session"


async def test_a_server_killed_mid_session_gives_an_error_result_and_one_warning(tmp_path: Path) -> None:
    async def model(request: dict[str, Any]) -> Reply:
        n = len(api.requests)
        if n == 1:
            return tool_reply("mcp__demo__pid", {})
        if n == 2:  # the tool said its pid: kill the server before the model's next call
            pid = int(request["messages"][-1]["content"][0]["content"])
            os.kill(pid, signal.SIGKILL)
            for _ in range(100):
                if agent.mcp is not None and agent.mcp.state("demo") == "stopped":
                    break
                await asyncio.sleep(0.05)
            return tool_reply("mcp__demo__add", {"a": 1, "b": 1})
        return text_reply("noted")

    api = SimulatedAPI(model)
    agent = make_agent(api, tmp_path, mcp_servers={"demo": demo_entry()}, allow=["mcp__demo__add"])
    try:
        events = [e async for e in agent.run("who are you")]
        later = [e async for e in agent.run("and now?")]
    finally:
        await agent.aclose()

    got = results(events)
    assert [r.is_error for r in got] == [False, True]
    assert "MCP server 'demo'" in got[1].content and "stopped" in got[1].content
    assert warnings(events) + warnings(later) == [
        "MCP server demo stopped; its tools are removed: its process exited"]
    assert isinstance(events[-1], Done) and events[-1].reason == "end_turn"
    assert not any(str(t["name"]).startswith("mcp__") for t in offered_tools(api.requests[-1]))


async def test_abort_stops_a_running_mcp_tool_and_the_server_stays_usable(tmp_path: Path) -> None:
    api = SimulatedAPI([tool_reply("mcp__demo__sleep", {"seconds": 30}),
                        tool_reply("mcp__demo__add", {"a": 4, "b": 4}), text_reply("8")])
    agent = make_agent(api, tmp_path, mcp_servers={"demo": demo_entry()})
    try:
        events: list[Any] = []
        started = 0.0
        async for e in agent.run("sleep"):
            events.append(e)
            if e.kind == "tool_use":
                started = time.perf_counter()
                asyncio.get_running_loop().call_later(0.3, agent.abort)
        stopped_s = time.perf_counter() - started
        again = [e async for e in agent.run("add")]
    finally:
        await agent.aclose()
    assert isinstance(events[-1], Done) and events[-1].reason == "aborted"
    assert stopped_s < 10, stopped_s  # not the 30 s the tool sleeps (1.5 s left a loaded CI machine little room)
    assert results(again)[0].content == "8"


def test_a_script_without_a_loop_keeps_one_server_across_asyncio_runs(tmp_path: Path) -> None:
    api = SimulatedAPI([tool_reply("mcp__demo__pid", {}), text_reply("a")])
    agent = make_agent(api, tmp_path, mcp_servers={"demo": demo_entry()})  # built with no loop running
    assert agent.mcp is not None
    try:
        first = results(agent.run_sync("pid?"))  # asyncio.run inside

        async def call_again() -> str:  # another asyncio.run: a new loop, the same server
            assert agent.mcp is not None and await agent.mcp.ready() == []
            tool = {t.name: t for t in agent.mcp.tools()}["mcp__demo__pid"]
            out = await tool.run({}, ToolContext(cwd=tmp_path))
            return str(out.content)

        second = asyncio.run(call_again())
    finally:
        agent.mcp.close()
    assert not first[0].is_error and first[0].content == second
    assert wait_dead(int(second)), "the server outlived close()"
    assert "closed" in agent.mcp_status()[0]


def test_two_run_sync_calls_with_mcp_servers(tmp_path: Path) -> None:
    api = SimulatedAPI([text_reply("a"), text_reply("b")])
    agent = make_agent(api, tmp_path, mcp_servers={"demo": demo_entry()})
    try:
        reasons = [agent.run_sync(p)[-1].reason for p in ("one", "two")]  # type: ignore[union-attr]
    finally:
        assert agent.mcp is not None
        agent.mcp.close()
    assert reasons == ["end_turn", "end_turn"]


async def test_a_manager_is_the_engines_tool_source_and_it_waits_for_it(tmp_path: Path) -> None:
    api = SimulatedAPI([text_reply("hello"), tool_reply("mcp__demo__add", {"a": 1, "b": 2}), text_reply("3")])
    config = SessionConfig(cwd=tmp_path, tool_wait_s=WAIT)
    manager = build_mcp_manager({"demo": demo_entry()}, config.cwd, wait_timeout=WAIT, read_mcp_json=False)
    assert manager is not None
    # The manager as the engine's tool source, wired by hand (what Agent does).
    engine = QueryEngine(config, provider=simulated_provider(api), tool_sources=[manager])
    try:
        [e async for e in engine.submit_message("hi")]  # the engine waits; the server connects
        events = [e async for e in engine.submit_message("add")]
    finally:
        await manager.aclose()
    assert results(events)[0].content == "3"
    assert "mcp__demo__add" in [t["name"] for t in offered_tools(api.requests[1])]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_http_server(attempts: int = 5) -> tuple[int, subprocess.Popen[bytes]]:
    """The demo server on a free port. A port found free can be taken by another worker before the
    server binds it: the server then exits, and we start it again on another port."""
    for _ in range(attempts):
        port = _free_port()
        proc = subprocess.Popen([sys.executable, DEMO, "http", str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return port, proc
            except OSError:
                if time.monotonic() > deadline:
                    proc.kill()
                    proc.wait()
                    raise RuntimeError("the HTTP MCP server did not start") from None
                time.sleep(0.05)  # polling a starting process, not synchronising with a test's own work
    raise RuntimeError(f"the HTTP MCP server did not start in {attempts} attempts")


@pytest.fixture
def http_server() -> Any:
    port, proc = _start_http_server()
    try:
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        proc.kill()
        proc.wait()


async def test_streamable_http_server_on_loopback(tmp_path: Path, http_server: Any) -> None:
    url, proc = http_server
    api = SimulatedAPI([tool_reply("mcp__web__add", {"a": 20, "b": 22}), text_reply("42"),
                        tool_reply("mcp__web__add", {"a": 1, "b": 1}), text_reply("gone")])
    agent = make_agent(api, tmp_path, mcp_servers={"web": {"type": "http", "url": url}})
    try:
        events = [e async for e in agent.run("add")]
        assert agent.mcp_status()[0].startswith(f"web (http: {url}) connected")
        proc.kill()
        proc.wait()
        after = [e async for e in agent.run("add again")]
    finally:
        await agent.aclose()
    assert results(events)[0].content == "42" and not results(events)[0].is_error
    assert results(after)[0].is_error
    assert any("MCP server web stopped" in w for w in warnings(after))
