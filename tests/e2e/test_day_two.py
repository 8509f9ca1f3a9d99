"""Day two in real JupyterLab (headless Chromium): the notebook of day one, whose first agent cell
set the session's window and budget cap, is Restart & Run All'd (its answers replay), and the user
goes on with a new question. That question runs in the session the first cell set — its
``--window`` and ``--max-session-budget`` — as it did on day one, not on the defaults.
"""

from __future__ import annotations

import pytest

from . import test_cell_removal as removal
from .test_bridge_frontend import _kernel, _open, _require_installed_bridge, _wait_saved
from .test_day_three import _restart_run_all
from .test_jupyterlab import browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks

pytestmark = _lab_marks

FIRST = "%%agent --allow python --window 4000 --max-session-budget 0.5\nwhat is 17 * 23? use python"
NEXT = "%%agent\nnow add 5 to it with python"


def _agent_cell(cells: list[dict], source: str) -> dict:
    return next(c for c in cells if "".join(c.get("source") or "") == source)


@pytest.mark.parametrize("frontend", ["jupyterlab", "notebook"])
def test_a_new_question_after_restart_and_run_all_keeps_the_window_and_cap_the_first_cell_set(
        browser, lab, frontend):  # noqa: F811
    _require_installed_bridge()
    name = removal._put(lab, f"day2_window_{frontend}.ipynb", "python3", ["%load_ext nbagent", FIRST, removal.MINE])
    page = _open(browser, lab, name, frontend)
    removal._run_all(page)
    removal._wait(page, lambda cs: "■ done" in removal._text(_agent_cell(cs, FIRST))
                  and "my own cell" in removal._text(cs[-1]), "the live turn did not finish")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    _wait_saved(page, name, lambda nb: any("record" in (c.metadata.get("nbagent") or {}) for c in nb.cells))

    _restart_run_all(page)
    removal._wait(page, lambda cs: "replayed: session" in removal._text(_agent_cell(cs, FIRST))
                  and "my own cell" in removal._text(cs[-1]), "Restart & Run All did not replay")
    removal._run_cell(page, removal._append(page, NEXT))
    cells = removal._wait(page, lambda cs: "■ done" in removal._text(_agent_cell(cs, NEXT)),
                          "the new question did not finish")

    out = removal._text(_agent_cell(cells, NEXT))
    assert "/ 4,000 window" in out and "1,000,000 window" not in out, out
    assert _kernel(page, "import nbagent", "nbagent.session().agent.config.max_session_budget_usd") == 0.5


COMPACT_CELLS = [FIRST, NEXT, "%agent compact", "%%agent\nwhat is 2 + 2? use python"]


@pytest.mark.parametrize("frontend", ["jupyterlab"])
def test_restart_and_run_all_of_a_notebook_with_a_compact_cell_asks_nothing(browser, lab, frontend):  # noqa: F811
    _require_installed_bridge()
    name = removal._put(lab, f"day2_compact_{frontend}.ipynb", "python3",
                        ["%load_ext nbagent", *COMPACT_CELLS, removal.MINE])
    page = _open(browser, lab, name, frontend)
    removal._run_all(page)
    removal._wait(page, lambda cs: "■ done" in removal._text(_agent_cell(cs, COMPACT_CELLS[-1]))
                  and "my own cell" in removal._text(cs[-1]), "the live run did not finish")
    assert "Compacted messages" in removal._text(_agent_cell(removal._cells(page), "%agent compact"))
    live = _kernel(page, "import nbagent", "len(nbagent.session().agent.records)")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    _wait_saved(page, name, lambda nb: sum("record" in (c.metadata.get("nbagent") or {}) for c in nb.cells) == 3)

    _restart_run_all(page)
    cells = removal._wait(page, lambda cs: "replayed: session" in removal._text(_agent_cell(cs, COMPACT_CELLS[-1]))
                          and "my own cell" in removal._text(cs[-1]), "Restart & Run All did not replay")

    out = removal._text(_agent_cell(cells, "%agent compact"))
    assert "this compaction is in the record (after turn 2" in out and "Compacted messages" not in out, out
    assert _kernel(page, "import nbagent", "len(nbagent.session().agent.records)") == live  # no request sent
