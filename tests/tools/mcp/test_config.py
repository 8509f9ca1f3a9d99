"""MCP configuration: the mcpServers formats, .mcp.json discovery, clear errors, tool names."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from nbagent import Agent, SessionConfig
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import SimulatedAPI
from nbagent.tools.mcp.build import build_mcp_manager
from nbagent.tools.mcp.config import (
    DEFAULT_WAIT_TIMEOUT,
    HttpServer,
    McpConfigError,
    StdioServer,
    load_mcp_json,
    mcp_tool_name,
    parse_servers,
    resolve_servers,
)
from nbagent.tools.mcp.trust import trust_mcp_json


def test_both_shapes_parse_into_frozen_records() -> None:
    servers = parse_servers({
        "files": {"command": "python", "args": ["server.py", "--root", "."], "env": {"TOKEN": "x"}},
        "docs": {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer k"}},
        "typed": {"type": "http", "url": "https://example.invalid/mcp"},
        "off": {"command": "never", "disabled": True},
    }, "test")
    assert set(servers) == {"files", "docs", "typed"}
    files, docs = servers["files"], servers["docs"]
    assert isinstance(files, StdioServer) and files.args == ("server.py", "--root", ".")
    assert dict(files.env) == {"TOKEN": "x"} and "TOKEN" not in repr(files)
    assert isinstance(docs, HttpServer) and docs.url.endswith("/mcp")
    assert "Bearer" not in repr(docs) and docs.describe() == "http://127.0.0.1:8000/mcp"
    with pytest.raises(dataclasses.FrozenInstanceError):
        files.command = "other"  # type: ignore[misc]  # deliberately wrong: a server's settings are frozen


def test_the_wrapped_mcpServers_object_is_accepted_too() -> None:
    assert set(parse_servers({"mcpServers": {"a": {"command": "x"}}}, "test")) == {"a"}


@pytest.mark.parametrize("entry, field", [
    ({"args": ["x"]}, "'command'"),
    ({"command": ""}, "'command'"),
    ({"command": "python", "args": "server.py"}, "'args'"),
    ({"command": "python", "args": ["ok", 3]}, "'args[1]'"),
    ({"command": "python", "env": {"PORT": 8000}}, "'env.PORT'"),
    ({"command": "python", "url": "http://127.0.0.1/mcp"}, "not both"),
    ({"url": "ftp://host/mcp"}, "'url'"),
    ({"type": "sse", "url": "http://127.0.0.1/sse"}, "SSE transport is not supported"),
    ({"type": "websocket", "url": "ws://x"}, "'type'"),
    ({"command": "python", "args": ["${NBAGENT_TEST_SURELY_UNSET}"]}, "NBAGENT_TEST_SURELY_UNSET"),
    ("python server.py", "expected an object"),
])
def test_invalid_entries_name_the_server_and_the_field(entry: object, field: str) -> None:
    with pytest.raises(McpConfigError) as info:
        parse_servers({"broken": entry}, "Agent(mcp_servers=...)")
    message = str(info.value)
    assert "'broken'" in message and "Agent(mcp_servers=...)" in message
    assert field in message


def test_environment_variables_are_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NBAGENT_TEST_TOKEN", "s3cret")
    servers = parse_servers({
        "a": {"command": "x", "env": {"T": "${NBAGENT_TEST_TOKEN}"}, "args": ["${NBAGENT_TEST_MISSING:-dflt}"]},
        "b": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${NBAGENT_TEST_TOKEN}"}},
    }, "test")
    a, b = servers["a"], servers["b"]
    assert isinstance(a, StdioServer) and a.env["T"] == "s3cret" and a.args == ("dflt",)
    assert isinstance(b, HttpServer) and b.headers["Authorization"] == "Bearer s3cret"


def test_mcp_json_is_discovered_and_explicit_servers_win(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "shared": {"command": "from-file"}, "only_file": {"url": "http://127.0.0.1:9/mcp"},
    }}))
    servers = {s.name: s for s in resolve_servers({"shared": {"command": "explicit"}}, tmp_path)}
    assert set(servers) == {"shared", "only_file"}
    shared = servers["shared"]
    assert isinstance(shared, StdioServer) and shared.command == "explicit"
    assert servers["only_file"].source == str(tmp_path / ".mcp.json")
    assert resolve_servers(None, tmp_path, read_mcp_json=False) == ()


def test_a_broken_mcp_json_names_the_file_and_the_line(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {\n  "a": {"command": "x",}\n}}')
    with pytest.raises(McpConfigError, match=r"\.mcp\.json is not valid JSON: .* line 2"):
        load_mcp_json(tmp_path)
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"a": {"command": ["x"]}}}')
    with pytest.raises(McpConfigError, match=r"'a' \(in .*\.mcp\.json\): field 'command'"):
        load_mcp_json(tmp_path)


def test_agent_with_an_invalid_server_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(McpConfigError, match=r"MCP server 'web' .* field 'url'"):
        Agent(provider=simulated_provider(SimulatedAPI([])), tools=[], cwd=tmp_path,
              mcp_servers={"web": {"url": 8000}})


KEY = "sk-ant-api03-" + "k" * 95


@pytest.mark.parametrize("entry", [
    {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${ANTHROPIC_API_KEY}"}},
    {"url": "http://127.0.0.1:9/mcp?key=${ANTHROPIC_API_KEY}"},
    {"command": "python", "args": ["-c", "pass"], "env": {"K": "${ANTHROPIC_API_KEY}"}},
    {"command": "python", "args": ["--token", "${ANTHROPIC_API_KEY}"]},
])
def test_a_received_mcp_json_never_gets_the_key_into_a_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               entry: dict) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"docs": entry}}))
    trust_mcp_json(tmp_path)  # even a file the user trusts
    with pytest.raises(McpConfigError, match=r"'docs' \(in .*\.mcp\.json\): field .* configured secret") as caught:
        Agent(provider=simulated_provider(SimulatedAPI([])), tools=[], cwd=tmp_path)
    assert KEY not in str(caught.value)
    # Given in code, by the user, the same server is theirs to configure.
    agent = Agent(provider=simulated_provider(SimulatedAPI([])), tools=[], cwd=tmp_path / "elsewhere",
                  mcp_servers={"docs": entry}, start_mcp=False)
    assert agent.mcp is not None
    agent.close()


def test_no_servers_no_manager(tmp_path: Path) -> None:
    assert build_mcp_manager({}, tmp_path) is None
    agent = Agent(provider=simulated_provider(SimulatedAPI([])), tools=[], cwd=tmp_path)
    assert agent.mcp is None and agent.mcp_status() == []


def test_tool_names_fit_the_api() -> None:
    assert mcp_tool_name("demo", "add") == "mcp__demo__add"
    assert mcp_tool_name("my.server", "read file") == "mcp__my_server__read_file"
    long_a, long_b = mcp_tool_name("s", "x" * 80 + "a"), mcp_tool_name("s", "x" * 80 + "b")
    assert len(long_a) == 64 and len(long_b) == 64 and long_a != long_b


def test_servers_whose_tool_names_would_collide_are_refused(tmp_path: Path) -> None:
    with pytest.raises(McpConfigError, match="same names"):
        resolve_servers({"a.b": {"command": "x"}, "a_b": {"command": "y"}}, tmp_path, read_mcp_json=False)


def test_the_default_wait_is_ten_seconds() -> None:
    from nbagent.tools.mcp.manager import McpManager

    assert DEFAULT_WAIT_TIMEOUT == 10.0
    assert SessionConfig().tool_wait_s == 10.0
    assert McpManager([]).wait_timeout == 10.0


def test_servers_one_of_whose_names_extends_the_other_are_refused(tmp_path: Path) -> None:
    """Tool "b__c" of server "a" and tool "c" of server "a__b" are both mcp__a__b__c: a received
    .mcp.json's URL server "a" could take the name of a tool of yours (attacker pass 6, F4)."""
    assert mcp_tool_name("a", "b__c") == mcp_tool_name("a__b", "c")
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"a": {"url": "http://127.0.0.1:9/mcp"}}}))
    with pytest.raises(McpConfigError, match="could give their tools the same names"):
        resolve_servers({"a__b": {"command": "x"}}, tmp_path)
    assert len(resolve_servers({"ab": {"command": "x"}}, tmp_path)) == 2  # no name extends the other's


