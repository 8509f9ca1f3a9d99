"""Tab in a real JupyterLab 4 (headless Chromium) on ``%agent`` / ``%%agent`` lines: the completer
lists the commands and whole options; a Python cell's Tab is IPython's own, and the prompt text of
an ``%%agent`` cell gets no ``%agent`` command. In JupyterLab on python3 and in Notebook 7 on the
nbagent kernel, and again after ``%reload_ext``."""

from __future__ import annotations

import pytest

from .test_cell_removal import _put, _run_cell, _wait
from .test_jupyterlab import browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_reload import _ready

pytestmark = _lab_marks

CELLS = ["%load_ext nbagent\nprinted_value = 1", "%agent co", "%%agent --max-b\nWhat is 2 + 2?", "printed_v",
         "%%agent\n%agent co", "%reload_ext nbagent"]
URLS = {"jupyterlab": "lab/tree/{}?", "notebook": "notebooks/{}?"}


def _tab(page, index: int, line: int, column: int, accept: bool = False) -> list[str] | str:
    """The completer's items after Tab with the cursor at (line, column) of cell ``index``; with
    ``accept`` (or when it inserted the one completion itself), the cell's source after it."""
    before = page.evaluate("([i, l, c]) => { const nb = window.__nb.content; nb.activeCellIndex = i; nb.mode = 'edit'; "
                           "const e = nb.activeCell.editor; e.focus(); e.setCursorPosition({line: l, column: c}); "
                           "return nb.activeCell.model.sharedModel.getSource(); }", [index, line, column])
    page.keyboard.press("Tab")
    page.wait_for_function(  # the completer's list shown, or the one completion inserted
        "(before) => document.querySelector('.jp-Completer:not(.lm-mod-hidden) .jp-Completer-item') !== null"
        " || window.__nb.content.activeCell.model.sharedModel.getSource() !== before", arg=before, timeout=30_000)
    items = page.eval_on_selector_all(".jp-Completer:not(.lm-mod-hidden) .jp-Completer-item .jp-Completer-match",
                                      "els => els.map(e => e.textContent)")
    page.keyboard.press("Enter" if accept and items else "Escape")
    if items and not accept:
        return [str(i) for i in items]
    return str(page.evaluate("() => window.__nb.content.activeCell.model.sharedModel.getSource()"))


@pytest.mark.parametrize(("frontend", "kernel"), [("jupyterlab", "python3"), ("notebook", "nbagent")])
def test_tab_on_agent_lines_completes_there_and_only_there(browser, lab, frontend: str, kernel: str):  # noqa: F811
    base, token = lab
    name = _put(lab, f"tab_completion_{frontend}.ipynb", kernel, CELLS)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{base}/{URLS[frontend].format(name)}token={token}")
    _ready(page, name)
    _run_cell(page, 0)
    _wait(page, lambda cells: cells[0].get("execution_count") is not None, "the extension loaded")
    assert sorted(_tab(page, 1, 0, 9)) == ["compact", "config", "context", "cost"]
    # the option replaced whole (IPython's splitter would take "b" and give "--max---max-budget")
    assert _tab(page, 2, 0, 15, accept=True) == "%%agent --max-budget\nWhat is 2 + 2?"
    assert "printed_value" in _tab(page, 3, 0, 9)  # a Python cell: IPython's own
    assert "cost" not in _tab(page, 4, 1, 9)  # the prompt text of an %%agent cell: no command
    _run_cell(page, 5)
    _wait(page, lambda cells: cells[5].get("execution_count") is not None, "the extension reloaded")
    assert sorted(_tab(page, 1, 0, 9)) == ["compact", "config", "context", "cost"]  # once each after a reload
    page.close()
