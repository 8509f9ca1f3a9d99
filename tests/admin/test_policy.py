"""Admin-locked settings: the system-wide file's values are defaults a session cannot raise."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest

import nbagent.admin.policy as admin_policy_module
from nbagent import Agent, RunLimits
from nbagent.admin import AdminLockedError, AdminPolicyError, DailyLedger, admin_policy
from nbagent.admin.enforce import DailyBudgetSpentError
from nbagent.engine.contracts.events import ToolResult
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply


@pytest.fixture
def admin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Write an admin file (``admin(**keys)``) and point ``$NBAGENT_ADMIN_CONFIG`` at it."""
    path = tmp_path / "admin.json"

    def write(**keys: Any) -> Path:
        keys.setdefault("ledger_dir", str(tmp_path / "ledger"))
        path.write_text(json.dumps(keys))
        monkeypatch.setattr(admin_policy_module, "ADMIN_CONFIG_AT_START", str(path))  # as the kernel started
        return path

    return write


def agent(tmp_path: Path, replies: Any = None, **settings: Any) -> Agent:
    api = SimulatedAPI(replies or [text_reply("ok")])
    return Agent(provider=simulated_provider(api), cwd=tmp_path, **settings)


def test_without_a_file_nothing_is_locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admin_policy_module, "ADMIN_CONFIG_AT_START", None)
    assert admin_policy() is None or Path("/etc/nbagent/admin.json").exists()


def test_the_admin_values_are_the_defaults(tmp_path: Path, admin: Any) -> None:
    admin(permission_mode="plan", max_budget_usd=0.5)
    config = agent(tmp_path).config
    assert (config.permission_mode, config.max_budget_usd) == ("plan", 0.5)
    assert agent(tmp_path, max_budget_usd=0.1).config.max_budget_usd == 0.1  # lower is fine


@pytest.mark.parametrize("settings, admin_key", [
    ({"permission_mode": "bypass"}, "permission_mode"),
    ({"permission_mode": "accept_edits"}, "permission_mode"),
    ({"max_budget_usd": 5.0}, "max_budget_usd"),
    ({"max_budget_usd": None}, "max_budget_usd"),
    ({"allow": ["python", "shell"]}, "allowed_tools"),
])
def test_agent_keywords_beyond_the_policy_fail_naming_the_admin_setting(tmp_path: Path, admin: Any,
                                                                         settings: dict, admin_key: str) -> None:
    path = admin(permission_mode="default", max_budget_usd=0.5, allowed_tools=["python", "read_file"])
    with pytest.raises(AdminLockedError) as err:
        agent(tmp_path, **settings)
    assert f"administrator locked {admin_key}" in str(err.value) and str(path) in str(err.value)


def test_reconfigure_and_a_prompts_limits_cannot_raise_it_either(tmp_path: Path, admin: Any) -> None:
    admin(permission_mode="default", max_budget_usd=0.5)
    a = agent(tmp_path)
    with pytest.raises(AdminLockedError, match="permission_mode"):
        a.reconfigure(permission_mode="bypass")
    assert a.config.permission_mode == "default"  # unchanged
    with pytest.raises(AdminLockedError, match="max_budget_usd"):
        a.run_sync("hi", limits=RunLimits(max_budget_usd=2.0))
    done = a.run_sync("hi", limits=RunLimits(max_budget_usd=0.2)).done
    assert done is not None and done.reason == "end_turn"


def test_a_tool_outside_allowed_tools_is_denied_before_it_runs(tmp_path: Path, admin: Any) -> None:
    admin(allowed_tools=["python"])
    a = agent(tmp_path, [tool_reply("list_files", {"path": "."}), text_reply("ok")])
    result = a.run_sync("list")
    (tool,) = [e for e in result if isinstance(e, ToolResult)]
    assert tool.is_error and "administrator allows only these tools here: python" in tool.content


def test_the_day_budget_caps_each_prompt_and_stops_when_spent(tmp_path: Path, admin: Any) -> None:
    admin(max_daily_budget_usd=0.01)
    a = agent(tmp_path, [text_reply("ok")] * 3)
    first = a.run_sync("hi")
    ledger = DailyLedger(tmp_path / "ledger")
    assert ledger.spent() == pytest.approx(first.cost)  # what the prompt was billed, across sessions
    ledger.add(1.0)  # another kernel of the same user spent the rest
    with pytest.raises(DailyBudgetSpentError, match="max_daily_budget_usd"):
        a.run_sync("again")


@pytest.mark.parametrize(("budget", "said"), [(0.005, "$0.0050"), (5.0, "$5.00")])
def test_a_spent_day_budget_is_named_as_set_not_rounded_above_what_was_spent(tmp_path: Path, admin: Any,
                                                                              budget: float, said: str) -> None:
    admin(max_daily_budget_usd=budget)
    DailyLedger(tmp_path / "ledger").add(budget)
    with pytest.raises(DailyBudgetSpentError, match=f"today's budget of \\{said} set by the administrator"):
        agent(tmp_path, [text_reply("ok")]).run_sync("hi")


