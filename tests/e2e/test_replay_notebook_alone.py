"""The record travels with the notebook, in real JupyterLab and Notebook 7 (headless Chromium): an
agent cell run live gets its signed record in its metadata through the bridge; saved, with its
``.nbagent/`` folder deleted (the ``.ipynb`` alone, as emailed or committed) and the kernel
restarted, Run All replays the agent cell from the metadata the front-end sends with it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .test_agent_cells import _text, _wait
from .test_bridge_frontend import _kernel, _open, _require_installed_bridge, _wait_saved
from .test_jupyterlab import SHOTS, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import _put_notebook

pytestmark = _lab_marks

RUN_ALL = "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }"


def _agent(cells: list[dict]) -> dict:
    return next(c for c in cells if c["source"].startswith("%%agent"))


@pytest.mark.parametrize("frontend", ["jupyterlab", "notebook"])
def test_the_ipynb_alone_replays_from_its_agent_cells_metadata(browser, lab, frontend):  # noqa: F811
    _require_installed_bridge()
    name = _put_notebook(lab, f"alone_{frontend}.ipynb", "python3",
                         ["%load_ext nbagent\n%config AgentMagics.allow = ['python']",
                          "%%agent\nwhat is 17 * 23? use python"])
    page = _open(browser, lab, name, frontend)
    page.evaluate(RUN_ALL)
    cells = _wait(page, lambda cs: (_agent(cs)["meta"] or {}).get("record"), "no record in the agent cell")
    assert "391" in _text(_agent(cells)["outputs"])

    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    _wait_saved(page, name, lambda nb: any("record" in (c.metadata.get("nbagent") or {}) for c in nb.cells))
    page.evaluate("() => window.__nb.sessionContext.restartKernel()")
    page.wait_for_function("() => window.__nb.sessionContext.session.kernel.status === 'idle'", timeout=60_000)
    root = _kernel(page, "import os", "os.getcwd()")  # the notebook's folder, where its .nbagent/ is
    shutil.rmtree(Path(root) / ".nbagent")  # the notebook alone

    page.evaluate(RUN_ALL)
    # The replay's header is shown first and the recorded answer after it: wait for both.
    cells = _wait(page, lambda cs: all(part in _text(_agent(cs)["outputs"]) for part in ("replayed: session", "391")),
                  "Run All did not replay the recorded answer")

    shown = _text(_agent(cells)["outputs"])
    assert "no recorded answer" not in shown
    assert "recorded by someone else" not in shown  # the signature survived the front-end's JSON round trips
    assert _kernel(page, "import nbagent.notebook.magics as _m", "_m.active_magics().current is None") is True
    assert not (Path(root) / ".nbagent" / "sessions").exists()  # nothing asked, nothing recorded
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"replay_notebook_alone_{frontend}.png"), full_page=True)
    page.close()
