"""An "Allow always" answer is a fact of the session: the task folder keeps it (session.json),
``Agent.resume`` / ``%agent load`` restores it, a folder of an earlier version loads with none, and
it still never covers a protected file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nbagent import Agent
from nbagent.engine.contracts.permissions import Allow, Deny, PermissionRequest
from nbagent.engine.state.store import SessionStore
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from nbagent.tools.files import WriteFile


class User:
    """A ``can_use_tool`` that records the paths it was asked about and answers ``answer``."""

    def __init__(self, answer: Any) -> None:
        self.answer, self.asked = answer, []

    async def __call__(self, name: str, tool_input: dict, request: PermissionRequest) -> Any:
        self.asked.append(Path(tool_input["path"]).name)
        return self.answer


def writes(*paths: str) -> SimulatedAPI:
    return SimulatedAPI([*(tool_reply("write_file", {"path": p, "content": p}, id=f"toolu_{p}_{i}".replace(".", "_"))
                           for i, p in enumerate(paths)), text_reply("ok")])


def agent(tmp_path: Path, api: SimulatedAPI, user: User, resume: bool = False) -> Agent:
    options: dict[str, Any] = dict(provider="simulated", simulated_options={"api": api}, cwd=tmp_path,
                                   tools=[WriteFile()], can_use_tool=user)
    task = tmp_path / "task"
    return Agent.resume(task, **options) if resume else Agent(task_dir=task, **options)


def test_allow_always_survives_resume_but_not_for_protected_files(tmp_path: Path) -> None:
    first = agent(tmp_path, writes("a.txt"), User(Allow(always=True)))
    first.run_sync("write a")
    assert first.allowed_always == {"write_file"}
    first.close()
    assert json.loads((tmp_path / "task" / "session.json").read_text())["allowed_always"] == ["write_file"]
    assert SessionStore(tmp_path / "task").load().allowed_always == ("write_file",)

    user = User(Deny("not asked for an allowed tool"))
    resumed = agent(tmp_path, writes("b.txt", "AGENTS.md"), user, resume=True)
    resumed.run_sync("write b and AGENTS.md")
    assert resumed.allowed_always == {"write_file"}
    assert user.asked == ["AGENTS.md"]  # b.txt ran unasked; the protected file still asks
    assert (tmp_path / "b.txt").read_text() == "b.txt" and not (tmp_path / "AGENTS.md").exists()
    resumed.close()


def test_a_folder_without_allowed_always_loads_with_none(tmp_path: Path) -> None:
    first = agent(tmp_path, writes("a.txt"), User(Allow(always=True)))
    first.run_sync("write a")
    first.close()
    meta_path = tmp_path / "task" / "session.json"
    meta = json.loads(meta_path.read_text())
    del meta["allowed_always"]  # as an earlier version wrote it
    meta_path.write_text(json.dumps(meta))
    user = User(Allow())
    resumed = agent(tmp_path, writes("b.txt"), user, resume=True)
    assert resumed.allowed_always == frozenset()
    resumed.run_sync("write b")
    assert user.asked == ["b.txt"]
    resumed.close()