def test_the_day_budget_keeps_the_prompts_other_limits(tmp_path: Path, admin: Any) -> None:
    """The day's cap rebuilt the prompt's limits with its requests only: --token-budget was dropped
    (review of this session)."""
    from nbagent.admin.enforce import prompt_limits
    from nbagent.admin.policy import AdminPolicy
    from nbagent.engine.contracts.config import RunLimits, SessionConfig

    policy = AdminPolicy(source="test", max_daily_budget_usd=0.01, ledger_dir=str(tmp_path / "ledger"))
    limits, _ledger = prompt_limits(policy, RunLimits(max_requests=3, token_budget=500), SessionConfig())
    assert limits == RunLimits(max_requests=3, max_budget_usd=0.01, token_budget=500)


def test_the_day_budget_counts_a_model_without_prices_at_its_stand_in_price(tmp_path: Path, admin: Any) -> None:
    # An unknown Claude model's cost is unknown (None); its prompts are capped at its family's
    # highest price, and the day's ledger must grow by that too, not by $0 for ever.
    admin(max_daily_budget_usd=0.01)
    a = agent(tmp_path, [text_reply("ok " * 50)] * 5, model="claude-opus-9-9")
    with warnings.catch_warnings():  # "no prices for model …", said once per model and process
        warnings.simplefilter("ignore")
        a.run_sync("hi")
    spent = DailyLedger(tmp_path / "ledger").spent()
    assert spent > 0 and spent == pytest.approx(a.session.spent.budget_usd)
    with pytest.raises(DailyBudgetSpentError, match="max_daily_budget_usd"):
        for _ in range(4):
            a.run_sync("again")


def test_a_bad_admin_file_is_an_error_not_an_open_door(tmp_path: Path, admin: Any) -> None:
    admin(permision_mode="plan")  # a typo must not unlock anything
    with pytest.raises(AdminPolicyError, match="unknown key"):
        agent(tmp_path)
    admin(max_budget_usd=-1)
    with pytest.raises(AdminPolicyError, match="max_budget_usd"):
        agent(tmp_path)


def test_a_cell_changing_the_variable_later_does_not_move_the_lock(tmp_path: Path, admin: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    admin(permission_mode="default", max_budget_usd=0.5)
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"max_budget_usd": 1000}))
    monkeypatch.setenv("NBAGENT_ADMIN_CONFIG", str(mine))  # os.environ[...] = "mine.json" in a cell
    policy = admin_policy()
    assert policy is not None and policy.max_budget_usd == 0.5
    with pytest.raises(AdminLockedError):
        agent(tmp_path, max_budget_usd=100)


