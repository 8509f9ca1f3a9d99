"""A browser reload, and the notebook closed and opened again, on a running kernel (JupyterLab 4,
headless Chromium): the new page (a new kernel connection) never saw the kernel's ``comm_open``, yet
the first agent cell after it gets its code cells below it, its mark and its record at once, with no
"no notebook bridge" notice (before: a 10 s stall, then one plain ``set_next_input`` cell and no
record). And a reload while Allow / Deny waits never leaves the kernel Busy on a prompt that no page
shows: the kernel asks every few seconds whether the page still runs the cell, and denies the call
with a notice when it does not. A kernel restart while Allow / Deny waits retires the prompt on the
page (disabled, and a line saying the call never ran)."""

from __future__ import annotations

import pytest

from nbagent.notebook.document.page import RELOADED_NOTE

from .test_bridge_frontend import _kernel, _require_installed_bridge
from .test_cell_removal import MINE, _append, _made, _put, _run_all, _run_cell, _text, _wait
from .test_jupyterlab import browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks

pytestmark = _lab_marks

FIRST = "%%agent --allow python\nWhat is 2 * 3?"
NOTICE = "no notebook bridge"


def _ready(page, name: str) -> None:
    page.wait_for_function(
        "(name) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget; "
        "if (!w || !w.context || w.context.path !== name) return false; "
        "const k = w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel; "
        "if (k && k.status === 'idle') { window.__nb = w; return true; } return false; }", arg=name, timeout=60_000)


def test_the_first_agent_cell_after_a_reload_or_a_reopen_gets_its_cells_at_once(browser, lab):  # noqa: F811
    _require_installed_bridge()
    base, token = lab
    name = _put(lab, "reload_first_agent_cell.ipynb", "python3", ["%load_ext nbagent", FIRST])
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{base}/lab/tree/{name}?token={token}")
    _ready(page, name)
    _run_all(page)
    _wait(page, lambda cs: len(_made(cs)) == 1, "the first agent cell made no cell")
    _save(page)
    page.reload()  # same kernel, new page: a new kernel connection that never saw the comm open
    _ready(page, name)
    _agent_cell_gets_its_cells_at_once(page, "%%agent --allow python\nWhat is 4 * 5?", "4 * 5")
    _save(page)
    page.evaluate("() => window.__nb.close()")  # the tab closed, the kernel left running
    page.evaluate("(name) => { window.jupyterapp.commands.execute('docmanager:open', {path: name}); }", name)
    _ready(page, name)
    _agent_cell_gets_its_cells_at_once(page, "%%agent --allow python\nWhat is 6 * 7?", "6 * 7")
    page.close()


def test_a_reload_while_allow_deny_waits_never_leaves_the_kernel_busy(browser, lab):  # noqa: F811
    _require_installed_bridge()
    base, token = lab
    name = _put(lab, "reload_during_prompt.ipynb", "python3", ["%load_ext nbagent", "%%agent\nWhat is 17 * 23?", MINE])
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{base}/lab/tree/{name}?token={token}")
    _ready(page, name)
    _run_cell(page, 0)
    _wait(page, lambda cs: cs[0]["execution_count"] is not None, "%load_ext did not run")
    _run_cell(page, 1)
    page.locator("button:text-is('Allow'):enabled").first.wait_for(timeout=60_000)
    page.reload()  # the prompt's page is gone; the kernel still runs the agent cell
    page.wait_for_function("(name) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget; "
                           "if (w && w.context && w.context.path === name && w.sessionContext.isReady) "
                           "{ window.__nb = w; return true; } return false; }", arg=name, timeout=60_000)
    assert page.locator("button:text-is('Allow'):enabled").count() == 0  # no page shows the prompt
    _run_cell(page, 2)  # queued behind the agent cell, which must end by itself
    cells = _wait(page, lambda cs: "my own cell" in _text(cs[2]), "the kernel kept waiting on the lost prompt", 90)
    # The turn's outputs went to the page that ran the cell: the new page (and what it saves) gets
    # the turn as it ended, written into the agent cell, instead of what was saved before it.
    agent = _text(cells[1])
    assert RELOADED_NOTE.strip() in agent and "done:" in agent, agent[-600:]
    page.close()


