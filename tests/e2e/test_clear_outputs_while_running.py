"""Edit > Clear Outputs on a running agent cell (JupyterLab 4, headless Chromium): the page shows the
cell idle with no outputs, so its Allow / Deny is gone while the kernel still runs the turn. The
kernel gives the prompt up (denied) and the turn ends there; the agent did not do what was asked, so
the cell fails like any failed cell: Run All stops at it, and the line says why and what to do."""

from __future__ import annotations

from .test_bridge_frontend import _open, _require_installed_bridge
from .test_cell_removal import MINE, _put, _run_all, _text, _wait
from .test_jupyterlab import browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_two_windows import ASKS

pytestmark = _lab_marks


def test_clear_outputs_while_allow_waits_fails_the_agent_cell_and_run_all_stops(browser, lab):  # noqa: F811
    _require_installed_bridge()
    name = _put(lab, "clear_outputs_while_asking.ipynb", "python3", ["%load_ext nbagent", ASKS, MINE])
    page = _open(browser, lab, name, "jupyterlab")
    _run_all(page)
    page.locator("button:text-is('Allow'):enabled").first.wait_for(timeout=90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    # The turn ends by itself (the prompt is given up); its failure comes back into the cell.
    cells = _wait(page, lambda cs: any(o.get("output_type") == "error" for o in cs[1]["outputs"])
                  or "my own cell" in _text(cs[2]), "the agent cell never ended", 120)
    agent = _text(cells[1])
    errors = [o for o in cells[1]["outputs"] if o.get("output_type") == "error"]
    assert errors and "outputs" in agent and "cleared" in agent, agent[-1500:]
    assert "my own cell" not in _text(cells[2])  # Run All stopped at the failed cell
    page.close()