def test_the_location_is_the_one_the_process_started_with(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import os; os.environ['NBAGENT_ADMIN_CONFIG'] = 'mine.json'\n"
            "from nbagent.admin import policy; print(policy.ADMIN_CONFIG_AT_START)")
    env = {**os.environ, "NBAGENT_ADMIN_CONFIG": str(tmp_path / "admin.json")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(tmp_path / "admin.json")


def test_the_day_ledger_keys_on_the_os_account_not_on_user_variables(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import pwd

    me = pwd.getpwuid(os.getuid()).pw_name
    DailyLedger(tmp_path).add(4.0)
    for name in ("USER", "LOGNAME", "LNAME", "USERNAME"):  # what a cell can set to start a fresh day
        monkeypatch.setenv(name, "someone-else")
    ledger = DailyLedger(tmp_path)
    assert ledger.user == me and ledger.spent() == 4.0


def test_web_search_outside_allowed_tools_is_refused_naming_the_setting(tmp_path: Path, admin: Any) -> None:
    path = admin(allowed_tools=["python", "read_file"])
    with pytest.raises(AdminLockedError) as err:
        agent(tmp_path, server_tools=("web_search",))
    assert "server_tools=['web_search']" in str(err.value) and "allowed_tools" in str(err.value)
    assert str(path) in str(err.value)
    quiet = agent(tmp_path)
    with pytest.raises(AdminLockedError):
        quiet.reconfigure(server_tools=({"type": "web_search_20250305", "name": "web_search"},))
    assert quiet.config.server_tools == ()
    admin(allowed_tools=["python", "web_search"])
    assert agent(tmp_path, server_tools=("web_search",)).config.server_tools == ("web_search",)


async def test_the_day_ledger_grows_as_each_request_is_billed_not_at_the_prompts_end(tmp_path: Path, admin: Any) -> None:
    """The ledger was added to when a prompt's run ended: a kernel restarted (or killed) in the middle
    of a long prompt never counted what its requests had been billed, and the next kernel's prompt
    was given the whole day's budget again."""
    from nbagent.engine.contracts.events import RequestCompleted

    admin(max_daily_budget_usd=1.0)
    a = agent(tmp_path, [tool_reply("list_files", {"path": "."}), text_reply("done")])
    ledger = DailyLedger(tmp_path / "ledger")
    run = a.run("list the files")
    async for event in run:
        if isinstance(event, RequestCompleted):  # the first request is answered, the prompt goes on
            break

    assert a.session.spent.budget_usd > 0 and ledger.spent() == pytest.approx(a.session.spent.budget_usd, abs=1e-6)
    async for _ in run:
        pass
    # Counted once (twice would be ~$0.002 more); the file keeps each add's total to a millionth of a dollar.
    assert ledger.spent() == pytest.approx(a.session.spent.budget_usd, abs=2e-6)


async def test_a_ledger_that_cannot_be_written_fails_the_prompt_at_its_end_not_between_two_requests(
        tmp_path: Path, admin: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ledger_dir the student cannot write: raised as the first request was counted, the turn was
    cut off mid-way (the tool never ran) and every later prompt was refused ("a run is already in
    progress") until the kernel restarted. The error still fails the prompt, once it has ended."""
    def denied(self: DailyLedger, usd: float) -> float:
        raise PermissionError(13, "Permission denied", str(self.path))

    admin(max_daily_budget_usd=1.0)
    monkeypatch.setattr(DailyLedger, "add", denied)
    a = agent(tmp_path, [tool_reply("list_files", {"path": "."}), text_reply("done"), text_reply("again")])
    seen: list[object] = []
    with pytest.raises(PermissionError):
        async for event in a.run("list the files"):
            seen.append(event)
    assert any(isinstance(e, ToolResult) for e in seen) and len(a.records) == 2  # the turn ran to its end
    monkeypatch.undo()
    admin(max_daily_budget_usd=1.0)
    assert [e async for e in a.run("once more")]  # the agent takes the next prompt


def _saved_session_that_spent(tmp_path: Path, usd: float) -> Path:
    """A task folder whose ``session.json`` says the session spent ``usd`` (received, or edited)."""
    task = tmp_path / "task"
    first = agent(tmp_path, task_dir=task)
    first.run_sync("hi")
    first.close()
    meta = json.loads((task / "session.json").read_text())
    meta["spent"].update(cost_usd=usd, budget_usd=usd)
    (task / "session.json").write_text(json.dumps(meta))
    return task


def test_a_session_folder_saying_it_spent_1e18_cannot_lift_the_day_budget(tmp_path: Path, admin: Any) -> None:
    """Resumed, each request's cost vanished into a sum of 1e18 (a float's rounding): the prompt's budget
    and the day's cap, measured as the sum's growth, never moved, and 25 requests ran on a cap of $0.002
    with the ledger unchanged. Such a file is refused, as one holding NaN is."""
    from nbagent.engine.contracts.errors import CorruptFileError

    task = _saved_session_that_spent(tmp_path, 1e18)
    admin(max_daily_budget_usd=0.002)
    api = SimulatedAPI([tool_reply("list_files", {"path": "."})] * 30 + [text_reply("done")])
    with pytest.raises(CorruptFileError, match=r"session\.json.*spent\.(cost|budget)_usd"):
        Agent.resume(task, provider=simulated_provider(api), cwd=tmp_path).run_sync("list the files, many times")


def test_the_day_budget_still_stops_a_session_that_spent_the_most_a_file_may_say(tmp_path: Path, admin: Any) -> None:
    from nbagent.engine.contracts.saved import MAX_MONEY_USD

    task = _saved_session_that_spent(tmp_path, MAX_MONEY_USD)
    admin(max_daily_budget_usd=0.002)
    api = SimulatedAPI([tool_reply("list_files", {"path": "."})] * 30 + [text_reply("done")])
    run = Agent.resume(task, provider=simulated_provider(api), cwd=tmp_path).run_sync("list the files, many times")
    assert run.done is not None and run.done.reason == "max_budget", run.done
    assert DailyLedger(tmp_path / "ledger").spent() >= 0.002


def test_an_unpriced_request_record_with_huge_token_counts_cannot_lift_the_day_budget(tmp_path: Path, admin: Any) -> None:
    """The near variant of the 1e18 ``spent``: a record saying it had no price (``cost_usd: null``) and 1e21
    input tokens is counted at a stand-in's prices, $3e15, past the bound on money a file may say; each
    later request's cost vanished into it and 25 requests ran on a cap of $0.002, the ledger unchanged."""
    task = tmp_path / "task"
    first = agent(tmp_path, task_dir=task)
    first.run_sync("hi")
    first.close()
    records = json.loads((task / "requests.json").read_text())
    records[-1].update(cost_usd=None)
    records[-1]["usage"]["input_tokens"] = 10**21
    (task / "requests.json").write_text(json.dumps(records))
    admin(max_daily_budget_usd=0.002)
    api = SimulatedAPI([tool_reply("list_files", {"path": "."})] * 30 + [text_reply("done")])
    run = Agent.resume(task, provider=simulated_provider(api), cwd=tmp_path).run_sync("list the files, many times")
    assert run.done is not None and run.done.reason == "max_budget", run.done
    assert DailyLedger(tmp_path / "ledger").spent() >= 0.002