def test_closing_the_notebook_while_allow_deny_waits_never_leaves_the_kernel_busy(browser, lab):  # noqa: F811
    """Every tab of the notebook closed while Allow / Deny waits (the kernel left running): no page
    answers the kernel's check any more, and it waited Busy until the notebook was opened again.
    Past ``NO_PAGE_S`` (3 s here, set by the notebook's first cell) the call is denied and the cell ends."""
    import json
    import time
    import urllib.request

    _require_installed_bridge()
    base, token = lab
    setup = "%load_ext nbagent\nimport nbagent.notebook.waiting as _waiting\n_waiting.NO_PAGE_S = 3.0"
    name = _put(lab, "close_during_prompt.ipynb", "python3", [setup, "%%agent\nWhat is 17 * 23?"])
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{base}/lab/tree/{name}?token={token}")
    _ready(page, name)
    _run_cell(page, 0)
    _wait(page, lambda cs: cs[0]["execution_count"] is not None, "%load_ext did not run")
    kernel_id = page.evaluate("() => window.__nb.sessionContext.session.kernel.id")
    _run_cell(page, 1)
    page.locator("button:text-is('Allow'):enabled").first.wait_for(timeout=60_000)
    _save(page)
    page.evaluate("() => window.__nb.close()")  # the tab closed, the kernel left running
    page.wait_for_function("() => !window.__nb.isAttached", timeout=30_000)

    def state() -> str:
        with urllib.request.urlopen(f"{base}/api/kernels/{kernel_id}?token={token}", timeout=10) as reply:
            return str(json.load(reply)["execution_state"])

    deadline = time.monotonic() + 90
    while state() != "idle":  # polling the server's view of the kernel: it has no event to wait on
        assert time.monotonic() < deadline, "the kernel stayed busy on a prompt no page shows"
        time.sleep(0.5)
    page.close()


def _save(page) -> None:
    # The save command, not a click then Ctrl+S: the click can land on an output whose widget keeps
    # the shortcut to itself, and the key then does nothing (test_cell_removal saw it on loaded runs).
    # Awaited: the command's promise settles once the file is written.
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.__nb.context.model.dirty", timeout=60_000)


def _agent_cell_gets_its_cells_at_once(page, source: str, code: str) -> None:
    at = _append(page, source)
    _run_cell(page, at)
    cells = _wait(page, lambda cs: len(cs) > at + 1 and cs[at + 1]["metadata"].get("nbagent", {}).get("agent_cell")
                  == cs[at]["id"] and "done:" in _text(cs[at]), "the first agent cell on the new page made no cell")
    agent = cells[at]
    # The stall this guards against is the bridge's request timing out (REQUEST_TIMEOUT_S): that ends
    # in the notice and a plain cell without the record, both checked here. Not a wall-clock bound:
    # a loaded CI machine can take longer than that for the whole turn without any stall.
    assert NOTICE not in _text(agent), _text(agent)[-400:]
    assert agent["metadata"]["nbagent"]["kind"] == "agent" and "record" in agent["metadata"]["nbagent"]
    assert cells[at + 1]["metadata"]["nbagent"]["kind"] == "code" and code in cells[at + 1]["source"]


def test_a_kernel_restart_while_allow_deny_waits_retires_the_prompt(browser, lab):  # noqa: F811
    # The widgets of a restarted kernel stay on the page looking live; a click on them reached
    # nothing. The page now disables them and says the call never ran.
    _require_installed_bridge()
    base, token = lab
    name = _put(lab, "restart_during_prompt.ipynb", "python3", ["%load_ext nbagent", "%%agent\nWhat is 17 * 23?", MINE])
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{base}/lab/tree/{name}?token={token}")
    _ready(page, name)
    _run_all(page)
    page.locator("button:text-is('Allow'):enabled").first.wait_for(timeout=60_000)
    page.evaluate("() => window.__nb.sessionContext.restartKernel()")
    page.locator(".nbagent-prompt-retired-note").first.wait_for(timeout=60_000)
    assert page.locator(".nbagent-prompt button:enabled").count() == 0
    assert "never ran" in page.locator(".nbagent-prompt-retired-note").first.inner_text()
    _ready(page, name)
    _run_cell(page, 2)  # the restarted kernel runs the user's next cell
    _wait(page, lambda cs: "my own cell" in _text(cs[2]), "the restarted kernel did not run the next cell", 60)
    page.close()


SLOW = r"""
import nbagent.notebook.magics as _m
from nbagent.providers.simulated import ScriptedResponder, text_reply, tool_reply
_m.active_magics().new_session(allow=("python",)).agent.simulated_api.responder = ScriptedResponder([
    tool_reply([("python", {"code": "import time\nfor _ in range(1200): time.sleep(0.05)"})]), text_reply("done")])
"""


