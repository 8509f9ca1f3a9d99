"""A notebook and its copy (same cell ids: what the file browser's Duplicate makes) open side by
side in one JupyterLab page, Run All in both at once: each notebook's agent cell asks in its own pane
and its code cells land in its own notebook, once, however the two kernels' requests interleave (the
page's one extension gets both; it must not route by cell id alone)."""

from __future__ import annotations

import time

import pytest

from .test_bridge_frontend import _open, _require_installed_bridge
from .test_cell_removal import MINE, _bytes, _put, _text
from .test_jupyterlab import browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_two_windows import ASKS  # no --allow: each of its two python calls asks

pytestmark = _lab_marks

VIEW = "(p) => [...window.jupyterapp.shell.widgets('main')].find(w => w.context && w.context.path === p)"


def _cells_of(page, path: str) -> list[dict]:
    return page.evaluate(f"(p) => ({VIEW})(p).content.model.sharedModel.cells.map(c => c.toJSON())", path)


def _run_all_of(page, path: str) -> None:
    page.evaluate(f"(p) => {{ window.jupyterapp.shell.activateById(({VIEW})(p).id); }}", path)
    page.wait_for_function("(p) => window.jupyterapp.shell.currentWidget.context.path === p", arg=path, timeout=10_000)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")  # not awaited


def _finished(cells: list[dict]) -> bool:
    return "done:" in _text(cells[1]) and cells[-1]["execution_count"] is not None


@pytest.mark.parametrize("allow", [False, True], ids=["asks", "allowed"])
def test_a_notebook_and_its_copy_run_at_once_in_one_page_each_get_their_own_cells(browser, lab, allow):  # noqa: F811
    _require_installed_bridge()
    agent = ASKS.replace("%%agent", "%%agent --allow python") if allow else ASKS
    name = _put(lab, f"side_by_side_{int(allow)}.ipynb", "python3", ["%load_ext nbagent", agent, MINE])
    page = _open(browser, lab, name, "jupyterlab")
    copy = page.evaluate("(p) => window.jupyterapp.serviceManager.contents.copy(p, '').then(m => m.path)", name)
    page.evaluate("(p) => { window.jupyterapp.commands.execute('docmanager:open', "
                  "{path: p, options: {mode: 'split-right'}}); }", copy)
    page.wait_for_function(f"(p) => {{ const w = ({VIEW})(p); const s = w && w.sessionContext; "
                           "return s && s.isReady && s.session.kernel.status === 'idle'; }", arg=copy, timeout=60_000)
    assert [c["id"] for c in _cells_of(page, name)] == [c["id"] for c in _cells_of(page, copy)]
    _run_all_of(page, name)
    _run_all_of(page, copy)
    deadline = time.monotonic() + 180
    while not all(_finished(_cells_of(page, p)) for p in (name, copy)):
        assert time.monotonic() < deadline, [[c["source"] for c in _cells_of(page, p)] for p in (name, copy)]
        allow_button = page.locator(".jp-Notebook button:text-is('Allow'):enabled")
        if allow_button.count():
            button = allow_button.first.element_handle()
            button.click()
            page.wait_for_function("(b) => !b.isConnected || b.disabled", arg=button, timeout=30_000)
        else:
            time.sleep(0.25)  # polled: the UI is another process
    for path in (name, copy):
        cells = _cells_of(page, path)
        assert [c["source"] for c in cells] == ["%load_ext nbagent", agent, "2 * 3", "4 * 5", MINE], path
        assert "my own cell" in _bytes(cells[-1])
    page.close()
