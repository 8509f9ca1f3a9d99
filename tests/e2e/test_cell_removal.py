"""The three reproductions of issue 32 in real JupyterLab 4 and Notebook 7 (headless Chromium), on the
stock python3 kernel with ``%load_ext nbagent`` and on the nbagent kernel: nbagent never deletes a
cell it did not make in this kernel.

(a) Run All, then the agent cell again: the user's cell below survives byte-identical, the old turn's
    cells are gone, and the saved file has the user's cell.
(b) ``%agent rollback 1`` / ``rollback 0`` with the user's cells after the agent's: only agent cells
    of later turns go, the message counts what really went, the rollback's own cell stays.
(c) Run All on a notebook without its ``.nbagent/`` record (it goes live) with two ``%%agent`` cells:
    the second is not deleted and the kernel never hangs Busy; and a queued agent cell the user
    deletes does not leave the kernel waiting on a prompt nobody sees.

And a copy of an agent cell the user pasted or duplicated (the same metadata under a new id) is the
user's: a re-run and a rollback leave it byte-identical; an Undo after a re-run brings back the run
before, which the next re-run replaces too (the user's cell untouched).

One JupyterLab server for the module (the ``lab`` fixture); the default offline model answers.
"""

from __future__ import annotations

import json
import re
import time

import nbformat
import pytest

from .test_bridge_frontend import _open, _require_installed_bridge, _wait_saved
from .test_jupyterlab import SHOTS, browser, lab, server_log_tail  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks

pytestmark = _lab_marks

ASK = "%%agent --allow python\nWhat is 2 * 3 and 4 * 5?"
MINE = 'my_result = "my own cell"\nprint(my_result)'
CELLS_JS = "() => window.__nb.content.model.sharedModel.cells.map(c => c.toJSON())"
# Both front-ends on both kernels, in two runs per reproduction.
CONFIGS = [("jupyterlab", "python3"), ("notebook", "nbagent")]


# What a failure report needs to tell "the cells never ran" apart: the kernel's and its connection's
# state, whether the front-end holds input or a dialog, and each cell's prompt.
STATE_JS = """() => { const s = window.__nb.sessionContext, k = s.session && s.session.kernel;
  return {kernel: k && k.status, connection: k && k.connectionStatus, ready: s.isReady, pendingInput: s.pendingInput,
          dialogs: [...document.querySelectorAll('.jp-Dialog')].map(d => d.innerText),
          executing: [...document.querySelectorAll('.jp-InputArea-prompt')].map(p => p.innerText)}; }"""


def _cells(page) -> list[dict]:
    return page.evaluate(CELLS_JS)


def _kind(cell: dict) -> str | None:
    return ((cell.get("metadata") or {}).get("nbagent") or {}).get("kind")


def _made(cells: list[dict]) -> list[dict]:
    return [c for c in cells if _kind(c) == "code"]


def _text(cell: dict) -> str:
    parts = []
    for o in cell.get("outputs") or []:
        if o.get("output_type") == "error":  # shown, so a report says why Run All stopped there
            parts.append(f"{o.get('ename')}: {o.get('evalue')}")
            continue
        t = o.get("text") if o.get("output_type") == "stream" else (o.get("data") or {}).get("text/plain", "")
        parts.append("".join(t) if isinstance(t, list) else str(t or ""))
    return "".join(parts)


def _bytes(cell: dict) -> str:
    return json.dumps(cell, sort_keys=True)


def _idle(page) -> bool:
    return page.evaluate("() => window.__nb.sessionContext.session.kernel.status") == "idle"


