"""A prompt nobody can see is never waited on: when the cell running the agent left the notebook
(deleted while Run All had it queued), a permission is denied with a notice and a failed request
is cancelled, instead of the kernel waiting Busy for ever; and a prompt already shown is given up
the same way when its page is reloaded or closed and opened again (the cell is there, idle: the
new page never ran it, so it shows no prompt)."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from nbagent.engine.contracts import events as ev
from nbagent.engine.contracts.permissions import Deny, PermissionRequest
from nbagent.notebook import waiting
from nbagent.notebook.document import bridge as bridge_mod
from nbagent.notebook.document import page
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.view import AgentView
from nbagent.notebook.view.questions import LOST_PROMPT, UNSEEN_PROMPT

from .fake_frontend import FakeFrontEnd


async def gone() -> bool:
    return False


@pytest.fixture(autouse=True)
def in_a_kernel(monkeypatch) -> None:
    """The checks below run as in a kernel (the test process is plain Python)."""
    monkeypatch.setattr(page, "in_kernel", lambda: True)


async def test_outside_a_kernel_no_prompt_is_waited_on(monkeypatch) -> None:
    # Plain IPython (a terminal, a script driving a shell): no page can show Allow / Deny.
    monkeypatch.setattr(page, "in_kernel", lambda: False)
    assert await page.shown_check(FakeFrontEnd().connect(Bridge()))() is False


async def test_a_permission_asked_from_a_cell_no_longer_in_the_notebook_is_denied_at_once() -> None:
    view = AgentView(cell_shown=gone)
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": "1+1"}))
    request = PermissionRequest("t1", "python", {"code": "1+1"}, False, 1, "python is not read-only")
    outcome = await asyncio.wait_for(view.ask_permission("python", {"code": "1+1"}, request), 5)
    assert isinstance(outcome, Deny) and outcome.reason == UNSEEN_PROMPT and outcome.ends_turn  # the turn ends
    with pytest.raises(LookupError):
        _ = view.permission  # no prompt was shown, so none waits
    assert "deleted while it was queued" in view.transcript()


async def test_a_failed_request_from_a_cell_no_longer_in_the_notebook_is_cancelled() -> None:
    view = AgentView(cell_shown=gone)
    failed = ev.ApiRequestFailed(error_kind="api_error", message="boom")
    assert await asyncio.wait_for(view.ask_api_failure(failed), 5) == "cancel"


async def test_the_check_asks_the_front_end_for_the_running_cell(monkeypatch) -> None:
    front = FakeFrontEnd([{"cell_type": "code", "source": "%%agent\nq"}, {"cell_type": "code", "source": "x"}])
    bridge = front.connect(Bridge())
    monkeypatch.setattr(page, "executing_cell_id", lambda: "c1")
    front.running.add("c1")  # JupyterLab marks the cell it runs (and the ones it queued) [*]
    shown = page.shown_check(bridge)
    assert await shown() is True
    front.cells.pop(0)  # the user deleted the queued agent cell
    assert await shown() is False
    assert [r["op"] for r in front.requests] == ["find", "find"]


async def test_the_check_says_unseen_once_the_page_showing_the_cell_no_longer_runs_it(monkeypatch) -> None:
    front = FakeFrontEnd([{"cell_type": "code", "source": "%%agent\nq"}])
    bridge = front.connect(Bridge())
    monkeypatch.setattr(page, "executing_cell_id", lambda: "c1")
    front.running.add("c1")
    shown = page.shown_check(bridge)
    assert await shown() is True
    front.running.clear()  # reloaded: the page loaded the notebook from disk, the cell idle in it
    assert await shown() is False


class Flips:
    """Shown for the check before the prompt, gone at the first check while it waits."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self) -> bool:
        self.asked += 1
        return self.asked == 1


async def test_a_prompt_whose_page_was_reloaded_while_it_waited_is_denied_with_a_notice(monkeypatch) -> None:
    monkeypatch.setattr(waiting, "SHOWN_EVERY_S", 0.05)
    flips = Flips()
    view = AgentView(cell_shown=flips)
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": "1+1"}))
    request = PermissionRequest("t1", "python", {"code": "1+1"}, False, 1, "python is not read-only")
    outcome = await asyncio.wait_for(view.ask_permission("python", {"code": "1+1"}, request), 5)
    assert isinstance(outcome, Deny) and outcome.reason == LOST_PROMPT and outcome.ends_turn and flips.asked == 2
    assert view.permission.outcome == outcome  # the prompt was shown, then closed as denied
    assert "reloaded or closed" in view.transcript()


