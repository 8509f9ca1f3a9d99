"""A prompt nobody can see is never waited on: when the cell running the agent left the notebook
(deleted while Run All had it queued), a permission is denied with a notice and a failed request
is cancelled, instead of the kernel waiting Busy for ever."""

from __future__ import annotations

import asyncio

import pytest

from nbagent.engine.contracts import events as ev
from nbagent.engine.contracts.permissions import Deny, PermissionRequest
from nbagent.notebook.document import cell_run
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.view import AgentView
from nbagent.notebook.view.agent_view import UNSEEN_PROMPT

from .fake_frontend import FakeFrontEnd


async def gone() -> bool:
    return False


async def test_a_permission_asked_from_a_cell_no_longer_in_the_notebook_is_denied_at_once() -> None:
    view = AgentView(cell_shown=gone)
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": "1+1"}))
    request = PermissionRequest("t1", "python", {"code": "1+1"}, False, 1, "python is not read-only")
    outcome = await asyncio.wait_for(view.ask_permission("python", {"code": "1+1"}, request), 5)
    assert outcome == Deny(UNSEEN_PROMPT)
    with pytest.raises(LookupError):
        _ = view.permission  # no prompt was shown, so none waits
    assert "no longer in the notebook" in view.transcript()


async def test_a_failed_request_from_a_cell_no_longer_in_the_notebook_is_cancelled() -> None:
    view = AgentView(cell_shown=gone)
    failed = ev.ApiRequestFailed(error_kind="api_error", message="boom")
    assert await asyncio.wait_for(view.ask_api_failure(failed), 5) == "cancel"


async def test_the_check_asks_the_front_end_for_the_running_cell(monkeypatch) -> None:
    front = FakeFrontEnd([{"cell_type": "code", "source": "%%agent\nq"}, {"cell_type": "code", "source": "x"}])
    bridge = front.connect(Bridge())
    monkeypatch.setattr(cell_run, "executing_cell_id", lambda: "c1")
    shown = cell_run.shown_check(bridge)
    assert await shown() is True
    front.cells.pop(0)  # the user deleted the queued agent cell
    assert await shown() is False
    assert [r["op"] for r in front.requests] == ["find", "find"]


async def test_without_a_cell_id_or_with_an_older_front_end_it_never_blocks_a_prompt(monkeypatch) -> None:
    monkeypatch.setattr(cell_run, "executing_cell_id", lambda: None)
    assert await cell_run.shown_check(FakeFrontEnd().connect(Bridge()))() is True  # nbclient: no cell id
    monkeypatch.setattr(cell_run, "executing_cell_id", lambda: "c9")
    old = FakeFrontEnd(version=1)
    assert await cell_run.shown_check(old.connect(Bridge()))() is True and old.requests == []
