"""A permission prompt nobody can see ends the turn there: the call gets its ``tool_result``
(denied), the other calls of the reply are answered as not run, the model is sent no further
request (nobody would see it, and it could ask again), and the cell fails with one line that says
why and what to do. Was: denied, and the turn went on with another request nobody saw."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nbagent.engine.contracts import events as ev
from nbagent.engine.contracts.permissions import CallbackAsker
from nbagent.notebook import waiting
from nbagent.notebook.outcome import AgentRunFailed, check_done
from nbagent.notebook.view import AgentView
from nbagent.providers.simulated import Reply, SimulatedAPI, ToolUseBlock, text_reply
from tests.engine.loop.test_query_support import Write, assert_persisted_valid, done_of, make_engine, messages_requests, run

WRITE = {"path": "notes.txt", "text": "hello"}


async def gone() -> bool:
    return False


class ShownThenGone:
    """Shown when the prompt appears; gone at the first check while it waits (a reload)."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self) -> bool:
        self.asked += 1
        return self.asked == 1


def _two_calls() -> Reply:
    return Reply((ToolUseBlock("write", WRITE, "toolu_a"), ToolUseBlock("write", WRITE, "toolu_b")))


async def _run_with(view: AgentView, tmp_path: Path) -> tuple[SimulatedAPI, Write, list[ev.Event], object]:
    write = Write()
    api = SimulatedAPI([_two_calls(), text_reply("Understood, I will not write it.")])
    engine = make_engine(api, tmp_path, tools=[write])
    engine.asker = CallbackAsker(view.ask_permission)
    events = await asyncio.wait_for(run(engine, "save my notes"), 20)
    return api, write, events, engine


@pytest.mark.parametrize("shown", [gone, ShownThenGone()], ids=["no-page", "page-reloaded"])
async def test_a_prompt_nobody_can_see_ends_the_turn_with_a_valid_history(shown, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(waiting, "SHOWN_EVERY_S", 0.05)
    view = AgentView(cell_shown=shown)
    api, write, events, engine = await _run_with(view, tmp_path)
    assert write.calls == []
    assert len(messages_requests(api)) == 1  # nobody sees a next request: none is sent
    done = done_of(events)
    assert done.reason == "error" and done.error is not None
    assert "nobody could see" in done.error and "--allow write" in done.error
    results = {e.tool_use_id: e.content for e in events if isinstance(e, ev.ToolResult)}
    assert "denied" in results["toolu_a"]
    history = engine.session.history  # type: ignore[attr-defined]
    answered = [b for b in history[-1]["content"] if b.get("type") == "tool_result"]
    assert [b["tool_use_id"] for b in answered] == ["toolu_a", "toolu_b"]  # every call answered
    assert "Not run" in str(answered[1]["content"])
    assert_persisted_valid(tmp_path / "task", engine)  # type: ignore[arg-type]


async def test_the_cell_fails_with_one_line_saying_why_and_what_to_do(tmp_path) -> None:
    view = AgentView(cell_shown=gone)
    _, _, events, _ = await _run_with(view, tmp_path)
    with pytest.raises(AgentRunFailed) as failed:
        check_done(done_of(events))
    line = str(failed.value)
    assert "\n" not in line and line.startswith("the agent run stopped at a permission prompt nobody could see")
    assert "%%agent --allow write" in line and "%agent retry" not in line


async def test_the_line_says_how_to_get_past_a_replay_of_the_recorded_stop(tmp_path) -> None:
    """The stop is recorded: a headless run again (or Run All after a restart) replays it, and
    --allow added as the line said replayed the same failure (the options line does not undo a
    record); the way out that works, --live with --allow, is named in the line itself."""
    view = AgentView(cell_shown=gone)
    _, _, events, _ = await _run_with(view, tmp_path)
    with pytest.raises(AgentRunFailed) as failed:
        check_done(done_of(events))
    line = str(failed.value)
    assert "\n" not in line and "--allow write" in line and "--live" in line


async def test_a_cell_deleted_while_queued_ends_its_turn_without_failing(tmp_path) -> None:
    """A queued agent cell deleted from an open page (or run again while it ran): its prompt shows
    nowhere, so the turn ends there, but the cell does not fail: a failure aborts the kernel's queue,
    the user's cells below it in Run All (or that new run), for a reason shown in no cell. Was (fx2):
    the deleted cell failed and Run All silently stopped before the user's own cells."""

    async def deleted() -> bool:
        setattr(deleted, waiting.LEFT_PAGE, True)  # as page.shown_check's check does
        return False

    api, write, events, _ = await _run_with(AgentView(cell_shown=deleted), tmp_path)
    assert write.calls == [] and len(messages_requests(api)) == 1  # still no request nobody sees
    done = done_of(events)
    assert done.reason == "error" and "left the page" in (done.error or "")
    check_done(done)  # does not raise: the cell ends, the queue goes on