async def test_retry_cancel_whose_page_was_reloaded_is_cancelled(monkeypatch) -> None:
    monkeypatch.setattr(waiting, "SHOWN_EVERY_S", 0.05)
    view = AgentView(cell_shown=Flips())
    failed = ev.ApiRequestFailed(error_kind="api_error", message="boom")
    assert await asyncio.wait_for(view.ask_api_failure(failed), 5) == "cancel"


async def test_without_a_cell_id_or_with_an_older_front_end_it_never_blocks_a_prompt(monkeypatch) -> None:
    monkeypatch.setattr(page, "executing_cell_id", lambda: None)
    assert await page.shown_check(FakeFrontEnd().connect(Bridge()))() is True  # nbclient: no cell id
    monkeypatch.setattr(page, "executing_cell_id", lambda: "c9")
    old = FakeFrontEnd(version=1)
    assert await page.shown_check(old.connect(Bridge()))() is True and old.requests == []


async def test_a_prompt_from_a_console_on_the_notebooks_kernel_is_shown_not_denied(monkeypatch) -> None:
    # New Console for Notebook: the console shares the kernel and sends its cells' ids too, but has
    # no bridge; the notebook's page says it has no such cell, which is no sign the prompt is gone.
    front = FakeFrontEnd([{"cell_type": "code", "source": "%%agent\nq"}])
    bridge = front.connect(Bridge())
    bridge._on_data({"type": "hello", "version": 2, "frontend": "jupyterlab", "path": "a.ipynb"}, "page-a")
    monkeypatch.setattr(page, "executing_cell_id", lambda: "console-cell")
    monkeypatch.setattr(page, "executing_client", lambda: "console-1")
    assert await page.shown_check(bridge)() is True
    assert front.requests == []  # the page was not asked about a cell it cannot have
    monkeypatch.setattr(page, "executing_client", lambda: "page-a")  # the page's own cell, deleted
    assert await page.shown_check(bridge)() is False


class _TwoPages:
    """Two windows on one notebook: each page's extension gets every request on the comm; the
    window that did not run the cell answers first (it says the cell is idle there)."""

    comm_id = "two-pages"

    def __init__(self, bridge: Bridge, running: FakeFrontEnd, other: FakeFrontEnd) -> None:
        self.bridge, self.pages = bridge, (("page-b", other), ("page-a", running))

    def send(self, data: dict[str, object]) -> None:
        for session, front in self.pages:
            if data.get("client") in (None, session):  # what the extension's addressedHere does
                front.requests.append(dict(data))
                self.bridge._on_data(front.reply(dict(data)), session)

    def close(self) -> None:
        pass


async def test_with_the_notebook_open_in_two_windows_only_the_running_page_is_asked(monkeypatch) -> None:
    cells = [{"cell_type": "code", "source": "%%agent\nq"}]
    running, other = FakeFrontEnd(cells), FakeFrontEnd(cells)
    running.running.add("c1")  # [*] in the window that ran it; idle in the other one
    bridge = Bridge()
    for session in ("page-a", "page-b"):
        bridge._on_data({"type": "hello", "version": 2, "frontend": "jupyterlab", "path": "a.ipynb"}, session)
    bridge._comm = _TwoPages(bridge, running, other)
    monkeypatch.setattr(page, "executing_cell_id", lambda: "c1")
    monkeypatch.setattr(bridge_mod, "executing_client", lambda: "page-a")
    bridge_mod.address_cell()  # the pre_run_cell hook of the cell the page-a window ran
    assert await page.shown_check(bridge)() is True
    assert other.requests == [] and running.requests[0]["client"] == "page-a"


def test_a_reply_from_a_page_the_request_was_not_addressed_to_is_ignored(monkeypatch) -> None:
    contextvars.copy_context().run(_replies_from_two_pages, monkeypatch)  # the cell's page stays in here


