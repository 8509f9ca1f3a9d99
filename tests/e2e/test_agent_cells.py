"""The agent's work in the notebook, in real JupyterLab and Notebook 7 (headless Chromium).

One agent cell runs a scripted model that makes three python calls, reads the notebook, edits a
cell it read (refused once, because the user changed that cell while the edit waited for Allow),
and runs the edited cell. Then: the three code cells sit below the agent cell with outputs and
metadata; the edited cell shows its new output; a second turn's cell goes on rollback; and after
saving, Restart & Run All replays the agent cell (no Agent, so no request, and no key in the
environment, and no "changed" warning for the cell the turn fixed itself) while the code cells
re-execute and reproduce their outputs.
"""

from __future__ import annotations

import json
import time

import pytest

from . import test_cell_removal as removal
from .test_bridge_frontend import _kernel, _open, _require_installed_bridge, _wait_saved
from .test_jupyterlab import SHOTS, browser, lab, server_log_tail  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import _put_notebook

pytestmark = _lab_marks

BRAIN = r'''
import re
import nbagent.notebook.magics as _m
from nbagent.providers.simulated import tool_reply, text_reply

def _results(body):
    out = []
    for m in body["messages"]:
        if m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    c = b.get("content")
                    out.append(c if isinstance(c, str) else " ".join(x.get("text", "") for x in c or []))
    return out

def _cell_x(text):
    return re.search(r"id=(\S+) code\nx = 1", text).group(1)

NEW = "x = 2\nprint('x is', x)"

def brain(body):
    r = _results(body)
    steps = [
        lambda: tool_reply([("python", {"code": "a = 6\nprint('a is', a)"})]),
        lambda: tool_reply([("python", {"code": "b = a * 7\nb"})]),
        lambda: tool_reply([("python", {"code": "print('b + 1 =', b + 1)"})]),
        lambda: tool_reply([("notebook_read", {})]),
        lambda: tool_reply([("notebook_edit", {"action": "replace", "cell_id": _cell_x(r[3]), "source": NEW})]),
        lambda: tool_reply([("notebook_read", {})]),
        lambda: tool_reply([("notebook_edit", {"action": "replace", "cell_id": _cell_x(r[5]), "source": NEW})]),
        lambda: tool_reply([("notebook_run", {"cell_id": _cell_x(r[5])})]),
        lambda: text_reply("ANALYSIS-DONE"),
    ]
    return steps[min(len(r), len(steps) - 1)]()

s = _m.active_magics().new_session(allow=("python", "notebook_run"))
s.agent.simulated_api.responder = brain
'''

SECOND = r'''
from nbagent.providers.simulated import ScriptedResponder, tool_reply, text_reply
_m.active_magics().current.agent.simulated_api.responder = ScriptedResponder([
    tool_reply([("python", {"code": "c = 1"})]), text_reply("SECOND-DONE")])
'''

CELLS_JS = """() => window.__nb.content.model.sharedModel.cells.map(c => ({
  id: c.id, type: c.cell_type, source: c.getSource(), meta: c.getMetadata('nbagent') || null,
  outputs: c.cell_type === 'code' ? c.outputs : []}))"""


def _cells(page) -> list[dict]:
    return page.evaluate(CELLS_JS)


def _wait(page, predicate, what: str, timeout: float = 90.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cells = _cells(page)
        if predicate(cells):
            return cells
        time.sleep(0.2)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"agent_cells_failure_{int(time.time())}.png"), full_page=True)
    raise AssertionError(f"{what}: {json.dumps(_cells(page))[:3000]}\nthe server's log ends:\n{server_log_tail(page.url)}")


def _text(outputs: list[dict]) -> str:
    parts = []
    for o in outputs:
        t = o.get("text") if o.get("output_type") == "stream" else (o.get("data") or {}).get("text/plain", "")
        parts.append("".join(t) if isinstance(t, list) else str(t or ""))
    return "".join(parts)


def _materialised(cells: list[dict]) -> list[dict]:
    return [c for c in cells if (c["meta"] or {}).get("kind") == "code"]


def _run_cell(page, index: int) -> None:
    page.evaluate("(i) => { const nb = window.__nb.content; nb.activeCellIndex = i; "
                  "window.jupyterapp.commands.execute('notebook:run-cell'); }", index)


