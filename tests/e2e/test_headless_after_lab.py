"""A notebook recorded in real JupyterLab (headless Chromium), then run headless the way CI does
(nbclient, as papermill and ``nbconvert --execute`` do: no cell ids, no metadata, only the folder's
``.nbagent/`` record): each agent cell shows the answer the notebook shows, never one a re-run of
the cell replaced (newcomer pass 19)."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient

from . import test_cell_removal as removal
from .test_bridge_frontend import _open, _require_installed_bridge, _wait_saved
from .test_jupyterlab import browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks

pytestmark = _lab_marks

SECOND = "%%agent --allow python\nWhat is 3 * 3?"


def _outputs(cell) -> str:
    return "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", []))


def test_a_cell_run_again_in_jupyterlab_replays_its_last_answer_headless(browser, lab, tmp_path_factory):  # noqa: F811
    _require_installed_bridge()
    name = removal._put(lab, "headless_after_rerun.ipynb", "python3", ["%load_ext nbagent", removal.ASK, removal.MINE])
    page = _open(browser, lab, name, "jupyterlab")
    removal._run_all(page)
    removal._wait(page, lambda cs: len(removal._made(cs)) == 2 and "my own cell" in removal._text(cs[-1]),
                  "Run All did not finish")
    removal._run_cell(page, 1)  # the agent cell again: turn 2 replaces turn 1's answer and cells
    removal._wait(page, lambda cs: [c["metadata"]["nbagent"]["turn"] for c in removal._made(cs)] == [2, 2]
                  and "done:" in removal._text(cs[1]), "the re-run did not finish")
    at = removal._append(page, SECOND)
    removal._run_cell(page, at)
    removal._wait(page, lambda cs: any(c["source"] == SECOND and "done:" in removal._text(c) for c in cs),
                  "the second agent cell did not answer")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    _wait_saved(page, name, lambda nb: any(c.source == SECOND and "record" in (c.metadata.get("nbagent") or {})
                                           for c in nb.cells))
    page.close()
    folder = next(tmp_path_factory.getbasetemp().glob(f"lab*/{name}")).parent

    nb = nbformat.read(folder / name, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()

    first = _outputs(nb.cells[1])
    assert ", turn 2 (no request sent)" in first and ", turn 1 " not in first, first
    second = _outputs(next(c for c in nb.cells if c.source == SECOND))
    assert ", turn 3 (no request sent)" in second and "asking the model" not in second, second


def test_an_agent_cell_cut_undone_and_pasted_gets_its_own_id_and_replays_in_lab_and_headless(
        browser, lab, tmp_path_factory):  # noqa: F811
    """JupyterLab keeps a cut code cell's id when it is pasted, and Undo of the cut leaves "cut" as the
    last clipboard action: Cut, Undo, Paste made two agent cells of one id. The bridge wrote the
    pasted cell's record into the first cell of that id, so Restart & Run All asked the model for the
    pasted cell without saying so and its live output overwrote the first cell's replay. The pasted
    cell now gets an id of its own (frontend/src/ids.ts): each cell keeps its own record and replays
    it, in JupyterLab and headless (review of newcomer pass 19)."""
    _require_installed_bridge()
    name = removal._put(lab, "headless_one_id.ipynb", "python3", ["%load_ext nbagent", SECOND, "x = 1"])
    page = _open(browser, lab, name, "jupyterlab")
    ids = "() => window.__nb.content.model.sharedModel.cells.map(c => c.id)"
    first_id = page.evaluate(ids)[1]
    removal._command(page, 1, "notebook:cut-cell")
    removal._wait(page, lambda cs: len(cs) == 2, "the cut did not happen")
    removal._command(page, 0, "notebook:undo-cell-action")
    removal._wait(page, lambda cs: len(cs) == 3, "the undo did not bring the cell back")
    removal._command(page, 2, "notebook:paste-cell-below")
    removal._wait(page, lambda cs: len(cs) == 4, "the paste did not happen")
    cells = page.evaluate(ids)
    assert cells[1] == first_id and len(set(cells)) == 4, cells  # the pasted copy has an id of its own
    removal._run_cell(page, 0)
    for n in (0, 1):  # the first agent cell (turn 1), then its pasted copy (turn 2), found anew: each makes cells
        removal._run_cell(page, [i for i, c in enumerate(removal._cells(page)) if c["source"] == SECOND][n])
        removal._wait(page, lambda cs, n=n: _turns(cs)[n] == n + 1, f"agent cell {n} did not answer")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    _wait_saved(page, name, lambda nb: [((c.metadata.get("nbagent") or {}).get("record") or {}).get("turn")
                                        for c in nb.cells if c.source == SECOND] == [1, 2])

    page.evaluate("() => window.__nb.sessionContext.restartKernel()")
    page.wait_for_function("() => window.__nb.sessionContext.session.kernel.status === 'idle'", timeout=60_000)
    removal._run_all(page)
    cells = removal._wait(page, lambda cs: all("no request sent" in removal._text(c) for c in cs if c["source"] == SECOND)
                         , "Restart & Run All did not replay both")
    lab_shown = [removal._text(c) for c in cells if c["source"] == SECOND]
    assert ", turn 1 (no request sent)" in lab_shown[0] and ", turn 2 " not in lab_shown[0], lab_shown[0]
    assert ", turn 2 (no request sent)" in lab_shown[1] and "asking the model" not in lab_shown[1], lab_shown[1]
    page.close()
    folder = next(tmp_path_factory.getbasetemp().glob(f"lab*/{name}")).parent

    nb = nbformat.read(folder / name, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()

    agents = [_outputs(c) for c in nb.cells if c.source == SECOND]
    assert ", turn 1 (no request sent)" in agents[0], agents[0]
    assert ", turn 2 (no request sent)" in agents[1] and "asking the model" not in agents[1], agents[1]


def _turns(cells: list[dict]) -> list[int | None]:
    """The turn each agent cell of ``SECOND``'s text recorded in its own metadata, in notebook order."""
    return [((c.get("metadata") or {}).get("nbagent") or {}).get("turn") for c in cells if c["source"] == SECOND]