@pytest.mark.usefixtures("collections_keep_stack_left")
def test_a_received_mcp_json_is_read_within_bounds(tmp_path: Path) -> None:
    """Too large or too deeply nested: an McpConfigError naming the file, never gigabytes read whole
    nor a RecursionError out of the parser (attacker pass 6, F10)."""
    from nbagent.tools.mcp.config import MAX_MCP_JSON_BYTES, load_mcp_json

    path = tmp_path / ".mcp.json"
    path.write_text('{"mcpServers": {}, "pad": "' + "x" * MAX_MCP_JSON_BYTES + '"}')
    with pytest.raises(McpConfigError, match="larger than"):
        load_mcp_json(tmp_path)
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(McpConfigError, match="not valid JSON"):
        load_mcp_json(tmp_path)


def test_credentials_from_the_environment_are_told_apart_from_other_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the Agent redacts model-side (F10 of attack 7): headers, and what is named like a key."""
    for var, value in {"GH_TOKEN": "gh-token-value-123", "DOCS_KEY": "docs-key-value-456",
                       "AUTHZ": "header-value-789", "LIB_DIR": "/opt/libraries", "MODE": "fast-mode"}.items():
        monkeypatch.setenv(var, value)
    servers = parse_servers({
        "a": {"command": "python", "args": ["--token", "${GH_TOKEN}", "--lib", "${LIB_DIR}"],
              "env": {"MODE": "${MODE}", "PYTHONPATH": "${LIB_DIR}", "SERVICE_PASSWORD": "${MODE}"}},
        "b": {"url": "http://127.0.0.1:9/mcp?k=${DOCS_KEY}", "headers": {"X-Team": "${AUTHZ}"}},
    }, "test")
    assert set(servers["a"].credentials) == {"gh-token-value-123", "fast-mode"}  # MODE by its entry's name
    assert set(servers["b"].credentials) == {"docs-key-value-456", "header-value-789"}


def test_a_value_shaped_like_a_token_is_a_credential_whatever_its_variable_is_called(monkeypatch: pytest.MonkeyPatch) -> None:
    """``"X_SVC": "${MY_SVC}"`` holding a generated token: named like nothing, it was not redacted
    model-side, so a server echoing it handed it to the model. Paths, words and short values are not."""
    tokens = {"MY_SVC": "ghp_9fQ2xL7mN4pR8sT1vW6yZ3bC5dE0gH", "HEX": "3f786850e387550fdab836ed7e6dc881de23001b",
              "JWT": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"}
    # Review: a first shape (16+ characters with letters and digits) hid these from the model everywhere.
    ordinary = {"LIB_DIR": "/opt/libraries/v2024-11-05", "PATHS": "/opt/a1:/srv/b2/lib3", "REGION": "eu-west-1",
                "MODE": "production", "BUILD": "20241105", "URL": "http://localhost:8080/mcp",
                "HOST": "db01.prod.example.com", "MODEL": "claude-sonnet-4-5-20250929", "AT": "2024-11-05T10:00:00Z",
                "REL": "data/raw/export_2024", "VERSION": "v2024.11.05-build17", "WIN": "C:/Users/me/project1",
                "NAME": "MyService2024Production", "MODULE": "my_package.settings.prod2"}
    for var, value in {**tokens, **ordinary}.items():
        monkeypatch.setenv(var, value)
    env = {f"X_{v}": f"${{{v}}}" for v in {**tokens, **ordinary}}
    servers = parse_servers({"a": {"command": "python", "env": env}}, "test")
    assert set(servers["a"].credentials) == set(tokens.values())
