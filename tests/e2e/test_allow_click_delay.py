"""A permission card that appears under the cursor takes no stray click on Allow (real JupyterLab and
Notebook 7, headless Chromium).

The user clicks at a spot just as a card appears there: the click was meant for what was under the
cursor a moment before. Allow and Allow always now ignore activation for a moment after they appear
(``frontend/src/arming.ts``, 1000 ms), as browsers' own permission and download dialogs do; Deny is
never delayed, and nothing focuses Allow. Was: the click allowed the call.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .test_bridge_frontend import _open
from .test_jupyterlab import ROOT, _run_all, browser  # noqa: F401  (fixtures)
from .test_jupyterlab import lab as _lab
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import _put_notebook

pytestmark = _lab_marks

ARM_DELAY_MS = 1000  # frontend/src/arming.ts

SETUP = '''%load_ext nbagent
import nbagent
from nbagent.providers.simulated import ScriptedResponder, text_reply, tool_reply
s = nbagent.notebook.magics.active_magics().new_session()
# A card for each try (a click that comes late on a loaded machine allows that call: the next card is asked).
s.agent.simulated_api.responder = ScriptedResponder(
    [tool_reply([("python", {"code": "print(6 * 7)"})], text="Computing.")] * 3 + [text_reply("done")])'''

# Installed before the run: when each card's Allow first appears; and, when the test's (trusted)
# mouse press arrives, before any listener of the page sees it, what the newest card's buttons are.
_WATCH = """() => {
  window.__cards = []; window.__pressed = null;
  const allowed = () => [...document.querySelectorAll('button')].filter(b => b.textContent.trim().startsWith('Allow'));
  const known = new WeakSet();
  window.addEventListener('pointerdown', () => {
    const newest = allowed().slice(-2);
    window.__pressed = {at: performance.now(), disabled: newest.map(b => b.disabled),
                        focused: newest.includes(document.activeElement)};
  }, true);
  new MutationObserver(() => {
    const fresh = allowed().filter(b => !known.has(b));
    fresh.forEach(b => known.add(b));
    if (fresh.some(b => b.textContent.trim() === 'Allow')) window.__cards.push(performance.now());
  }).observe(document, {childList: true, subtree: true});
}"""
TRIES = 3


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[tuple[str, str]]:  # noqa: F811
    """JupyterLab with this checkout's built front-end (labextension/) ahead of the installed one."""
    with tempfile.TemporaryDirectory() as extra:
        (Path(extra) / "labextensions").mkdir()
        (Path(extra) / "labextensions" / "nbagent-bridge").symlink_to(ROOT / "labextension")
        before = os.environ.get("JUPYTER_PATH")
        os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (extra, before) if p)
        try:
            yield from _lab.__wrapped__(tmp_path_factory)  # type: ignore[attr-defined]
        finally:
            if before is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = before


@pytest.mark.parametrize("frontend", ["jupyterlab", "notebook"])
def test_a_click_as_the_card_appears_does_not_allow_the_call(browser, lab, frontend) -> None:  # noqa: F811
    page = _open(browser, lab, _put_notebook(lab, f"click_delay_{frontend}.ipynb", "nbagent",
                                             [SETUP, "%%agent\nWhat is 6 * 7?"]), frontend)
    page.evaluate(_WATCH)
    _run_all(page)
    late = 0
    for card in range(TRIES):
        pressed = _click_as_it_appears(page, card)
        came_after = pressed["at"] - page.evaluate("() => window.__cards")[card]
        if came_after < ARM_DELAY_MS or pressed["disabled"] == [True, True]:  # still arming when it came
            break
        # Too late to test the delay (a loaded machine): that click allowed the call; try the next card.
        late += 1
        page.locator("text=✓ allowed").nth(card).wait_for(timeout=30_000)
    else:
        pytest.skip(f"each of {TRIES} clicks came more than {ARM_DELAY_MS} ms after its card appeared")
    # Both Allow buttons inert when the stray click came, and neither focused (Enter would allow).
    assert pressed["disabled"] == [True, True] and pressed["focused"] is False
    allow = page.locator("button:text-is('Allow')").nth(card)
    page.wait_for_function("b => !b.disabled", arg=allow.element_handle(), timeout=10_000)  # armed after the delay
    page.locator("button:text-is('Deny')").nth(card).click()
    # The first answer the kernel gets wins: denied means the early click never reached it.
    page.locator("text=✗ denied").first.wait_for(timeout=30_000)
    assert page.locator("text=✓ allowed").count() == late
    page.close()


def _click_as_it_appears(page, card: int) -> dict:
    """Click the middle of card ``card``'s Allow as soon as it is on the page: the stray click."""
    allow = page.locator("button:text-is('Allow')").nth(card)
    allow.wait_for(state="attached", timeout=90_000)
    box = allow.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    cards, pressed = page.evaluate("() => [window.__cards, window.__pressed]")
    assert len(cards) == card + 1 and pressed is not None
    return pressed


# Something above the card grows by a line (text of a cell above, an output that updates): the card
# moves down under a cursor that rests where it was.
_GROW_ABOVE_CARD = """(px) => { const card = document.querySelector('.nbagent-prompt');
  const line = document.createElement('div'); line.style.height = px + 'px';
  card.parentElement.insertBefore(line, card); }"""


@pytest.mark.parametrize("frontend, width", [("jupyterlab", 640), ("notebook", 360)])
def test_a_click_aimed_at_deny_as_the_wrapped_card_moves_does_not_allow(browser, lab, frontend, width) -> None:  # noqa: F811
    """In a narrow notebook the card's row wraps into a column: "Allow always" (JupyterLab, 640-px window,
    file browser open) or Allow (Notebook 7, 360 px) sits right above Deny. Was: once Allow had armed,
    a line of content above the card moved it under a cursor resting on Deny, and the click allowed."""
    page = _open(browser, lab, _put_notebook(lab, f"moved_card_{frontend}_{width}.ipynb", "nbagent",
                                             [SETUP, "%%agent\nWhat is 6 * 7?"]), frontend)
    page.set_viewport_size({"width": width, "height": 800})
    _run_all(page)
    page.locator("button:text-is('Allow'):enabled").first.wait_for(timeout=90_000)  # armed
    deny = page.locator("button:text-is('Deny')").first
    deny.scroll_into_view_if_needed()
    box = deny.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.evaluate(_GROW_ABOVE_CARD, 20)
    under = page.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('button')?.innerText.trim()", [x, y])
    assert under is not None and under.startswith("Allow"), f"the layout no longer puts Allow above Deny: {under!r}"
    page.mouse.down()
    page.mouse.up()
    # Inert again (it moved), then armed a second later: the click above never reached the kernel.
    page.locator("button:text-is('Allow'):enabled").first.wait_for(timeout=10_000)
    page.locator("button:text-is('Deny')").first.click()
    page.locator("text=✗ denied").first.wait_for(timeout=30_000)
    assert page.locator("text=✓ allowed").count() == 0
    page.close()