@pytest.mark.parametrize("frontend", ["jupyterlab", "notebook"])
def test_the_agents_work_becomes_cells_and_run_all_replays_it(browser, lab, frontend):  # noqa: F811
    _require_installed_bridge()
    name = _put_notebook(lab, f"cells_{frontend}.ipynb", "python3",
                         ["%load_ext nbagent", "x = 1", "%%agent\nBuild the analysis."])
    page = _open(browser, lab, name, frontend)
    _kernel(page, "get_ipython().run_line_magic('load_ext', 'nbagent')\nimport json\n" + BRAIN)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")

    # The first edit asks: while it waits, the user changes the cell the model read.
    allow = page.locator("button:text-is('Allow'):enabled").first
    allow.wait_for(state="visible", timeout=90_000)
    x_id = next(c["id"] for c in _cells(page) if c["source"] == "x = 1")
    page.evaluate("(id) => window.__nb.content.model.sharedModel.cells.find(c => c.id === id)"
                  ".setSource('x = 1  # mine')", x_id)
    first = allow.element_handle()
    allow.click()
    # Refused: the model reads again and asks again. The first card's buttons are disabled once the
    # kernel has its answer (until then they still match ``:enabled``), and the new card comes after it.
    page.wait_for_function("(b) => !b.isConnected || b.disabled", arg=first, timeout=60_000)
    page.locator("button:text-is('Allow'):enabled").last.click(timeout=60_000)
    cells = _wait(page, lambda cs: any("x is 2" in _text(c["outputs"]) for c in cs)
                  and any((c["meta"] or {}).get("kind") == "agent" for c in cs), "the turn did not finish")

    sources = [c["source"] for c in cells]
    agent_at = sources.index("%%agent\nBuild the analysis.")
    made = _materialised(cells)
    assert [c["source"] for c in made] == ["a = 6\nprint('a is', a)", "b = a * 7\nb", "print('b + 1 =', b + 1)"]
    assert sources[agent_at + 1: agent_at + 4] == [c["source"] for c in made]  # right below the agent cell
    assert [_text(c["outputs"]).strip() for c in made] == ["a is 6", "42", "b + 1 = 43"]
    assert all(c["meta"]["turn"] == 1 and c["meta"]["tool_use_id"] for c in made)
    assert cells[agent_at]["meta"]["kind"] == "agent"
    edited = next(c for c in cells if c["id"] == x_id)
    assert edited["source"] == "x = 2\nprint('x is', x)" and "x is 2" in _text(edited["outputs"])
    assert page.locator("text=/changed since you last read it/").count() > 0  # the refused edit
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"agent_cells_{frontend}.png"), full_page=True)

    # A second turn, then rollback to the first: its cell goes, the first turn's stay.
    _kernel(page, SECOND)
    page.evaluate("() => { const nb = window.__nb.content.model.sharedModel; "
                  "nb.insertCell(nb.cells.length, {cell_type: 'code', source: '%%agent\\nA second turn.'}); }")
    _run_cell(page, len(_cells(page)) - 1)
    _wait(page, lambda cs: len(_materialised(cs)) == 4, "the second turn's cell did not appear")
    _kernel(page, "get_ipython().run_line_magic('agent', 'rollback 1')")
    cells = _wait(page, lambda cs: len(_materialised(cs)) == 3, "rollback did not remove the second turn's cell")
    page.evaluate("() => { const nb = window.__nb.content.model.sharedModel; nb.deleteCell(nb.cells.length - 1); }")

    # Save, restart, Run All: replayed, not asked.
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    _wait_saved(page, name, lambda nb: len(nb.cells) == 6)
    page.evaluate("() => window.__nb.sessionContext.restartKernel()")
    page.wait_for_function("() => window.__nb.sessionContext.session.kernel.status === 'idle'", timeout=60_000)
    before = {c["id"]: _text(c["outputs"]) for c in _materialised(_cells(page))}
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    cells = _wait(page, lambda cs: any("replayed: session" in _text(c["outputs"]) for c in cs)
                  and all(c["outputs"] for c in _materialised(cs)), "Run All did not replay")
    assert {c["id"]: _text(c["outputs"]) for c in _materialised(cells)} == before
    # The cell the turn fixed runs above it with the turn's own text: not a change to warn about.
    warned = [t for t in map(lambda c: _text(c["outputs"]), cells) if "changed since this answer" in t]
    assert not warned, warned
    state = _kernel(page, "import os, nbagent.notebook.magics as _m",
                    "(_m.active_magics().current is None, 'ANTHROPIC_API_KEY' in os.environ)")
    assert state == (True, False)  # no Agent was made: nothing could send a request; no key
    page.screenshot(path=str(SHOTS / f"agent_cells_replayed_{frontend}.png"), full_page=True)
    page.close()


RETRIES = ("%load_ext nbagent\nimport nbagent\n"
           "from nbagent.providers.simulated.script import ScriptedResponder, tool_reply, text_reply\n"
           "nbagent.notebook.magics.active_magics().new_session(allow=('python',))\n"
           "nbagent.session().agent.simulated_api.responder = ScriptedResponder([\n"
           "    tool_reply('python', {'code': 'total = undefined_name + 1'}),\n"
           "    tool_reply('python', {'code': 'total = 1 + 1\\ntotal'}), text_reply('total is 2')])")


@pytest.mark.parametrize("frontend", ["jupyterlab"])
def test_restart_and_run_all_goes_past_the_agents_attempt_that_raised(browser, lab, frontend):  # noqa: F811
    """The agent's first try raised (NameError) and its second worked: both are cells. Restart & Run
    All ran the first, which raised again, and stopped there, short of the state the turn left and of
    the user's cells below. Tagged ``raises-exception``, it shows its error and Run All goes on."""
    _require_installed_bridge()
    name = _put_notebook(lab, f"attempt_raised_{frontend}.ipynb", "python3",
                         [RETRIES, "%%agent\nCompute the total.", "print('after', total)"])
    page = _open(browser, lab, name, frontend)
    removal._run_all(page)
    cells = removal._wait(page, lambda cs: "after 2" in removal._text(cs[-1]), "the live run did not finish")
    assert [c["source"] for c in removal._made(cells)] == ["total = undefined_name + 1", "total = 1 + 1\ntotal"]
    assert removal._made(cells)[0]["metadata"]["tags"] == ["raises-exception"]
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    _wait_saved(page, name, lambda nb: len(nb.cells) == 5)

    page.evaluate("() => window.__nb.sessionContext.session.kernel.restart()")
    page.wait_for_function("() => { const k = window.__nb.sessionContext.session.kernel; "
                           "return k.status === 'idle' && k.connectionStatus === 'connected'; }", timeout=60_000)
    removal._run_all(page)
    cells = removal._wait(page, lambda cs: "after 2" in removal._text(cs[-1]) and cs[-1]["execution_count"] == 5,
                          "Restart & Run All stopped at the agent's attempt that raised")
    assert "replayed" in removal._text(cells[1])
    assert "NameError" in removal._text(cells[2]) and cells[2]["execution_count"] == 3
    page.close()
