"""The same notebook open in two windows (two kernel connections on one kernel, no collaboration):
every page's extension gets the kernel's requests, yet an agent cell run in one window asks Allow /
Deny there, and its code cells land there, once (before: the other window answered first that the
cell was idle there, so every call was denied unasked, and its inserts went to the wrong page); and
an agent cell run in a console on the notebook's kernel asks there too."""

from __future__ import annotations

import pytest

from ..soak import SOAK
from .test_bridge_frontend import _open, _require_installed_bridge
from .test_cell_removal import CONFIGS, _answer_allows, _cells, _idle, _made, _put, _run_cell, _text, _wait
from .test_jupyterlab import browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks

pytestmark = _lab_marks

ASKS = "%%agent\nWhat is 2 * 3 and 4 * 5?"  # no --allow: each of its two python calls asks


@pytest.mark.parametrize("frontend, kernel", [CONFIGS[0], pytest.param(*CONFIGS[1], marks=SOAK)])
def test_an_agent_cell_run_in_one_of_two_windows_asks_and_lands_there(browser, lab, frontend, kernel):  # noqa: F811
    _require_installed_bridge()
    name = _put(lab, f"two_windows_{frontend}_{kernel}.ipynb", kernel, ["%load_ext nbagent", ASKS])
    running = _open(browser, lab, name, frontend)
    other = _open(browser, lab, name, frontend)  # opened before the run: it says hello to the same comm
    _run_cell(running, 0)
    _wait(running, lambda cs: cs[0]["execution_count"] is not None, "%load_ext did not run")
    _run_cell(running, 1)
    def unasked_denial() -> None:
        assert "nobody could see" not in _text(_cells(running)[1]), "a prompt was denied unasked"

    answered = _answer_allows(running, lambda: "done:" in _text(_cells(running)[1]) and _idle(running),
                              "the agent cell did not finish", before_each=unasked_denial)
    made = [c["source"] for c in _made(_cells(running))]
    assert answered == 2 and made == ["2 * 3", "4 * 5"], (answered, made)
    assert _made(_cells(other)) == []  # the other window applied none of it (its own copy of the file)
    running.close()
    other.close()


def test_an_agent_cell_run_in_a_console_on_the_notebooks_kernel_asks_there(browser, lab):  # noqa: F811
    """File > New Console for Notebook: the console shares the kernel and sends its cells' ids, but
    its cells are in no notebook; the notebook's page said "no such cell" and every call was denied
    unasked ("nobody could see Allow / Deny here") while the console could have shown the prompt."""
    _require_installed_bridge()
    name = _put(lab, "console_on_kernel.ipynb", "nbagent", ["%load_ext nbagent", "%%agent\nWhat is 2 * 3?"])
    page = _open(browser, lab, name, "jupyterlab")
    _run_cell(page, 0)
    _wait(page, lambda cs: cs[0]["execution_count"] is not None, "%load_ext did not run")
    _run_cell(page, 1)  # the notebook's page says hello: the bridge is connected
    page.locator(".jp-Notebook button:text-is('Allow'):enabled").first.click(timeout=60_000)
    _wait(page, lambda cs: "done:" in _text(cs[1]), "the notebook's agent cell did not finish")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:create-console')")
    prompt = page.locator(".jp-CodeConsole-promptCell .cm-content").first
    prompt.wait_for(timeout=60_000)
    prompt.click()
    page.keyboard.type("%%agent\nWhat is 4 * 5?")
    page.keyboard.press("Shift+Enter")
    console = page.locator(".jp-CodeConsole").first
    try:
        page.locator(".jp-CodeConsole button:text-is('Allow'):enabled").first.click(timeout=60_000)
        console.get_by_text("done:", exact=False).first.wait_for(timeout=60_000)
    except Exception:
        page.screenshot(path="/tmp/console_prompt_failure.png", full_page=True)
        raise
    text = console.inner_text()
    assert "nobody could see" not in text and "20" in text, text[-2000:]
    assert "is nbagent installed" not in text
    page.close()


def _views(page, name: str) -> list[str]:
    return page.evaluate("(n) => [...window.jupyterapp.shell.widgets('main')]"
                         ".filter(w => w.context && w.context.path === n).map(w => w.id)", name)


@pytest.mark.parametrize("close", ["second", "first"])
def test_an_agent_cell_run_after_closing_one_of_two_views_asks_and_lands_in_the_other(browser, lab, close):  # noqa: F811
    """JupyterLab's "New View for Notebook": both views share one document and one kernel connection,
    whose comm target the view opened last holds. Before: with the second view closed, the bridge
    answered from the closed view ("the notebook is not loaded yet"), so the agent's code went into
    one unmarked cell (never the agent's to replace again) under "no notebook bridge answers here"."""
    _require_installed_bridge()
    name = _put(lab, f"closed_view_{close}.ipynb", "python3", ["%load_ext nbagent", ASKS, "print('mine')"])
    page = _open(browser, lab, name, "jupyterlab")
    first = page.evaluate("() => window.__nb.id")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:clone')")
    page.wait_for_function("([n, f]) => [...window.jupyterapp.shell.widgets('main')]"
                           ".some(w => w.context && w.context.path === n && w.id !== f)", arg=[name, first])
    second = next(v for v in _views(page, name) if v != first)
    _run_cell(page, 0)  # in the view opened last, the current one: the kernel's comm opens now
    _wait(page, lambda cs: cs[0]["execution_count"] is not None, "%load_ext did not run")
    gone, kept = (second, first) if close == "second" else (first, second)
    page.evaluate("([g, k]) => { const ws = [...window.jupyterapp.shell.widgets('main')]; "
                  "ws.find(w => w.id === g).close(); window.__nb = ws.find(w => w.id === k); "
                  "window.jupyterapp.shell.activateById(k); }", [gone, kept])
    page.wait_for_function("(n) => [...window.jupyterapp.shell.widgets('main')]"
                           ".filter(w => w.context && w.context.path === n).length === 1", arg=name)
    _run_cell(page, 1)
    answered = _answer_allows(page, lambda: "done:" in _text(_cells(page)[1]) and _idle(page),
                              "the agent cell did not finish")
    cells = _cells(page)
    assert "no notebook bridge answers" not in _text(cells[1])
    assert answered == 2 and [c["source"] for c in _made(cells)] == ["2 * 3", "4 * 5"], (answered, cells)
    assert cells[-1]["source"] == "print('mine')" and len(cells) == 5
    page.close()
