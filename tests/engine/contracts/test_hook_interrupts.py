"""Issue 22: a hook raising ``SystemExit`` or ``KeyboardInterrupt`` no longer escapes ``run_sync``.
``SystemExit`` is the hook's failure (a denial for ``pre_tool_use``, a warning for observers);
``KeyboardInterrupt`` is the user's abort: the run ends "aborted" with a valid history."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from nbagent import Agent
from nbagent.engine.contracts.events import Done, Notice, ToolResult
from nbagent.engine.contracts.hooks import HookMap
from nbagent.engine.contracts.messages import history_problems
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply


def agent_with(tmp_path: Path, hooks: HookMap) -> Agent:
    api = SimulatedAPI([tool_reply("python", {"code": "ran = 1"}), text_reply("ok"), text_reply("again")])
    return Agent(provider="simulated", simulated_options={"api": api}, cwd=tmp_path, permission_mode="bypass",
                 hooks=hooks)


def done(events: list[Any]) -> Done:
    last = events[-1]
    assert isinstance(last, Done)
    return last


def exits(*args: Any) -> None:
    sys.exit(3)


def interrupted(*args: Any) -> None:
    raise KeyboardInterrupt


def test_a_hook_calling_sys_exit_is_a_hook_failure_and_the_run_goes_on(tmp_path: Path) -> None:
    agent = agent_with(tmp_path, {"pre_request": exits, "pre_tool_use": exits})
    events = agent.run_sync("go")
    assert done(events).reason == "end_turn"
    warnings = [e.message for e in events if isinstance(e, Notice) and "SystemExit(3)" in e.message]
    assert warnings and "cannot end the process" in warnings[0]
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.is_error and "SystemExit(3)" in result.content  # denied, not run


@pytest.mark.parametrize("hooks", [{"pre_request": interrupted}, {"pre_tool_use": interrupted},
                                   {"post_tool_use": interrupted}], ids=["pre_request", "pre_tool_use", "post_tool_use"])
def test_a_keyboard_interrupt_in_a_hook_aborts_the_run_with_a_valid_history(tmp_path: Path, hooks: HookMap) -> None:
    agent = agent_with(tmp_path, hooks)
    events = agent.run_sync("go")
    assert done(events).reason == "aborted"
    assert history_problems(agent.history) == []
    agent.engine.hooks = type(agent.engine.hooks).from_mapping({})
    assert done(agent.run_sync("next")).reason == "end_turn"  # the session goes on


def test_a_keyboard_interrupt_in_on_done_still_ends_the_run(tmp_path: Path) -> None:
    agent = agent_with(tmp_path, {"on_done": interrupted})
    events = agent.run_sync("go")
    assert done(events).reason == "end_turn"
    assert any(isinstance(e, Notice) and "on_done hook was interrupted" in e.message for e in events)
