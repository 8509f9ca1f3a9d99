"""The denials a session recorded are part of its audit log: ``Agent.resume`` (and a notebook's
replayed session, which loads the same way) keeps them, with their turn and tool call, and later
denials add to them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nbagent import Agent
from nbagent.engine.contracts.permissions import Deny, PermissionRequest
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from nbagent.tools.files import WriteFile


async def deny(name: str, tool_input: dict, request: PermissionRequest) -> Any:
    return Deny(f"not {Path(tool_input['path']).name}")


def agent(tmp_path: Path, *paths: str, resume: bool = False) -> Agent:
    api = SimulatedAPI([*(tool_reply("write_file", {"path": p, "content": p}, id=f"toolu_{p[0]}{i}")
                          for i, p in enumerate(paths)), text_reply("ok")])
    options: dict[str, Any] = dict(provider="simulated", simulated_options={"api": api}, cwd=tmp_path,
                                   tools=[WriteFile()], can_use_tool=deny)
    task = tmp_path / "task"
    return Agent.resume(task, **options) if resume else Agent(task_dir=task, **options)


def test_a_resumed_session_keeps_the_denials_its_runs_recorded(tmp_path: Path) -> None:
    first = agent(tmp_path, "a.txt")
    first.run_sync("write a")
    first.run_sync("and nothing else")
    recorded = first.denials
    first.close()

    resumed = agent(tmp_path, "b.txt", resume=True)
    assert [(d.tool, d.input, d.reason, d.tool_use_id, d.turn) for d in resumed.denials] == \
        [(d.tool, d.input, d.reason, d.tool_use_id, d.turn) for d in recorded] == \
        [("write_file", {"path": str(tmp_path / "a.txt"), "content": "a.txt"}, "not a.txt", "toolu_a0", 1)]
    assert resumed.denials[0].ts > 0  # the time of the request that asked for the tool
    resumed.run_sync("write b")
    assert [(d.reason, d.turn) for d in resumed.denials] == [("not a.txt", 1), ("not b.txt", 3)]
