"""A notebook cannot raise an admin-locked setting: ``%config`` and ``%%agent`` options fail with
the admin setting's name."""

from __future__ import annotations

import json
from typing import Any

import nbagent.admin.policy as admin_policy_module
from nbagent.notebook import magics as magics_mod

from .test_magics_inprocess import ip, run  # noqa: F401  (ip is a fixture)


def locked(tmp_path: Any, monkeypatch: Any, **keys: Any) -> str:
    path = tmp_path / "admin.json"
    path.write_text(json.dumps(keys))
    monkeypatch.setattr(admin_policy_module, "ADMIN_CONFIG_AT_START", str(path))  # as the kernel started
    return str(path)


def test_config_beyond_the_admin_policy_fails_naming_it(ip, tmp_path, monkeypatch, caplog):  # noqa: F811
    path = locked(tmp_path, monkeypatch, permission_mode="default", max_budget_usd=0.5)
    magics = magics_mod.active_magics()
    before = magics.max_budget
    ip.run_cell('%config AgentMagics.permission_mode = "accept_edits"')  # %config reports a TraitError as an error line
    ip.run_cell("%config AgentMagics.max_budget = 3.0")
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("administrator locked permission_mode" in e and path in e for e in errors), errors
    assert any("administrator locked max_budget_usd" in e for e in errors), errors
    assert magics.permission_mode == "default" and magics.max_budget == before  # unchanged
    run(ip, "%config AgentMagics.max_budget = 0.25")  # within it: fine
    assert magics.max_budget == 0.25
    monkeypatch.setattr(admin_policy_module, "ADMIN_CONFIG_AT_START", None)
    magics.max_budget = before


def test_agent_cell_options_beyond_the_admin_policy_are_refused(ip, tmp_path, monkeypatch):  # noqa: F811
    locked(tmp_path, monkeypatch, max_budget_usd=0.5, allowed_tools=["python", "read_file"])
    for cell, key in (("%%agent --max-budget 9\nWhat is 2 * 3?", "max_budget_usd"),
                      ("%%agent --allow shell\nWhat is 2 * 3?", "allowed_tools")):
        result = ip.run_cell(cell)
        assert type(result.error_in_exec).__name__ == "AgentRunRefused"  # the cell fails: Run All stops
        assert f"administrator locked {key}" in str(result.error_in_exec)


def test_web_search_is_refused_when_the_admin_leaves_it_out(ip, tmp_path, monkeypatch, caplog):  # noqa: F811
    locked(tmp_path, monkeypatch, allowed_tools=["python", "read_file"])
    magics = magics_mod.active_magics()
    result = ip.run_cell("%%agent --web-search\nWhat is 2 * 3?")
    assert type(result.error_in_exec).__name__ == "AgentRunRefused"
    assert "administrator locked allowed_tools" in str(result.error_in_exec)
    ip.run_cell("%config AgentMagics.web_search = True")
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("administrator locked allowed_tools" in e for e in errors), errors
    assert magics.web_search is False
    assert magics.current is None or "web_search" not in magics.current.agent.config.server_tools
