"""``%config AgentMagics.X`` after a session started: it reaches the session, or says it waits."""

from __future__ import annotations

from typing import Any

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.settings import LIVE, NEW_SESSIONS_ONLY, PER_PROMPT

from .test_magics_inprocess import ip, run, session  # noqa: F401  (ip is a fixture)


def _models_sent(s: Any) -> list[str]:
    return [r.body["model"] for r in s.agent.simulated_api.requests if r.path.endswith("/v1/messages")]


def _tools_sent(s: Any) -> list[str]:
    """The tools offered by the last request."""
    last = [r for r in s.agent.simulated_api.requests if r.path.endswith("/v1/messages")][-1]
    return [t["name"] for t in last.body.get("tools", [])]


def test_config_model_between_two_cells_is_the_model_of_the_next_request(ip):  # noqa: F811
    run(ip, "%%agent --allow python\nWhat is 2 * 3?")
    assert set(_models_sent(session())) == {"claude-sonnet-5-5"}
    out = run(ip, '%config AgentMagics.model = "claude-haiku-4-5"')
    assert "new sessions" not in out  # the running session takes it: nothing to warn about
    sent_before = len(_models_sent(session()))
    run(ip, "%%agent\nWhat is 3 * 4?")
    assert set(_models_sent(session())[sent_before:]) == {"claude-haiku-4-5"}
    shown = run(ip, "%agent config")
    assert shown.count("claude-haiku-4-5") == 1 and "claude-sonnet-5-5" not in shown
    magics_mod.active_magics().model = "claude-sonnet-5-5"


def test_every_live_setting_reaches_the_running_session(ip):  # noqa: F811
    magics = magics_mod.active_magics()
    run(ip, "%config AgentMagics.max_requests = 7")
    run(ip, "%config AgentMagics.max_budget = 0.5")
    run(ip, "%config AgentMagics.context_window = 50000")
    run(ip, '%config AgentMagics.effort = "low"')
    run(ip, "%config AgentMagics.web_search = True")
    run(ip, '%config AgentMagics.permission_mode = "plan"')
    run(ip, '%config AgentMagics.allow = ["python", "write_file"]')
    config = session().agent.config
    assert (config.max_requests, config.max_budget_usd, config.context_window, config.effort) == (7, 0.5, 50000, "low")
    assert "web_search" in config.server_tools and config.permission_mode == "plan"
    assert set(config.allow) == {"python", "read_file", "write_file"}  # the session's own allow stays
    run(ip, '%config AgentMagics.allow = ["python"]')
    assert "write_file" not in session().agent.config.allow
    for name, value in [("max_requests", 25), ("max_budget", magics.traits()["max_budget"].default_value),
                        ("context_window", None), ("effort", None), ("web_search", False),
                        ("permission_mode", "default"), ("allow", [])]:
        setattr(magics, name, value)
    assert "web_search" not in session().agent.config.server_tools


def test_notes_option_turns_the_notes_file_on_and_status_shows_it(ip):  # noqa: F811
    assert "notes        off" in run(ip, "%agent status")
    run(ip, "%%agent --notes 3000\nWhat is 2 * 5?")
    agent = session().agent
    assert agent.config.notes == 3000 and "notes" in _tools_sent(session())
    assert "notes        on, bound 3,000 characters; 0 used" in run(ip, "%agent status")
    run(ip, "%%agent\nWhat is 2 * 6?")  # holds for later prompts, like --context
    assert session().agent.config.notes == 3000
    run(ip, "%%agent --notes 0\nWhat is 2 * 7?")
    assert session().agent.config.notes == 0 and "notes" not in _tools_sent(session())


def test_config_notes_reaches_the_session_and_a_bad_bound_fails_at_once(ip, caplog):  # noqa: F811
    magics = magics_mod.active_magics()
    run(ip, "%config AgentMagics.notes = 1500")
    try:
        assert session().agent.config.notes == 1500
        assert "AgentMagics.notes = 1500" in run(ip, "%agent config")
        ip.run_cell("%config AgentMagics.notes = -5")  # %config reports the TraitError as an error line
        errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
        assert any("0 (off) to 100,000, got -5" in e for e in errors), errors
        assert magics.notes == 1500 and session().agent.config.notes == 1500  # unchanged
        assert magics.new_session().agent.config.notes == 1500  # and new sessions start with it
    finally:
        magics.notes = 0
    assert session().agent.config.notes == 0