def _wait(page, predicate, what: str, timeout: float = 120.0, idle: bool = True) -> list[dict]:
    """The cells once ``predicate(cells)`` holds and (``idle``) the kernel is idle (polled: the UI is
    another process)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cells = _cells(page)
        if predicate(cells) and (not idle or _idle(page)):
            return cells
        time.sleep(0.25)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"cell_removal_failure_{int(time.time())}.png"), full_page=True)
    summary = [(c["source"][:40], c["execution_count"], _kind(c), (c["metadata"].get("nbagent") or {}).get("turn"),
                _text(c)[-300:]) for c in _cells(page)]
    raise AssertionError(f"{what}: {json.dumps(summary)}; front-end: {json.dumps(page.evaluate(STATE_JS))}; "
                         f"the server's log ends:\n{server_log_tail(page.url)}")


def _answer_allows(page, done, what: str, timeout: float = 180.0, before_each=None) -> int:
    """Click each enabled Allow until ``done()`` holds, waiting for each prompt to close (the kernel
    disables its buttons when it takes the click: counting disabled buttons instead passed at once
    from the second prompt on, each closed prompt leaving several, and the next turn clicked this
    button again); ``before_each()`` checks the page before a click. The prompts answered."""
    deadline, answered = time.monotonic() + timeout, 0
    while not done():
        assert time.monotonic() < deadline, f"{what} after {answered} prompt(s)"
        allow = page.locator("button:text-is('Allow'):enabled")
        if allow.count():
            if before_each is not None:
                before_each()
            button = allow.first.element_handle()
            button.click()
            answered += 1
            page.wait_for_function("(b) => !b.isConnected || b.disabled || b.classList.contains('jp-mod-disabled')",
                                   arg=button, timeout=30_000)
        else:
            time.sleep(0.25)  # polled: the UI is another process
    return answered


def _run_all(page) -> None:
    # Not awaited (no return value): the command's promise ends only when every cell has run.
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")


def _run_cell(page, index: int) -> None:
    page.evaluate("(i) => { const nb = window.__nb.content; nb.activeCellIndex = i; "
                  "window.jupyterapp.commands.execute('notebook:run-cell'); }", index)


def _append(page, source: str) -> int:
    return page.evaluate("(s) => { const nb = window.__nb.content.model.sharedModel; "
                         "nb.insertCell(nb.cells.length, {cell_type: 'code', source: s}); return nb.cells.length - 1; }",
                         source)


def _put(lab, name: str, kernel: str, cells: list) -> str:  # noqa: F811
    import urllib.request

    base, token = lab
    nb = nbformat.v4.new_notebook(cells=[c if isinstance(c, dict) else nbformat.v4.new_code_cell(c) for c in cells],
                                  metadata={"kernelspec": {"name": kernel, "display_name": kernel, "language": "python"}})
    body = json.dumps({"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))})
    req = urllib.request.Request(f"{base}/api/contents/{name}?token={token}", data=body.encode(), method="PUT",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()
    return name


@pytest.mark.parametrize("frontend, kernel", CONFIGS)
def test_run_all_then_the_agent_cell_again_keeps_the_users_cell(browser, lab, frontend, kernel):  # noqa: F811
    _require_installed_bridge()
    name = _put(lab, f"removal_rerun_{frontend}_{kernel}.ipynb", kernel, ["%load_ext nbagent", ASK, MINE])
    page = _open(browser, lab, name, frontend)
    _run_all(page)
    cells = _wait(page, lambda cs: len(_made(cs)) == 2 and "my own cell" in _text(cs[-1])
                  and cs[-1]["execution_count"] is not None, "Run All did not finish")
    assert [c["source"] for c in cells] == ["%load_ext nbagent", ASK, "2 * 3", "4 * 5", MINE]
    mine = _bytes(cells[-1])

    _run_cell(page, 1)  # the agent cell again: a new turn replaces the old turn's cells
    cells = _wait(page, lambda cs: _made(cs) and all(c["metadata"]["nbagent"]["turn"] == 2 for c in _made(cs))
                  and any(c["source"] == MINE for c in cs), "the re-run did not replace the turn's cells")
    assert [c["source"] for c in cells] == ["%load_ext nbagent", ASK, "2 * 3", "4 * 5", MINE]
    assert _bytes(cells[-1]) == mine  # the user's cell, byte for byte
    assert len(_made(cells)) == 2  # the old turn's cells are gone, none left below the new ones

    # The save command, not Ctrl+S: a click at the notebook's middle can land on an output whose widget
    # keeps shortcuts to itself (loaded runs saw the key do nothing).
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    saved = _wait_saved(page, name, lambda nb: len(nb.cells) == 5 and nb.cells[-1].source == MINE
                        and nb.cells[2].metadata.get("nbagent", {}).get("turn") == 2)
    assert "my own cell" in saved.cells[-1].outputs[0]["text"]
    page.close()


@pytest.mark.parametrize("frontend, kernel", [("jupyterlab", "nbagent"), ("notebook", "python3")])
def test_rollback_removes_only_later_turns_agent_cells_and_counts_them(browser, lab, frontend, kernel):  # noqa: F811
    _require_installed_bridge()
    second = "%%agent --allow python\nWhat is 3 * 3?"
    name = _put(lab, f"removal_rollback_{frontend}_{kernel}.ipynb", kernel,
                ["%load_ext nbagent", ASK, "%agent status", "x = 1", second])
    page = _open(browser, lab, name, frontend)
    _run_all(page)
    cells = _wait(page, lambda cs: {c["metadata"]["nbagent"]["turn"] for c in _made(cs)} == {1, 2}
                  and any(c["source"] == second and "done:" in _text(c) for c in cs), "the two turns did not finish")
    users = {c["id"]: _bytes(c) for c in cells if _kind(c) is None}

    for turn, left in ((1, {1}), (0, set())):
        at = _append(page, f"%agent rollback {turn}")
        before = at + 1
        _run_cell(page, at)
        cells = _wait(page, lambda cs: "rolled back" in _text(cs[-1]) and cs[-1]["execution_count"] is not None,
                      f"rollback {turn} did not answer")
        gone = before - len(cells)
        message = _text(cells[-1])
        assert gone >= 1 and re.search(rf"\b{gone} agent cell\(s\) removed from the notebook", message), message
        assert {c["metadata"]["nbagent"]["turn"] for c in _made(cells)} == left
        assert cells[-1]["source"] == f"%agent rollback {turn}"  # its own cell stays
        for c in cells:
            if c["id"] in users:
                assert _bytes(c) == users[c["id"]]  # every user cell, byte for byte
        assert set(users) <= {c["id"] for c in cells}
        users = {c["id"]: _bytes(c) for c in cells if _kind(c) is None}
    page.close()


def _command(page, index: int, command: str) -> None:
    """JupyterLab's own command on the cell at ``index`` (what the menu, the toolbar and C/V do)."""
    page.evaluate("([i, c]) => { window.__nb.content.activeCellIndex = i; "
                  "return window.jupyterapp.commands.execute(c); }", [index, command])


