"""Undo while an agent turn still runs (real JupyterLab, headless Chromium): the user's Z takes away
the cell the turn just made while the next Allow waits; the next call's cell still becomes the turn's
cell below the agent cell, not an unmarked, unrun next-input cell saying the page does not answer."""

from __future__ import annotations

from .test_bridge_frontend import _open, _require_installed_bridge
from .test_cell_removal import _kind, _put, _run_all, _text, _wait
from .test_jupyterlab import browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks

pytestmark = _lab_marks

ASK = "%%agent\nWhich region has the largest total revenue in `sales`? Any missing values?"
LOAD = "%load_ext nbagent\nimport pandas as pd\nsales = pd.DataFrame({'region': ['north', 'south'], 'revenue': [2.0, 1.0]})"


def test_undo_of_the_turns_cell_while_allow_waits_keeps_the_next_cell_the_turns(browser, lab):  # noqa: F811
    _require_installed_bridge()
    name = _put(lab, "undo_while_running.ipynb", "python3", [LOAD, ASK, "print('mine')"])
    page = _open(browser, lab, name, "jupyterlab")
    _run_all(page)
    allow = page.locator("button:text-is('Allow'):enabled")
    allow.first.click(timeout=60_000)  # the first call: its cell appears below the agent cell
    _wait(page, lambda cs: any(_kind(c) == "code" for c in cs), "the first call's cell did not appear", idle=False)
    allow.first.wait_for(timeout=60_000)  # the second call asks
    page.evaluate("() => { window.__nb.content.mode = 'command'; window.__nb.content.activeCellIndex = 3; "
                  "window.__nb.content.activate(); }")
    page.keyboard.press("Escape")
    page.keyboard.press("z")  # Undo: the turn's first cell goes
    _wait(page, lambda cs: not any(_kind(c) == "code" for c in cs), "Undo did not take the cell away", idle=False)
    allow.first.click()
    cells = _wait(page, lambda cs: "mine" in _text(cs[-1]), "the run did not finish")
    assert [c["source"] for c in cells] == [LOAD, ASK, "sales.isna().sum()", "print('mine')"]
    assert _kind(cells[2]) == "code" and cells[2]["execution_count"] == cells[1]["execution_count"]
    assert "no notebook bridge answers" not in _text(cells[1])
    page.close()