def _replies_from_two_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    bridge = Bridge()
    for session in ("page-a", "page-b"):
        bridge._on_data({"type": "hello", "version": 2}, session)
    sent: list[dict[str, object]] = []
    bridge._comm = type("Comm", (), {"comm_id": "c", "send": lambda self, d: sent.append(d), "close": lambda self: None})()
    monkeypatch.setattr(bridge_mod, "executing_client", lambda: "page-a")
    bridge_mod.address_cell()
    decision = bridge._send("read", {})
    bridge._on_data({"type": "reply", "id": sent[0]["id"], "ok": True, "result": {"path": "b"}}, "page-b")
    assert not decision.resolved  # an older extension in the other window answered: not taken
    bridge._on_data({"type": "reply", "id": sent[0]["id"], "ok": True, "result": {"path": "a"}}, "page-a")
    assert decision.value["result"] == {"path": "a"}
    monkeypatch.setattr(bridge_mod, "executing_client", lambda: "reloaded-page")
    bridge_mod.address_cell()  # a page that said no hello on this comm: whichever page shows it now
    bridge._send("read", {})
    assert "client" not in sent[1]


BUNDLE = {"text/plain": "agent: 23 + 17 = 40", "text/html": "<div>23 + 17 = 40</div>"}
AGENT_SOURCE = "%%agent --allow python\nwhat is 23 + 17?"


def _running(monkeypatch: pytest.MonkeyPatch, source: str = AGENT_SOURCE) -> tuple[FakeFrontEnd, Bridge]:
    """A page showing the agent cell ``c1``, which the kernel runs with ``AGENT_SOURCE``."""
    front = FakeFrontEnd([{"cell_type": "code", "source": source, "outputs": [{"output_type": "stream",
                                                                              "name": "stdout", "text": "saved before"}]}])
    monkeypatch.setattr(page, "executing_cell_id", lambda: "c1")
    monkeypatch.setattr(page, "executing_request", lambda: {"content": {"code": AGENT_SOURCE}})
    return front, front.connect(Bridge())


async def test_a_turn_that_ends_after_a_reload_writes_its_transcript_into_the_agent_cell(monkeypatch) -> None:
    # The page was reloaded while the turn ran: the cell is there, idle (the new page never ran it),
    # and the turn's outputs go to the page that did: the new page would keep what was saved before.
    front, bridge = _running(monkeypatch)
    assert await page.show_on_reloaded_page(bridge, BUNDLE) is True
    outputs = front.cells[0]["outputs"]
    assert outputs[0]["text"] == page.RELOADED_NOTE
    assert outputs[1] == {"output_type": "display_data", "data": BUNDLE, "metadata": {}}


async def test_a_turn_whose_page_still_runs_the_cell_writes_nothing(monkeypatch) -> None:
    front, bridge = _running(monkeypatch)
    front.running.add("c1")  # the page that ran the cell shows the live view, and keeps it
    assert await page.show_on_reloaded_page(bridge, BUNDLE) is False
    assert [r["op"] for r in front.requests] == ["find"]
    assert front.cells[0]["outputs"][0]["text"] == "saved before"


async def test_an_agent_cell_edited_or_deleted_meanwhile_gets_no_transcript(monkeypatch) -> None:
    front, bridge = _running(monkeypatch, source="%%agent\nanother question, typed in the new page")
    assert await page.show_on_reloaded_page(bridge, BUNDLE) is False
    assert front.cells[0]["outputs"][0]["text"] == "saved before"
    front.cells.clear()
    assert await page.show_on_reloaded_page(bridge, BUNDLE) is False
    assert "replace" not in [r["op"] for r in front.requests]


def _after_a_failed_cell_under_run_all(monkeypatch: pytest.MonkeyPatch) -> tuple[FakeFrontEnd, Bridge]:
    """The page that runs the agent cell (session ``page-a``) is there and said hello, but shows
    the cell idle: JupyterLab marks every cell Run All queued idle once one fails, and runs them on
    when the failed one is tagged ``raises-exception`` (as the agent's failed attempts are)."""
    front, bridge = _running(monkeypatch)
    bridge._on_data({"type": "hello", "version": 2}, "page-a")
    monkeypatch.setattr(page, "executing_client", lambda: "page-a")
    return front, bridge


async def test_a_prompt_after_a_raises_exception_cell_under_run_all_is_shown(monkeypatch) -> None:
    # Was: denied without asking ("a page reloaded or closed; …"), in the page that showed it.
    front, bridge = _after_a_failed_cell_under_run_all(monkeypatch)
    assert await page.shown_check(bridge)() is True
    # its outputs (the prompt) are there: the find says so, with no read of the whole notebook
    assert [r["op"] for r in front.requests] == ["find"]


