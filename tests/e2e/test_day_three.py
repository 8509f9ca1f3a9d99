"""Day three in real JupyterLab and Notebook 7 (headless Chromium): what a user does after a first
success, on a saved notebook whose agent answered from what it was shown of ``sales``.

- Clear All Outputs, save, Restart & Run All: the answer replays from the cell's own record.
- One value of the CSV changes (same shape and columns), Restart & Run All: the replayed answer is
  flagged, not shown as current (the model answered from the frame's description, not from code).
- ``%agent rollback 0`` then Undo (Z) brings the agent's cells back; running the agent cell again
  replaces them, and the user's cell stays byte for byte.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from . import test_cell_removal as removal
from .test_bridge_frontend import _kernel, _open, _require_installed_bridge, _wait_saved
from .test_jupyterlab import browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks

pytestmark = _lab_marks

CSV = "region,revenue\nnorth,120\nsouth,95.5\neast,130.25\nwest,80\nnorth,142\n"
LOAD = "import pandas as pd\nsales = pd.read_csv('day3_sales.csv')"
ASK = "%%agent\nWhich region of `sales` has the most revenue? Answer from what you were shown."
ANSWER = "From the rows shown: north has the most revenue (262)."
BRAIN = ("import nbagent\nfrom nbagent.providers.simulated.script import ScriptedResponder, text_reply\n"
         "nbagent.notebook.magics.active_magics().new_session()\n"
         f"nbagent.session().agent.simulated_api.responder = ScriptedResponder([text_reply({ANSWER!r})])")
CHANGED = "`sales` changed since this answer was recorded"


def _put_file(lab, name: str, text: str) -> None:  # noqa: F811
    base, token = lab
    body = json.dumps({"type": "file", "format": "text", "content": text})
    req = urllib.request.Request(f"{base}/api/contents/{name}?token={token}", data=body.encode(), method="PUT",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()


def _restart_run_all(page) -> None:
    page.evaluate("() => window.__nb.sessionContext.restartKernel()")
    page.wait_for_function("() => { const k = window.__nb.sessionContext.session.kernel; "
                           "return k.status === 'idle' && k.connectionStatus === 'connected'; }", timeout=60_000)
    removal._run_all(page)


def _replayed(page) -> list[dict]:
    return removal._wait(page, lambda cs: "replayed: session" in removal._text(cs[2])
                         and "my own cell" in removal._text(cs[-1]), "Restart & Run All did not replay")


@pytest.mark.parametrize("frontend", ["jupyterlab", "notebook"])
def test_a_replayed_answer_from_a_shown_frame_is_flagged_when_its_data_changed(browser, lab, frontend):  # noqa: F811
    _require_installed_bridge()
    data = f"day3_sales_{frontend}.csv"
    _put_file(lab, data, CSV)
    name = removal._put(lab, f"day3_shown_{frontend}.ipynb", "python3",
                        ["%load_ext nbagent", LOAD.replace("day3_sales.csv", data), ASK, removal.MINE])
    page = _open(browser, lab, name, frontend)
    _kernel(page, "get_ipython().run_line_magic('load_ext', 'nbagent')\n" + BRAIN)
    removal._run_all(page)
    removal._wait(page, lambda cs: ANSWER in removal._text(cs[2]) and "my own cell" in removal._text(cs[-1]),
                  "the live turn did not finish")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    _wait_saved(page, name, lambda nb: "record" in (nb.cells[2].metadata.get("nbagent") or {}))

    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    _restart_run_all(page)
    out = removal._text(_replayed(page)[2])
    assert ANSWER in out and CHANGED not in out  # unchanged data: the record, silently

    _put_file(lab, data, CSV.replace("west,80", "west,880"))  # one value: same shape, same columns
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    _restart_run_all(page)
    out = removal._text(_replayed(page)[2])
    assert CHANGED in out and out.index(CHANGED) < out.index(ANSWER), out
    page.close()


def test_undo_after_a_rollback_brings_the_cells_back_and_the_next_run_replaces_them(browser, lab):  # noqa: F811
    _require_installed_bridge()
    name = removal._put(lab, "day3_undo_rollback.ipynb", "python3", ["%load_ext nbagent", removal.ASK, removal.MINE])
    page = _open(browser, lab, name, "jupyterlab")
    removal._run_all(page)
    cells = removal._wait(page, lambda cs: len(removal._made(cs)) == 2 and "my own cell" in removal._text(cs[-1]),
                          "Run All did not finish")
    mine = removal._bytes(cells[-1])
    at = removal._append(page, "%agent rollback 0")
    # Inserted and run at once, well within the 0.5 s in which Yjs merges changes into one undo step:
    # the bridge makes its removal a step of its own, so Z does not take this cell with the removal.
    removal._run_cell(page, at)
    removal._wait(page, lambda cs: "rolled back" in removal._text(cs[-1]) and not removal._made(cs),
                  "the rollback did not remove the turn's cells")
    page.evaluate("() => { window.__nb.content.mode = 'command'; window.__nb.content.activate(); }")
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    cells = removal._wait(page, lambda cs: [c["source"] for c in removal._made(cs)] == ["2 * 3", "4 * 5"],
                          "Undo did not bring the cells back")
    assert cells[-1]["source"] == "%agent rollback 0"  # the user's cell stayed

    removal._run_cell(page, 1)
    cells = removal._wait(page, lambda cs: "done:" in removal._text(cs[1]) and len(removal._made(cs)) == 2
                          and all(c["metadata"]["nbagent"]["turn"] == 1 for c in removal._made(cs)),
                          "the agent cell's new run did not replace what Undo brought back")
    assert [c["source"] for c in cells] == ["%load_ext nbagent", removal.ASK, "2 * 3", "4 * 5", removal.MINE,
                                            "%agent rollback 0"]
    assert removal._bytes(cells[4]) == mine
    page.close()


def test_a_renamed_notebook_is_named_by_its_new_name_in_its_kernel(browser, lab):  # noqa: F811
    """A rename keeps the kernel, which knows the notebook by the bridge's hello: the front-end says
    it again with the new name (``%agent status`` named the old file; a session started after the
    rename recorded its replay index under it). Needs the labextension built from this frontend/."""
    _require_installed_bridge()
    name = removal._put(lab, "day3_rename_a.ipynb", "python3", ["%load_ext nbagent", removal.ASK, removal.MINE])
    page = _open(browser, lab, name, "jupyterlab")
    removal._run_all(page)
    removal._wait(page, lambda cs: len(removal._made(cs)) == 2 and "my own cell" in removal._text(cs[-1]),
                  "Run All did not finish")
    kernel = page.evaluate("() => window.__nb.sessionContext.session.kernel.id")
    page.evaluate("() => window.__nb.context.rename('day3_rename_b.ipynb')")
    page.wait_for_function("() => window.__nb.context.path === 'day3_rename_b.ipynb'", timeout=30_000)
    assert page.evaluate("() => window.__nb.sessionContext.session.kernel.id") == kernel  # the same kernel
    at = removal._append(page, "%agent status")
    removal._run_cell(page, at)
    cells = removal._wait(page, lambda cs: "bridge to jupyterlab" in removal._text(cs[-1]), "%agent status did not answer")
    assert "bridge to jupyterlab (day3_rename_b.ipynb)" in removal._text(cells[-1])
    page.close()


@pytest.mark.parametrize("frontend", ["jupyterlab", "notebook"])
def test_a_replayed_answer_is_flagged_when_a_cell_its_code_made_was_edited(browser, lab, frontend):  # noqa: F811
    """The user edits a cell the agent's code became (``2 * 3`` → ``2 * 30``): Run All runs the edited
    code under the old answer, so the replayed answer says so first (newcomer pass 12's D1)."""
    _require_installed_bridge()
    name = removal._put(lab, f"day3_edited_made_{frontend}.ipynb", "python3",
                        ["%load_ext nbagent", removal.ASK, removal.MINE])
    page = _open(browser, lab, name, frontend)
    removal._run_all(page)
    removal._wait(page, lambda cs: len(removal._made(cs)) == 2 and "my own cell" in removal._text(cs[-1]),
                  "the live turn did not finish")
    page.evaluate("() => window.__nb.content.model.sharedModel.cells[2].setSource('2 * 30')")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    _wait_saved(page, name, lambda nb: nb.cells[2].source == "2 * 30")

    _restart_run_all(page)
    cells = removal._wait(page, lambda cs: "replayed: session" in removal._text(cs[1])
                          and "my own cell" in removal._text(cs[-1]), "Restart & Run All did not replay")
    out = removal._text(cells[1])
    line = "the cell `2 * 30` the agent made changed since this answer was recorded"
    assert line in out, out
    page.close()


PRINTS = "import pandas as pd\nprint('total revenue:', pd.read_csv('day3_printed.csv').revenue.sum())"
READ_ANSWER = "The notebook prints a total revenue of 567.75."
READS = ("import nbagent\nfrom nbagent.providers.simulated.script import ScriptedResponder, text_reply, tool_reply\n"
         "nbagent.notebook.magics.active_magics().new_session()\n"
         "nbagent.session().agent.simulated_api.responder = ScriptedResponder("
         f"[tool_reply('notebook_read', {{}}), text_reply({READ_ANSWER!r})])")


@pytest.mark.parametrize("frontend", ["jupyterlab", "notebook"])
def test_a_replayed_answer_read_off_a_printed_output_is_flagged_when_that_output_changed(browser, lab, frontend):  # noqa: F811
    """The model read the notebook (``notebook_read``) and answered from what a cell *printed* (no
    ``Out[n]``, no variable, a file the user's cell read): one CSV value changed, Restart & Run All
    showed the old total under the new one with no word (newcomer pass 14)."""
    _require_installed_bridge()
    data = f"day3_printed_{frontend}.csv"
    _put_file(lab, data, CSV)
    name = removal._put(lab, f"day3_printed_{frontend}.ipynb", "python3",
                        ["%load_ext nbagent", PRINTS.replace("day3_printed.csv", data),
                         "%%agent\nWhat total revenue does the notebook print?", removal.MINE])
    page = _open(browser, lab, name, frontend)
    _kernel(page, "get_ipython().run_line_magic('load_ext', 'nbagent')\n" + READS)
    removal._run_all(page)
    removal._wait(page, lambda cs: READ_ANSWER in removal._text(cs[2]) and "my own cell" in removal._text(cs[-1]),
                  "the live turn did not finish")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    _wait_saved(page, name, lambda nb: "record" in (nb.cells[2].metadata.get("nbagent") or {}))

    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    _restart_run_all(page)
    out = removal._text(_replayed(page)[2])
    assert READ_ANSWER in out and "changed since" not in out, out  # the same output: the record, silently

    _put_file(lab, data, CSV.replace("west,80", "west,880"))  # the cell now prints 1367.75
    _restart_run_all(page)
    cells = _replayed(page)
    assert "1367.75" in removal._text(cells[1])
    out = removal._text(cells[2])
    line = "the output of the cell `import pandas as pd` changed since this answer was recorded"
    assert line in out and out.index(line) < out.index(READ_ANSWER), out
    page.close()