@pytest.mark.soak  # the page's state, not the user's cells: the restart during Allow stays in the default run
def test_a_kernel_restart_while_a_turn_runs_marks_it_never_finished(browser, lab):  # noqa: F811
    # The live view of a run cut by a restart stayed on the page as if it went on (a Stop button,
    # a running card); now the page says the turn never finished.
    _require_installed_bridge()
    base, token = lab
    name = _put(lab, "restart_during_run.ipynb", "python3", ["%load_ext nbagent", "%%agent\nCount slowly.", MINE])
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{base}/lab/tree/{name}?token={token}")
    _ready(page, name)
    _run_cell(page, 0)
    _wait(page, lambda cs: cs[0]["execution_count"] is not None, "%load_ext did not run")
    _kernel(page, SLOW)
    _run_cell(page, 1)
    page.locator(".nbagent-run").first.wait_for(timeout=60_000)
    page.evaluate("() => window.__nb.sessionContext.restartKernel()")
    note = page.locator(".nbagent-run-retired-note").first
    note.wait_for(timeout=60_000)
    assert "never finished" in note.inner_text()
    assert page.locator(".nbagent-run button:enabled").count() == 0
    page.close()


@pytest.mark.parametrize("frontend", ["jupyterlab", "notebook"])
def test_the_agent_cell_run_again_while_allow_deny_waits_asks_again_in_its_next_run(browser, lab, frontend):  # noqa: F811
    """Shift+Enter again on the agent cell while its Allow / Deny waits: the page queues a second run
    and empties the cell (the prompt with it) though it shows it running. Was: the kernel waited Busy
    for ever on that prompt; then (once given up) the first run's transcript, written into the cell,
    untrusted it, so the second run's Allow / Deny rendered as plain text, unseen again. Now the first
    run's call is denied with a notice and the second run asks, in the cell, and ends."""
    from .test_bridge_frontend import _open
    from .test_two_windows import ASKS

    _require_installed_bridge()
    name = _put(lab, f"rerun_while_asking_{frontend}.ipynb", "python3", ["%load_ext nbagent", ASKS, MINE])
    page = _open(browser, lab, name, frontend)
    _run_cell(page, 0)
    _wait(page, lambda cs: cs[0]["execution_count"] is not None, "%load_ext did not run")
    _run_cell(page, 1)
    allow = page.locator("button:text-is('Allow'):enabled")
    allow.first.wait_for(timeout=60_000)
    first_run_allow = allow.first.element_handle()
    _run_cell(page, 1)  # again, while the first run asks
    # The page empties the cell (the first run's prompt with it) before the next Allow counts: an
    # Allow found before that would be the first run's, and the second run's last call never answered.
    page.wait_for_function("(b) => !b.isConnected", arg=first_run_allow, timeout=30_000)
    for _ in range(2):  # the second run's two calls ask, shown as buttons
        allow.first.wait_for(timeout=90_000)
        button = allow.first.element_handle()
        button.click()
        page.wait_for_function("(b) => !b.isConnected || b.disabled || b.classList.contains('jp-mod-disabled')",
                               arg=button, timeout=30_000)
    cells = _wait(page, lambda cs: len(_made(cs)) == 2 and "done:" in _text(cs[1]), "the second run did not end")
    assert [c["source"] for c in _made(cells)] == ["2 * 3", "4 * 5"] and cells[-1]["source"] == MINE
    page.close()


def test_an_agent_call_inside_an_output_widget_shown_in_another_cell_asks_there(browser, lab):  # noqa: F811
    """``with out:`` around the agent call, ``out`` an ipywidgets Output displayed by an earlier cell:
    the run's live view and its Allow / Deny show in that widget; the running cell has no outputs.
    Was (nb24): taken for a cell run again while it asked, so each call was denied unasked
    ("nobody could see Allow / Deny") with the widget on screen."""
    from .test_bridge_frontend import _open
    from .test_cell_removal import _cells, _idle

    _require_installed_bridge()
    out = "from ipywidgets import Output\nout = Output()\ndisplay(out)"
    call = 'with out:\n    get_ipython().run_cell_magic("agent", "", "What is 2 * 3 and 4 * 5?")'
    name = _put(lab, "agent_in_an_output_widget.ipynb", "python3", ["%load_ext nbagent", out, call])
    page = _open(browser, lab, name, "jupyterlab")
    for index in (0, 1):
        _run_cell(page, index)
        _wait(page, lambda cs, i=index: cs[i]["execution_count"] is not None, f"cell {index} did not run")
    _run_cell(page, 2)
    allow = page.locator(".jp-Cell").nth(1).locator("button:text-is('Allow'):enabled")
    for _ in range(2):  # its two python calls ask, in the Output widget of cell 1
        allow.first.wait_for(timeout=90_000)
        button = allow.first.element_handle()
        button.click()
        page.wait_for_function("(b) => !b.isConnected || b.disabled || b.classList.contains('jp-mod-disabled')",
                               arg=button, timeout=30_000)
    _wait(page, lambda cs: cs[2]["execution_count"] is not None, "the agent call did not end")
    shown = page.locator(".jp-Cell").nth(1).inner_text()
    assert "done:" in shown and "nobody could see" not in shown, shown[-2000:]
    assert _idle(page) and _cells(page)[2]["outputs"] == []
    page.close()
