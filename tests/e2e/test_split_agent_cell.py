"""A split of an agent-made cell (Ctrl+Shift+- in edit mode, JupyterLab's own key) in real JupyterLab
(headless Chromium): both halves are the user's now (one has a new id, the other other text), so a re-run
of the agent cell and a rollback keep them byte for byte, and the user's own cell below too."""

from __future__ import annotations

import pytest

from . import test_cell_removal as removal
from .test_bridge_frontend import _open, _require_installed_bridge
from .test_jupyterlab import browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks

pytestmark = _lab_marks

ASK = "%%agent --allow python\nWhat is 2 * 3 and 4 * 5?"


def _split_at(page, index: int, offset: int) -> None:
    """Click into the cell's editor, put the cursor ``offset`` characters in, press Ctrl+Shift+-."""
    page.evaluate("(i) => { window.__nb.content.activeCellIndex = i; }", index)
    editor = page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+Home")
    for _ in range(offset):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Control+Shift+Minus")


@pytest.mark.parametrize("frontend", ["jupyterlab"])
def test_the_halves_of_a_split_agent_cell_survive_a_re_run_and_a_rollback(browser, lab, frontend):  # noqa: F811
    _require_installed_bridge()
    name = removal._put(lab, f"split_{frontend}.ipynb", "python3", ["%load_ext nbagent", ASK, removal.MINE])
    page = _open(browser, lab, name, frontend)
    removal._run_all(page)
    removal._wait(page, lambda cs: len(removal._made(cs)) == 2 and "my own cell" in removal._text(cs[-1])
                  and cs[-1]["execution_count"] is not None, "Run All did not finish")
    _split_at(page, 3, 2)  # `4 * 5` → `4 ` and `* 5`
    cells = removal._wait(page, lambda cs: len(cs) == 6, "the split did not happen")
    assert [c["source"] for c in cells[3:5]] == ["4 ", "* 5"]
    halves = {c["id"]: removal._bytes(c) for c in cells[3:5]}
    mine = removal._bytes(cells[-1])

    removal._run_cell(page, 1)  # the agent cell again: its earlier run's cells go, the halves are the user's
    cells = removal._wait(page, lambda cs: any(c["metadata"]["nbagent"]["turn"] == 2 for c in removal._made(cs))
                          and "done:" in removal._text(cs[1]), "the re-run did not finish")
    assert {c["id"]: removal._bytes(c) for c in cells if c["id"] in halves} == halves
    assert "2 cell(s) of this cell's earlier run kept in the notebook" in removal._text(cells[1])
    assert removal._bytes(next(c for c in cells if c["source"] == removal.MINE)) == mine

    at = removal._append(page, "%agent rollback 0")
    removal._run_cell(page, at)
    cells = removal._wait(page, lambda cs: "rolled back" in removal._text(cs[-1]), "the rollback did not answer")
    assert "2 agent cell(s) removed from the notebook; 2 kept" in removal._text(cells[-1])
    assert {c["id"]: removal._bytes(c) for c in cells if c["id"] in halves} == halves
    assert removal._bytes(next(c for c in cells if c["source"] == removal.MINE)) == mine

    # Undo (Z in command mode) after the rollback brings the turn's cells back; the halves stay as they were.
    page.evaluate("() => { window.__nb.content.mode = 'command'; window.__nb.content.activate(); }")
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    cells = removal._wait(page, lambda cs: "2 * 3" in [c["source"] for c in cs], "Undo did not bring them back", timeout=30)
    assert {c["id"]: removal._bytes(c) for c in cells if c["id"] in halves} == halves
    page.close()
