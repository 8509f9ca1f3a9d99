"""The permission card in real JupyterLab and Notebook 7 (headless Chromium): code that its layout keeps out of sight.

The card's input box scrolls (24em). A scripted model's call ``img = '<3,700 characters of
base64>';__import__('os').system(…)`` showed a wall of data above Allow, with the call rows below
in the box and the summary saying "2 lines" (attacker pass 25). The summary under the box, right
above the buttons, now says the line runs out of sight.

And a narrow notebook (JupyterLab in a 900-pixel window, its file browser open: the notebook is about
550 pixels wide) squeezed Allow and Deny to their icons, the reason box out of the card, while
"Allow always (this session)", the most permissive answer, stayed whole: the only label a user could
read (newcomer pass 26). The buttons now keep their labels and the row wraps; so do the retry countdown's
Retry now / Cancel, and Stop beside "waiting for the first token (1 s)" (it read "St…").
"""

from __future__ import annotations

import pytest

from .test_bridge_frontend import _open
from .test_jupyterlab import SHOTS, _run_all, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import _put_notebook

pytestmark = _lab_marks

SETUP = '''%load_ext nbagent
import nbagent
from nbagent.providers.simulated import ScriptedResponder, text_reply, tool_reply
BLOB = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg" * 40
CODE = "img = '" + BLOB + "';__import__('os').system('echo TAIL-CALL')\\nprint(len(img))"
s = nbagent.notebook.magics.active_magics().new_session()
s.agent.simulated_api.responder = ScriptedResponder([
    tool_reply([("python", {"code": CODE})], text="Decoding the image."),
    text_reply("done"),
])'''

_TAIL_HIDDEN = """() => {
  const pre = document.querySelector('pre.nbagent-code'), box = pre.parentElement;
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const k = n.textContent.indexOf('TAIL-CALL');
    if (k < 0) continue;
    const r = document.createRange(); r.setStart(n, k); r.setEnd(n, k + 9);
    return r.getBoundingClientRect().top >= box.getBoundingClientRect().bottom;
  }
  return null;
}"""


@pytest.mark.parametrize("frontend", ["jupyterlab", "notebook"])
def test_a_call_at_the_end_of_a_long_line_is_said_to_be_out_of_sight_above_allow(browser, lab, frontend) -> None:  # noqa: F811
    page = _open(browser, lab, _put_notebook(lab, f"long_line_card_{frontend}.ipynb", "nbagent",
                                             [SETUP, "%%agent\nHow big is the image?"]), frontend)
    _run_all(page)
    allow = page.locator("button:text-is('Allow')").first
    allow.wait_for(state="visible", timeout=90_000)
    assert page.evaluate(_TAIL_HIDDEN) is True  # the call is there, below the box's visible rows
    warning = page.locator("text=/line 1 is [0-9,]+ characters long/").first
    warning.wait_for(state="visible", timeout=10_000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"long_line_card_{frontend}.png"))
    w, a = warning.bounding_box(), allow.bounding_box()
    assert w is not None and a is not None and 0 < a["y"] - w["y"] < 120  # right above the buttons
    page.locator("button:text-is('Deny')").first.click()
    page.close()


_CLIPPED = """(selector) => {
  const button = document.querySelector(selector), card = button.closest('.widget-vbox');
  const box = card.getBoundingClientRect();
  const out = [];
  for (const el of card.querySelectorAll('button, input')) {
    const r = el.getBoundingClientRect();
    const cut = el.scrollWidth > el.clientWidth + 1 || r.left < box.left - 1 || r.right > box.right + 1
      || (el.tagName === 'INPUT' && r.width < 150);
    if (cut) out.push(`${el.innerText || el.placeholder}: ${Math.round(r.width)} px wide, ${el.scrollWidth} needed`);
  }
  return out;
}"""


@pytest.mark.parametrize("frontend, width", [("jupyterlab", 900), ("jupyterlab", 640), ("notebook", 480)])
def test_allow_and_deny_keep_their_labels_in_a_narrow_notebook(browser, lab, frontend, width) -> None:  # noqa: F811
    page = _open(browser, lab, _put_notebook(lab, f"narrow_card_{frontend}_{width}.ipynb", "nbagent", [
        '%load_ext nbagent\nimport pandas as pd\nsales = pd.DataFrame({"region": ["north", "south"], "revenue": [1.0, 2.0]})',
        "%%agent\nWhich region has the largest total revenue in `sales`?"]), frontend)
    page.set_viewport_size({"width": width, "height": 900})
    _run_all(page)
    page.locator("button:text-is('Allow')").first.wait_for(state="visible", timeout=90_000)
    page.locator(".nbagent-prompt").first.scroll_into_view_if_needed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"narrow_card_{frontend}_{width}.png"))
    assert page.evaluate(_CLIPPED, ".nbagent-prompt button") == []
    page.locator("button:text-is('Deny')").first.click()
    page.close()


def test_retry_now_and_cancel_keep_their_labels_in_a_narrow_notebook(browser, lab) -> None:  # noqa: F811
    page = _open(browser, lab, "03_retries_and_faults.ipynb", "jupyterlab")
    page.set_viewport_size({"width": 640, "height": 900})
    _run_all(page)
    retry = page.locator("button:has-text('Retry now')").first
    retry.wait_for(state="visible", timeout=90_000)
    retry.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "narrow_retry_countdown.png"))
    assert page.evaluate(_CLIPPED, "button.mod-danger") == []
    page.evaluate("() => { window.jupyterapp.commands.execute('kernelmenu:interrupt'); }")
    page.close()


def test_stop_keeps_its_label_in_a_narrow_notebook(browser, lab) -> None:  # noqa: F811
    page = _open(browser, lab, _put_notebook(lab, "narrow_stop.ipynb", "nbagent", [
        "%load_ext nbagent\n%config AgentMagics.first_token_latency = 20", "%%agent\nWhat is 2 + 2?"]), "jupyterlab")
    page.set_viewport_size({"width": 640, "height": 900})
    _run_all(page)
    stop = page.locator("button:has-text('Stop'):enabled").first
    stop.wait_for(state="visible", timeout=90_000)
    stop.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "narrow_stop.png"))
    assert page.evaluate(_CLIPPED, "button.mod-warning") == []  # was "St…"
    stop.click()
    page.close()
