"""The notebook tools' permission cards in real JupyterLab (headless Chromium): the edit's card shows
the cell as it is and as it will be (a diff, readable in the Light and Dark themes), the run's card
the source that will run, not a bare cell id; the kernel reads "Busy" while a card waits for Allow;
the cells the agent made or ran show the execution count they ran under, not ``[ ]:``.
"""

from __future__ import annotations

import json

from .test_bridge_frontend import _open, _require_installed_bridge
from .test_jupyterlab import SHOTS, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import DARK, LIGHT, _put_notebook, _set_theme
from .test_readable import _READABLE_JS, MIN_RATIO

pytestmark = _lab_marks

BRAIN = r'''
import re
import nbagent.notebook.magics as _m
from nbagent.providers.simulated import tool_reply, text_reply

def brain(body):
    results = [b for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        return tool_reply([("python", {"code": "print('made by the agent')"})])
    if len(results) == 1:
        return tool_reply([("notebook_read", {})])
    first = results[1]["content"]
    text = first if isinstance(first, str) else " ".join(x.get("text", "") for x in first)
    cell = re.search(r"id=(\S+) code\ntotal = 40", text).group(1)
    steps = [lambda: tool_reply([("notebook_edit", {"action": "replace", "cell_id": cell,
                                                    "source": "total = 42\nprint('total is', total)"})]),
             lambda: tool_reply([("notebook_run", {"cell_id": cell})]),
             lambda: text_reply("CARDS-DONE")]
    return steps[min(len(results) - 2, 2)]()

_m.active_magics().new_session(allow=("python",)).agent.simulated_api.responder = brain
'''

_CARD_JS = """() => [...document.querySelectorAll('.jp-OutputArea-output')].map(o => o.innerText).join('\\n')"""


def _diff_rows(page) -> list[tuple[str, str]]:
    return page.evaluate("() => [...document.querySelectorAll('table.nbagent-diff tr')].map(r => "
                         "[r.className, r.innerText.replace(/\\s+/g, ' ').trim()])")


_COUNTS_JS = """() => window.__nb.content.widgets.filter(c => c.model.type === 'code').map(c => [
  c.model.sharedModel.getSource().slice(0, 40), c.model.executionCount,
  c.node.querySelector('.jp-InputArea-prompt').textContent.trim()])"""
# textContent: a cell scrolled out of JupyterLab's windowed view is not rendered, and innerText reads it as ''.
_PROMPTS_SHOWN_JS = f"() => ({_COUNTS_JS})().every(([, count, prompt]) => count === null || prompt === `[${{count}}]:`)"


def test_the_edit_card_shows_a_diff_and_the_run_card_the_source(browser, lab):  # noqa: F811
    _require_installed_bridge()
    SHOTS.mkdir(parents=True, exist_ok=True)
    name = _put_notebook(lab, "cards.ipynb", "python3", [
        "%load_ext nbagent\n" + BRAIN, "total = 40\nprint('total is', total)", "%%agent\nFix the total."])
    page = _open(browser, lab, name, "jupyterlab")
    found = {}
    try:
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        allow = page.locator("button:text-is('Allow'):enabled").first
        allow.wait_for(state="visible", timeout=90_000)
        page.locator("table.nbagent-diff").first.wait_for(timeout=10_000)
        # The kernel reads busy while the card waits (the widgets' subshell messages once made it "Idle").
        page.wait_for_function("() => window.__nb.sessionContext.session.kernel.status === 'busy'", timeout=10_000)
        page.locator(".jp-StatusBar-TextItem", has_text="| Busy").first.wait_for(timeout=10_000)
        rows = _diff_rows(page)
        assert ["nbagent-diff-removed", "1 − total = 40"] in [list(r) for r in rows], rows
        assert ["nbagent-diff-added", "1 + total = 42"] in [list(r) for r in rows], rows
        assert any(r[0] == "nbagent-diff-same" and "print('total is', total)" in r[1] for r in rows), rows
        assert "replace cell 1 (id " in page.evaluate(_CARD_JS)
        for theme, label in ((LIGHT, "light"), (DARK, "dark")):
            _set_theme(page, theme)
            page.locator("table.nbagent-diff").first.scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / f"card_edit_diff_{label}.png"))
            found[label] = page.evaluate(_READABLE_JS, MIN_RATIO)
        _set_theme(page, LIGHT)
        first = allow.element_handle()
        allow.click()

        page.get_by_text("in the kernel", exact=False).first.wait_for(timeout=60_000)
        # The edit card's buttons are disabled once the kernel has its answer; until then they still
        # match ``:enabled`` (a click resolved to one waited on it for 30 s). The run card comes after it.
        page.wait_for_function("(b) => !b.isConnected || b.disabled", arg=first, timeout=60_000)
        run_allow = page.locator("button:text-is('Allow'):enabled").last
        run_allow.wait_for(state="visible", timeout=60_000)
        text = page.evaluate(_CARD_JS)
        assert "run cell 1 (id " in text and "print('total is', total)" in text
        assert '"cell_id"' not in text.split("run cell 1")[1]  # the source, not the bare input
        page.screenshot(path=str(SHOTS / "card_run_source.png"))
        run_allow.click()
        page.get_by_text("CARDS-DONE").first.wait_for(timeout=60_000)
        page.get_by_text("total is 42").first.wait_for(timeout=10_000)
        page.wait_for_function("() => window.__nb.sessionContext.session.kernel.status === 'idle'", timeout=30_000)
        # The agent cell's count comes with its execute_reply, on the shell channel: the page can see the
        # kernel idle (iopub) before it. So: the count, then the prompts following the model's counts.
        page.wait_for_function(f"() => ({_COUNTS_JS})().some(([source, count]) => source.startsWith('%%agent') "
                               f"&& count !== null) && ({_PROMPTS_SHOWN_JS})()", timeout=10_000)
        counts = {source: (count, prompt) for source, count, prompt in page.evaluate(_COUNTS_JS)}
        agent_count = counts["%%agent\nFix the total."][0]
        assert isinstance(agent_count, int), counts
        assert counts["print('made by the agent')"] == (agent_count, f"[{agent_count}]:"), counts
        assert counts["total = 42\nprint('total is', total)"] == (agent_count, f"[{agent_count}]:"), counts
    except Exception:
        page.screenshot(path=str(SHOTS / "cards_failure.png"), full_page=True)
        raise
    finally:
        _set_theme(page, LIGHT)  # a lab setting: later tests expect the light theme
        page.close()
    (SHOTS / "cards_readable.json").write_text(json.dumps(found, indent=1))
    for label, got in found.items():
        # ipywidgets' own button styles (white on its green and teal) are not nbagent's colours.
        low = [t for t in got["low"] if t["text"] not in ("Allow", "Allow always (this session)")]
        assert not low, (label, low[:15])
        assert not got["clipped"], (label, got["clipped"][:15])