async def test_an_older_front_ends_find_has_the_notebook_read_for_the_cells_outputs(monkeypatch) -> None:
    front, bridge = _after_a_failed_cell_under_run_all(monkeypatch)
    found_only = front.op_find
    monkeypatch.setattr(front, "op_find", lambda r: {k: v for k, v in found_only(r).items() if k in ("index", "running")})
    shown = page.shown_check(bridge)
    assert await shown() is True
    assert [r["op"] for r in front.requests] == ["find", "read"]
    front.cells[0]["outputs"] = []  # cleared
    assert await shown() is False


async def test_a_prompt_whose_outputs_the_user_cleared_while_it_waited_is_given_up(monkeypatch) -> None:
    """Edit > Clear Outputs (of the cell, or of all cells) while Allow / Deny waits: JupyterLab and
    Notebook 7 empty the cell's outputs and show it idle ([ ]) though the kernel still runs it, so
    the prompt is gone from the page that ran the cell. Was: that page still answered, so the kernel
    waited Busy for ever on a prompt nobody could see."""
    front, bridge = _after_a_failed_cell_under_run_all(monkeypatch)
    shown = page.shown_check(bridge)
    assert await shown() is True
    front.cells[0]["outputs"] = []  # cleared
    assert await shown() is False


async def test_a_turn_after_a_raises_exception_cell_under_run_all_is_not_said_reloaded(monkeypatch) -> None:
    # Was: its live view replaced by the transcript under "The page was reloaded …", never reloaded.
    # Its outputs follow the run there: the live view was replaced in place by the transcript.
    front, bridge = _after_a_failed_cell_under_run_all(monkeypatch)
    live = [{"output_type": "display_data", "data": {"text/plain": BUNDLE["text/plain"].splitlines(True)},
             "metadata": {}}]
    front.cells[0]["outputs"] = live
    assert await page.show_on_reloaded_page(bridge, BUNDLE) is False
    assert front.cells[0]["outputs"] == live


async def test_an_agent_cell_moved_while_it_ran_gets_its_transcript_written(monkeypatch) -> None:
    """Dragged (or cut and pasted) while Allow waited: JupyterLab makes it a new cell, idle, whose
    outputs stop at the move; the turn's end went to the old one. Was: the saved notebook kept only
    the live view's first line ("nbagent · … session cost $0.0000"), the answer lost from it."""
    front, bridge = _after_a_failed_cell_under_run_all(monkeypatch)
    front.cells[0]["outputs"] = [{"output_type": "display_data", "metadata": {},
                                  "data": {"text/plain": "nbagent · claude · session cost $0.0000"}}]
    assert await page.show_on_reloaded_page(bridge, BUNDLE) is True
    outputs = front.cells[0]["outputs"]
    assert outputs[0]["text"] == page.MOVED_NOTE
    assert outputs[1] == {"output_type": "display_data", "data": BUNDLE, "metadata": {}}


async def test_a_reloaded_page_is_a_new_session_and_gets_the_transcript(monkeypatch) -> None:
    front, bridge = _running(monkeypatch)
    bridge._pages.add("page-a")  # page-a, which ran it, said hello on an earlier comm, and is gone
    bridge._on_data({"type": "hello", "version": 2}, "page-b")  # the new page
    monkeypatch.setattr(page, "executing_client", lambda: "page-a")
    assert await page.shown_check(bridge)() is False
    assert await page.show_on_reloaded_page(bridge, BUNDLE) is True


async def test_an_agent_cell_deleted_and_brought_back_while_it_ran_gets_its_transcript_written(monkeypatch) -> None:
    """dd, then z, while Allow waited: JupyterLab brings the cell back with its id, its outputs as
    they were (the live view, whose prompt still works) and its running state, but the turn's end
    goes to the deleted cell's outputs. Was: "still running there", nothing written, and the saved
    notebook kept the live view's first line only, the answer lost from it."""
    front, bridge = _after_a_failed_cell_under_run_all(monkeypatch)
    front.running.add("c1")
    front.cells[0]["outputs"] = [{"output_type": "display_data", "metadata": {},
                                  "data": {"text/plain": "nbagent · claude · session cost $0.0000"}}]
    assert await page.show_on_reloaded_page(bridge, BUNDLE) is True
    outputs = front.cells[0]["outputs"]
    assert outputs[0]["text"] == page.MOVED_NOTE
    assert outputs[1] == {"output_type": "display_data", "data": BUNDLE, "metadata": {}}