@pytest.mark.parametrize("frontend, kernel", CONFIGS)
def test_the_users_copies_of_agent_cells_survive_a_re_run_and_a_rollback(browser, lab, frontend, kernel):  # noqa: F811
    _require_installed_bridge()
    name = _put(lab, f"removal_copies_{frontend}_{kernel}.ipynb", kernel, ["%load_ext nbagent", ASK, MINE])
    page = _open(browser, lab, name, frontend)
    _run_all(page)
    cells = _wait(page, lambda cs: len(_made(cs)) == 2 and "my own cell" in _text(cs[-1])
                  and cs[-1]["execution_count"] is not None, "Run All did not finish")
    originals = [cells[2]["id"], cells[3]["id"]]
    _command(page, 3, "notebook:copy-cell")  # `4 * 5`, pasted below the user's cell
    _command(page, 4, "notebook:paste-cell-below")
    _command(page, 2, "notebook:duplicate-below")  # `2 * 3`, duplicated in place
    cells = _wait(page, lambda cs: len(cs) == 7, "the copies were not made")
    copies = {c["id"]: _bytes(c) for c in (cells[3], cells[6])}
    assert [cells[3]["source"], cells[6]["source"]] == ["2 * 3", "4 * 5"] and not set(copies) & set(originals)

    _run_cell(page, 1)  # the agent cell again: its earlier cells go, the user's copies of them stay
    cells = _wait(page, lambda cs: any(c["metadata"]["nbagent"]["turn"] == 2 for c in _made(cs))
                  and "copied by you" in _text(cs[1]), "the re-run did not finish")
    assert not set(originals) & {c["id"] for c in cells}
    assert {c["id"]: _bytes(c) for c in cells if c["id"] in copies} == copies

    at = _append(page, "%agent rollback 0")
    _run_cell(page, at)
    cells = _wait(page, lambda cs: "rolled back" in _text(cs[-1]), "the rollback did not answer")
    assert {c["id"]: _bytes(c) for c in cells if c["id"] in copies} == copies
    assert [c["source"] for c in cells] == ["%load_ext nbagent", ASK, "2 * 3", MINE, "4 * 5", "%agent rollback 0"]
    page.close()