def test_a_setting_for_new_sessions_says_so_once_and_agent_config_marks_it(ip):  # noqa: F811
    out = run(ip, "%config AgentMagics.shell_tool = True")
    try:
        assert out.count("AgentMagics.shell_tool applies to new sessions only") == 1
        assert "shell" not in session().agent.tools
        assert "AgentMagics.shell_tool = True   (new sessions only)" in run(ip, "%agent config")
        assert "shell" in magics_mod.active_magics().new_session().agent.tools
    finally:
        magics_mod.active_magics().shell_tool = False


def test_every_setting_is_live_new_sessions_only_or_read_per_prompt():
    traits = set(magics_mod.AgentMagics.class_trait_names(config=True))
    assert traits == set(LIVE) | NEW_SESSIONS_ONLY | PER_PROMPT


def test_mcp_json_off_reads_no_mcp_json_of_the_working_folder(ip, tmp_path):  # noqa: F811
    """``python -m nbagent.batch --notebook`` sets it: an item's folder is data (attacker pass 6, F1)."""
    import json
    import sys

    mark = tmp_path / "STARTED"
    server = {"command": sys.executable, "args": ["-c", f"open({str(mark)!r}, 'w').close()"]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": server}}))
    run(ip, "%config AgentMagics.mcp_json = False")
    try:
        run(ip, "%agent reset")
        run(ip, "%%agent --allow python\nWhat is 2 * 3?")
        assert session().agent.mcp is None and not mark.exists()
    finally:
        magics_mod.active_magics().mcp_json = True


def test_task_root_saves_each_new_session_in_its_own_folder_under_it(ip, tmp_path):  # noqa: F811
    magics = magics_mod.active_magics()
    run(ip, f'%config AgentMagics.task_root = "{tmp_path / "sessions"}"')
    try:
        run(ip, "%agent reset")
        run(ip, "%%agent --allow python\nWhat is 2 * 7?")
        first = session().agent.session.task_dir
        run(ip, "%agent reset")
        run(ip, "%%agent --allow python\nWhat is 2 * 8?")
        second = session().agent.session.task_dir
        assert "not recorded for replay" in run(ip, "%agent status")
    finally:
        magics.task_root = None
        ip.config.AgentMagics.pop("task_root", None)  # or every later %reload_ext saves there
        run(ip, "%agent reset")
    assert first is not None and second is not None and first != second
    for folder in (first, second):
        assert folder.parent == tmp_path / "sessions" and (folder / "session.json").is_file()


def test_a_task_dir_named_by_the_caller_wins_over_task_root(ip, tmp_path):  # noqa: F811
    magics = magics_mod.active_magics()
    magics.task_root = str(tmp_path / "sessions")
    try:
        made = magics.new_session(task_dir=tmp_path / "mine")
        assert made.agent.session.task_dir == tmp_path / "mine"
    finally:
        magics.task_root = None
        run(ip, "%agent reset")


def test_config_model_that_cannot_be_an_id_fails_at_once_and_the_old_one_stays(ip, caplog):  # noqa: F811
    """``%config AgentMagics.model = 'no such model!'`` was taken; each prompt then failed at the API."""
    magics = magics_mod.active_magics()
    try:
        ip.run_cell("%config AgentMagics.model = 'no such model!'")
        errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
        assert any("cannot be a model id: it has '!'. Model ids are letters, digits" in e for e in errors), errors
        assert magics.model == "claude-sonnet-5-5"
        ip.run_cell("%config AgentMagics.model = 'us.anthropic.claude-sonnet-4-20250514-v1:0'")
        assert magics.model == "us.anthropic.claude-sonnet-4-20250514-v1:0"
    finally:
        magics.model = "claude-sonnet-5-5"


def test_config_model_empty_fails_at_once_and_no_request_is_sent(ip, caplog):  # noqa: F811
    """``%config AgentMagics.model = os.environ.get("MODEL", "")``: on the old code the setting was
    taken, and the next prompt's request failed with the API's "model: Field required" (a page then
    offered Retry) — nothing said which setting was wrong (newcomer pass 25)."""
    magics = magics_mod.active_magics()
    ip.run_cell('%config AgentMagics.model = ""')  # %config reports the TraitError as an error line
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("model must be a model id such as 'claude-sonnet-5-5', got ''" in e for e in errors), errors
    assert magics.model == "claude-sonnet-5-5"
    run(ip, "%%agent\nWhat is 2 * 3?")
    assert set(_models_sent(session())) == {"claude-sonnet-5-5"}
