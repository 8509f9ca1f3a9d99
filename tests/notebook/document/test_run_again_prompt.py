"""An agent cell run again while its prompt waited (Shift+Enter twice, Run All, or a run in a page
reloaded meanwhile): the page queues the next run and empties the cell, the prompt with it, though it
shows it running, so the prompt is given up and nothing is written into the cell the next run shows
in; but a run whose displays go to an ipywidgets ``Output`` elsewhere still asks there."""

from __future__ import annotations

import pytest

from nbagent.notebook.document import page

from .test_unseen_prompt import AGENT_SOURCE, BUNDLE, _after_a_failed_cell_under_run_all, _running


@pytest.fixture(autouse=True)
def in_a_kernel(monkeypatch) -> None:
    """The checks below run as in a kernel (the test process is plain Python)."""
    monkeypatch.setattr(page, "in_kernel", lambda: True)


async def test_a_prompt_whose_cell_was_run_again_while_it_waited_is_given_up(monkeypatch) -> None:
    """Shift+Enter again on the agent cell while its Allow / Deny waits: JupyterLab and Notebook 7
    queue a second run, empty the cell's outputs (the prompt with them) and show it running ([*]);
    the first run's later outputs go nowhere. Was: the page said "running", so the kernel waited
    Busy for ever on a prompt nobody could see, the second run queued behind it."""
    front, bridge = _after_a_failed_cell_under_run_all(monkeypatch)
    front.running.add("c1")
    shown = page.shown_check(bridge)
    assert await shown() is True
    front.cells[0]["outputs"] = []  # run again: emptied, and queued (still [*])
    assert await shown() is False


async def test_a_turn_whose_cell_was_queued_again_writes_no_transcript_into_it(monkeypatch) -> None:
    """The cell run again while its turn ran: the page emptied it and shows the next run there. Was:
    the turn's end wrote its transcript into the cell, which untrusts it (bridge writes never
    render trusted), so the next run's live view and its Allow / Deny showed as plain text: the
    kernel waited Busy on a prompt nobody could see."""
    front, bridge = _after_a_failed_cell_under_run_all(monkeypatch)
    front.running.add("c1")
    front.cells[0]["outputs"] = []
    assert await page.show_on_reloaded_page(bridge, BUNDLE) is False
    assert "replace" not in [r["op"] for r in front.requests] and front.cells[0]["outputs"] == []


async def test_a_prompt_whose_page_was_reloaded_and_the_cell_run_again_there_is_given_up(monkeypatch) -> None:
    """Reloaded (or closed and opened again) while Allow / Deny waited, then the agent cell run again
    in the new page before the kernel's next check: that page shows it queued ([*]), emptied, and
    never showed the old run's prompt. Was: "running", so shown: the kernel waited Busy for ever,
    the user's new run queued behind it. With collaboration the new page shares the running cell's
    outputs, the prompt among them: shown."""
    front, bridge = _running(monkeypatch)
    bridge._pages.add("page-a")  # page-a ran it and is gone
    bridge._on_data({"type": "hello", "version": 2}, "page-b")
    monkeypatch.setattr(page, "executing_client", lambda: "page-a")
    front.running.add("c1")
    shown = page.shown_check(bridge)
    assert await shown() is True  # the running cell's outputs (shared, or not yet emptied) are there
    front.cells[0]["outputs"] = []  # run again in page-b
    assert await shown() is False


async def test_a_prompt_shown_in_an_output_widget_of_another_cell_is_asked(monkeypatch) -> None:
    """``with out:`` around the agent call, ``out`` an ipywidgets Output shown in another cell: the
    front-end puts the run's live view, Allow / Deny with it, into that widget, so the running cell
    itself has no outputs. Was (nb24): taken as a cell run again while it waited: every call denied
    unasked ("nobody could see Allow / Deny"), with the prompt on screen."""
    from ipywidgets import Output

    front, bridge = _after_a_failed_cell_under_run_all(monkeypatch)
    monkeypatch.setattr(page, "executing_request", lambda: {"header": {"msg_id": "run-1"},
                                                            "content": {"code": AGENT_SOURCE}})
    front.running.add("c1")
    front.cells[0]["outputs"] = []
    out = Output()
    try:
        out.msg_id = "run-1"  # as ``with out:`` sets it, for the request running now
        assert await page.shown_check(bridge)() is True
        out.msg_id = ""  # the with block left: the displays go to the cell again, which has none
        assert await page.shown_check(bridge)() is False
    finally:
        out.close()
