"""``sent_requests.json``: what each request sent, saved with the request log. A process killed
between a rollback's rewrite of the request log and of this file leaves lines of rolled-back
requests: load drops them (matched against the records) and the file is rewritten."""

from __future__ import annotations

from pathlib import Path

from nbagent import Agent
from nbagent.engine.state.store import SENT_FILE
from nbagent.providers.simulated import SimulatedAPI, text_reply


def agent(api: SimulatedAPI, task: Path, resume: bool = False) -> Agent:
    if resume:
        return Agent.resume(task, provider="simulated", simulated_options={"api": api}, cwd=task.parent)
    return Agent(task_dir=task, provider="simulated", simulated_options={"api": api}, cwd=task.parent)


def lines(task: Path) -> list[str]:
    return (task / SENT_FILE).read_text().splitlines()[1:-1]


def test_lines_of_rolled_back_requests_left_by_a_killed_rollback_are_dropped(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=lambda body: text_reply("ok"), thinks_by_default=False)
    task = tmp_path / "task"
    a = agent(api, task)
    a.run_sync("one")
    a.run_sync("two")
    a.close()
    before_rollback = (task / SENT_FILE).read_bytes()
    assert len(lines(task)) == 2 and '"system"' in lines(task)[0] and '"system"' not in lines(task)[1]

    b = agent(api, task, resume=True)
    b.rollback(1)
    b.close()
    assert len(lines(task)) == 1
    (task / SENT_FILE).write_bytes(before_rollback)  # killed before the rollback rewrote this file

    c = agent(api, task, resume=True)
    assert [s.request for s in c.session.sent] == [1]
    c.run_sync("three")  # request 2 again, a new one: saved in place of the stale line
    assert [(s.request, s.turn) for s in c.session.sent] == [(1, 1), (2, 2)]
    c.close()
    assert len(lines(task)) == 2 and lines(task)[1] != before_rollback.decode().splitlines()[2]