ASKS = "%%agent\nWhat is 2 * 3 and 4 * 5?"  # no --allow: each python call asks


def _received_notebook() -> list:
    """A notebook whose agent cells were made by another kernel (a received notebook, or one from
    before a restart); its .nbagent/ record is not here, so Run All goes live."""
    theirs = {"origin": "their-kernel", "session": "S", "turn": 1}
    agent = nbformat.v4.new_code_cell(ASKS, metadata={"nbagent": {**theirs, "kind": "agent"}}, id="agent-one")
    made = [nbformat.v4.new_code_cell(src, id=f"their-{i}", metadata={"nbagent": {
        **theirs, "kind": "code", "agent_cell": "agent-one", "tool_use_id": f"t{i}"}}) for i, src in
        enumerate(["print(2 * 3)", "print(4 * 5)"])]
    asks = nbformat.v4.new_code_cell("%%agent\nWhat is 17 * 23?", id="agent-two")
    return ["%load_ext nbagent", agent, *made, asks, nbformat.v4.new_code_cell(MINE, id="mine")]


@pytest.mark.parametrize("frontend, kernel", CONFIGS)
def test_run_all_live_never_deletes_the_next_agent_cell_nor_hangs(browser, lab, frontend, kernel):  # noqa: F811
    _require_installed_bridge()
    name = _put(lab, f"removal_live_{frontend}_{kernel}.ipynb", kernel, _received_notebook())
    page = _open(browser, lab, name, frontend)
    _run_all(page)
    expected = ["agent-one", "their-0", "their-1", "agent-two", "mine"]
    def untouched() -> None:  # nothing of theirs or the user's went, and the queued second agent cell is still there
        assert [c["id"] for c in _cells(page) if c["id"] in expected] == expected

    answered = _answer_allows(page, lambda: "my own cell" in _text(_cells(page)[-1]) and _idle(page),
                              "Run All did not finish", timeout=240, before_each=untouched)
    cells = _cells(page)
    assert [c["id"] for c in cells if c["id"] in expected] == expected and cells[-1]["id"] == "mine"
    second = next(c for c in cells if c["id"] == "agent-two")
    assert "391" in _text(second)  # its own prompt was shown in it, answered, and its code ran
    assert answered >= 3  # two python calls of the first agent cell, one of the second
    page.close()


def test_a_deleted_queued_agent_cell_never_leaves_the_kernel_waiting(browser, lab):  # noqa: F811
    _require_installed_bridge()
    name = _put(lab, "removal_deleted_queued.ipynb", "nbagent", [
        "%load_ext nbagent", "%%agent\nWhat is 17 * 23?", "%%agent\nWhat is 19 * 21?", MINE])
    page = _open(browser, lab, name, "jupyterlab")
    _run_all(page)
    _wait(page, lambda cs: page.locator("button:text-is('Allow'):enabled").count() > 0, "no prompt shown",
          idle=False)  # the first agent cell waits; the second is queued [*]
    allow = page.locator("button:text-is('Allow'):enabled").first
    page.evaluate("() => { const nb = window.__nb.content.model.sharedModel; "
                  "nb.deleteCell(nb.cells.findIndex(c => c.getSource().includes('19 * 21'))); }")
    allow.click()
    # The deleted cell still runs in the kernel; its prompt would be shown nowhere: denied, not awaited.
    cells = _wait(page, lambda cs: "my own cell" in _text(cs[-1]), "the kernel waited on an invisible prompt", 120)
    assert not any("19 * 21" in c["source"] for c in cells)
    page.close()



