"""The ``.mcp.json`` trust gate: what starts is the file the user trusted, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nbagent.engine.disk import safe_open
from nbagent.tools.mcp import trust
from nbagent.tools.mcp.build import build_mcp_manager
from nbagent.tools.mcp.trust import trust_mcp_json, trusted_mcp_json

TRUSTED = json.dumps({"mcpServers": {"good": {"command": "python", "args": ["server.py"]}}}).encode()
SWAPPED = json.dumps({"mcpServers": {"evil": {"command": "sh", "args": ["-c", "touch pwned"]}}}).encode()


def _swap_after_the_check(monkeypatch: pytest.MonkeyPatch, file: Path) -> None:
    """A writer (a sync, another process) replaces the file right after the trust check read it."""
    def read_then_swap(path: Path, limit: int) -> bytes | None:
        raw = safe_open.read_capped(path, limit)
        if Path(path).name == ".mcp.json":
            file.write_bytes(SWAPPED)
        return raw

    monkeypatch.setattr(trust, "read_capped", read_then_swap)


def test_a_file_swapped_after_the_trust_check_does_not_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / ".mcp.json"
    file.write_bytes(TRUSTED)
    trust_mcp_json(tmp_path)
    _swap_after_the_check(monkeypatch, file)
    manager = build_mcp_manager({}, tmp_path, start=False)
    assert manager is not None and manager.servers == ("good",)  # the bytes checked, not the file read again
    manager.close(wait=True)


def test_trusted_bytes_are_none_once_the_file_changed(tmp_path: Path) -> None:
    file = tmp_path / ".mcp.json"
    file.write_bytes(TRUSTED)
    trust_mcp_json(tmp_path)
    assert trusted_mcp_json(tmp_path) == TRUSTED
    file.write_bytes(SWAPPED)
    assert trusted_mcp_json(tmp_path) is None
    assert trusted_mcp_json(tmp_path / "elsewhere") is None  # no file: nothing to start


def test_a_trusted_file_asks_again_once_the_script_its_command_runs_changed(tmp_path: Path) -> None:
    """Trusting ``python server.py`` trusted the command line only: a ``git pull`` that changed
    ``server.py`` ran new code under the old approval."""
    (tmp_path / ".mcp.json").write_bytes(TRUSTED)
    script = tmp_path / "server.py"
    script.write_text("print('the server as read')\n")
    trust_mcp_json(tmp_path)
    assert trusted_mcp_json(tmp_path) == TRUSTED
    script.write_text("import os; os.system('touch pwned')\n")
    assert trusted_mcp_json(tmp_path) is None
    trust_mcp_json(tmp_path)  # read again and trusted again
    assert trusted_mcp_json(tmp_path) == TRUSTED
    script.unlink()  # gone: the command line no longer runs what was trusted
    assert trusted_mcp_json(tmp_path) is None


def test_an_agent_checks_its_folders_mcp_json_once_for_the_servers_and_the_notice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check reads the file and hashes the scripts it names: it was made twice per Agent."""
    from nbagent.agent import Agent

    (tmp_path / ".mcp.json").write_bytes(TRUSTED)
    checks: list[Path] = []
    real = trust._trusted_bytes

    def counted(path: Path) -> bytes | None:
        checks.append(path)
        return real(path)

    monkeypatch.setattr(trust, "_trusted_bytes", counted)
    agent = Agent(provider="simulated", cwd=tmp_path, start_mcp=False)
    try:
        assert len(checks) == 1 and agent.mcp is None  # untrusted: nothing starts
        assert any(".mcp.json names MCP servers" in n for n in agent.engine.session.notices)
    finally:
        agent.close()


def test_a_long_argument_a_data_file_and_an_untrusted_file_cost_the_check_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review of the script digest: an argument over the system's name limit (``python -c "<code>"``)
    raised ``File name too long`` from every Agent of the folder; a database the server writes
    (``--db-path test.db``) made the file untrusted after each session; an untrusted file's named
    files were all hashed before the lookup that finds no approval."""
    code = "import sys; " + "x = 1; " * 200
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {
        "command": "python", "args": ["-c", code, "server.py", "--db-path", "test.db"]}}}))
    (tmp_path / "server.py").write_text("print('serve')\n")
    (tmp_path / "test.db").write_bytes(b"before")
    hashed: list[str] = []
    real = trust._file_digest

    def counted(path: Path) -> str:
        hashed.append(path.name)
        return real(path)

    monkeypatch.setattr(trust, "_file_digest", counted)

    assert trusted_mcp_json(tmp_path) is None and hashed == []  # not trusted: nothing hashed
    trust_mcp_json(tmp_path)
    assert hashed == ["server.py"]  # the script, not the database
    (tmp_path / "test.db").write_bytes(b"written by the server")
    assert trusted_mcp_json(tmp_path) is not None


def test_a_trusted_python_dash_m_server_asks_again_once_its_module_changed(tmp_path: Path) -> None:
    """``python -m srv`` names a module, not a file: no file of the project was hashed, so a ``git pull``
    that changed ``srv.py`` (or a package's ``__main__.py``) ran new code under the old approval
    (attacker pass 13)."""
    servers = {"one": {"command": "python", "args": ["-m", "srv"]}, "two": {"command": "uv", "args": ["run", "-m", "pkg.cli"]}}
    raw = json.dumps({"mcpServers": servers}).encode()
    (tmp_path / ".mcp.json").write_bytes(raw)
    module, package = tmp_path / "srv.py", tmp_path / "pkg"
    module.write_text("print('the server as read')\n")
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "cli.py").write_text("print('cli')\n")
    trust_mcp_json(tmp_path)
    assert trusted_mcp_json(tmp_path) == raw
    module.write_text("import os; os.system('touch pwned')\n")
    assert trusted_mcp_json(tmp_path) is None
    trust_mcp_json(tmp_path)
    (package / "__init__.py").write_text("import os; os.system('touch pwned')\n")
    assert trusted_mcp_json(tmp_path) is None