async def test_a_running_cell_whose_live_view_became_the_transcript_is_left_as_it_is(monkeypatch) -> None:
    front, bridge = _after_a_failed_cell_under_run_all(monkeypatch)
    front.running.add("c1")
    live = [{"output_type": "display_data", "data": dict(BUNDLE), "metadata": {}}]
    front.cells[0]["outputs"] = live
    assert await page.show_on_reloaded_page(bridge, BUNDLE) is False
    assert front.cells[0]["outputs"] == live


async def _no_page(self: Bridge) -> bool:
    return False  # the comm reopened, and no page said hello: every tab of the notebook is closed


async def test_a_prompt_whose_every_tab_was_closed_is_denied_once_no_page_answered_for_a_while(monkeypatch) -> None:
    # The spec: no prompt waits where nobody can see it. With the notebook's tabs closed, no page
    # answers the check, and the kernel stayed Busy on Allow / Deny until the notebook was opened again.
    monkeypatch.setattr(waiting, "SHOWN_EVERY_S", 0.02)
    monkeypatch.setattr(waiting, "NO_PAGE_S", 0.2)
    monkeypatch.setattr(page, "executing_cell_id", lambda: "c1")
    monkeypatch.setattr(Bridge, "reconnect", _no_page)
    front = FakeFrontEnd([{"cell_type": "code", "source": "%%agent\nq"}])
    bridge = front.connect(Bridge())
    front.running.add("c1")
    answered = front.op_find

    def then_closed(r: dict) -> dict:  # the check before the prompt shows is answered; then the tab closes
        front.answer, bridge._failed = False, True  # its next request goes unanswered (as BridgeUnavailable marks it)
        return answered(r)

    monkeypatch.setattr(front, "op_find", then_closed)
    view = AgentView(cell_shown=page.shown_check(bridge))
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": "1+1"}))
    request = PermissionRequest("t1", "python", {"code": "1+1"}, False, 1, "python is not read-only")

    outcome = await asyncio.wait_for(view.ask_permission("python", {"code": "1+1"}, request), 5)

    assert isinstance(outcome, Deny) and outcome.reason == LOST_PROMPT and "reloaded or closed" in view.transcript()


async def test_a_page_that_answers_again_within_the_bound_keeps_the_prompt(monkeypatch) -> None:
    monkeypatch.setattr(waiting, "NO_PAGE_S", 60.0)
    monkeypatch.setattr(page, "executing_cell_id", lambda: "c1")
    monkeypatch.setattr(Bridge, "reconnect", _no_page)
    front = FakeFrontEnd([{"cell_type": "code", "source": "%%agent\nq"}])
    bridge = front.connect(Bridge())
    front.running.add("c1")
    shown = page.shown_check(bridge)
    bridge._failed = True
    assert await shown() is True  # no page now: a reload or a dropped connection may come back
    bridge._failed = False
    assert await shown() is True


async def test_a_later_prompt_is_not_given_up_at_once_for_an_unanswered_check_long_before(monkeypatch) -> None:
    # Under load the page missed one check of a first prompt (its hello came late); the user then
    # clicked Allow, and the turn went on for minutes. The next prompt's first check is missed too
    # (one slow hello): no page has been unanswered for NO_PAGE_S (a click came in between), yet the
    # streak begun at the first prompt denied the second prompt at once, while the user looked at it.
    clock = [1000.0]
    monkeypatch.setattr(page.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(page, "executing_cell_id", lambda: "c1")
    monkeypatch.setattr(Bridge, "reconnect", _no_page)
    front = FakeFrontEnd([{"cell_type": "code", "source": "%%agent\nq"}])
    bridge = front.connect(Bridge())
    front.running.add("c1")
    shown = page.shown_check(bridge)  # one per agent cell's view: every prompt of its turn asks it
    bridge._failed = True
    assert await shown() is True  # the first prompt's check: unanswered, the prompt is kept
    clock[0] += 300.0  # Allow clicked; the tool ran for five minutes; no check ran meanwhile
    assert await shown() is True  # the next prompt's first check, unanswered once