@pytest.mark.parametrize("frontend, kernel", [("jupyterlab", "python3")])
def test_undo_after_a_re_run_brings_back_cells_the_next_re_run_replaces(browser, lab, frontend, kernel):  # noqa: F811
    _require_installed_bridge()
    name = _put(lab, f"removal_undo_{frontend}_{kernel}.ipynb", kernel, ["%load_ext nbagent", ASK, MINE])
    page = _open(browser, lab, name, frontend)
    _run_all(page)
    _wait(page, lambda cs: len(_made(cs)) == 2 and "my own cell" in _text(cs[-1])
          and cs[-1]["execution_count"] is not None, "Run All did not finish")
    _run_cell(page, 1)
    cells = _wait(page, lambda cs: len(_made(cs)) == 2 and all(c["metadata"]["nbagent"]["turn"] == 2 for c in _made(cs)),
                  "the re-run did not replace the turn's cells")
    mine = _bytes(cells[-1])

    # Undo, as the user presses it (Z in command mode): the first run's cells come back.
    page.evaluate("() => { window.__nb.content.mode = 'command'; window.__nb.content.activate(); }")
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    _wait(page, lambda cs: [c["metadata"]["nbagent"]["turn"] for c in _made(cs)] == [1, 1], "Undo did not bring them back")

    _run_cell(page, 1)  # the agent cell again: what Undo brought back is its earlier run's too
    cells = _wait(page, lambda cs: any(c["metadata"]["nbagent"]["turn"] == 3 for c in _made(cs))
                  and "done:" in _text(cs[1]), "the second re-run did not finish")
    assert [c["metadata"]["nbagent"]["turn"] for c in _made(cells)] == [3, 3]
    assert [c["source"] for c in cells] == ["%load_ext nbagent", ASK, "2 * 3", "4 * 5", MINE]
    assert _bytes(cells[-1]) == mine
    page.close()


def test_rollback_says_the_users_cell_the_agent_fixed_keeps_the_fix(browser, lab):  # noqa: F811
    """The agent fixed the user's failing cell (notebook_edit, notebook_run); ``%agent rollback 0``
    leaves that cell as the agent left it (it is the user's) and now says so, instead of a line that
    read as if everything of the turn was undone."""
    _require_installed_bridge()
    broken = "import pandas as pd\ndf = pd.DataFrame({'price': [1, 2, 3]})\ndf['prise'].sum()"
    name = _put(lab, "removal_rollback_fix.ipynb", "python3", ["%load_ext nbagent", broken])
    page = _open(browser, lab, name, "jupyterlab")
    _run_all(page)  # stops at the KeyError
    _wait(page, lambda cs: cs[1]["execution_count"] is not None, "the broken cell did not run")
    at = _append(page, "%%agent --allow notebook_edit notebook_run\nfix the cell that fails with a KeyError")
    _run_cell(page, at)
    # notebook_edit is allowed, yet a replace of the user's cell asks each time (attacker pass 16)
    page.locator("button:text-is('Allow'):enabled").first.click(timeout=60_000)
    cells = _wait(page, lambda cs: "done:" in _text(cs[at]), "the fix did not finish")
    assert "df['price'].sum()" in cells[1]["source"] and _kind(cells[1]) == "edit"
    fixed = _bytes(cells[1])

    at = _append(page, "%agent rollback 0")
    _run_cell(page, at)
    cells = _wait(page, lambda cs: "rolled back" in _text(cs[at]), "the rollback did not answer")
    assert "1 of your cell(s) the agent changed in the undone turn(s) keep(s) its change" in _text(cells[at])
    assert _bytes(cells[1]) == fixed  # the user's cell, as the agent left it: never rewritten by nbagent
    page.close()
