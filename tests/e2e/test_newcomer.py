"""A newcomer's edges in real JupyterLab + Chromium, on both kernels: a Deny reason typed at human
speed arrives whole, a pending permission prompt is readable in light and dark themes, and the
kernel's interrupt (■) ends a tool's infinite loop like a cell's, keeping the kernel's state.

Notebooks are written through the server's contents API into the ``lab`` fixture's folder.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request

import nbformat
import pytest

from tests.soak import first_by_default

from .test_jupyterlab import SHOTS, _open, _run_all, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks

pytestmark = _lab_marks

KERNELS = ["nbagent", "python3"]
LIGHT, DARK = "JupyterLab Light", "JupyterLab Dark"


def _put_notebook(lab, name: str, kernel: str, cells: list[str]) -> str:  # noqa: F811
    base, token = lab
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells], metadata={
        "kernelspec": {"name": kernel, "display_name": kernel, "language": "python"}})
    body = json.dumps({"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))})
    req = urllib.request.Request(f"{base}/api/contents/{name}?token={token}", data=body.encode(), method="PUT",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()
    return name


def _pending_prompt_page(browser, lab, kernel: str, tag: str):  # noqa: F811
    name = _put_notebook(lab, f"deny_{tag}_{kernel}.ipynb", kernel, [
        "%load_ext nbagent\nimport nbagent",
        "%%agent\nWhat is 17 * 23?",
    ])
    page = _open(browser, lab, name)
    _run_all(page)
    page.locator("button:text-is('Deny')").first.wait_for(state="visible", timeout=60_000)
    return page


_CONTRAST_JS = """() => {
  const el = document.querySelector('.nbagent-code');
  if (!el) return null;
  const parse = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  // The first opaque background from the box outwards is what the text is read against.
  let node = el, bg = null;
  while (node && node.nodeType === 1) {
    const v = parse(getComputedStyle(node).backgroundColor);
    if (v.length >= 3 && (v.length < 4 || v[3] > 0.5)) { bg = v; break; }
    node = node.parentElement;
  }
  bg = bg || [255, 255, 255];
  const fg = parse(getComputedStyle(el).color);
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return {ratio: (a + 0.05) / (b + 0.05), fg: getComputedStyle(el).color, bg: bg.join(',')};
}"""


def _set_theme(page, theme: str) -> None:
    page.evaluate(f"() => window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{theme}'}})")
    light = "true" if theme == LIGHT else "false"
    page.wait_for_function(f"document.body.dataset.jpThemeLight === '{light}'", timeout=30_000)
    time.sleep(0.8)  # the theme's stylesheet settles


@pytest.mark.parametrize("kernel", first_by_default(KERNELS[::-1]))  # the stock kernel by default
def test_typed_deny_reason_arrives_whole(browser, lab, kernel):  # noqa: F811
    page = _pending_prompt_page(browser, lab, kernel, "typed")
    box = page.locator("input[placeholder^='reason for denying']").first
    box.click()
    box.type("No code please", delay=120)  # key by key, at human speed: not fill, not paste
    box.press("Enter")  # Enter in the reason box denies
    try:
        page.get_by_text("denied: No code please").first.wait_for(timeout=30_000)
        # The model got it too: the demo brain's summary quotes the tool result it was sent.
        page.get_by_text("No code please", exact=False).nth(1).wait_for(timeout=30_000)
    except Exception:
        page.screenshot(path=str(SHOTS / f"typed_reason_failure_{kernel}.png"), full_page=True)
        raise
    assert page.get_by_text("denied: N", exact=True).count() == 0
    page.close()


@pytest.mark.parametrize("kernel", first_by_default(KERNELS[::-1]))  # the stock kernel by default
def test_pending_prompt_code_is_readable_in_light_and_dark_theme(browser, lab, kernel):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = _pending_prompt_page(browser, lab, kernel, "theme")
    ratios = {}
    try:
        for theme, label in ((LIGHT, "light"), (DARK, "dark")):
            _set_theme(page, theme)
            page.screenshot(path=str(SHOTS / f"permission_prompt_{label}_{kernel}.png"), full_page=False)
            ratios[label] = page.evaluate(_CONTRAST_JS)
    finally:
        _set_theme(page, LIGHT)  # the theme is a lab setting: later tests expect the light one
    for label, got in ratios.items():
        assert got is not None, "no code box in the pending prompt"
        assert got["ratio"] >= 4.5, (label, got)
    page.locator("button:text-is('Deny')").first.click()
    page.close()


@pytest.mark.parametrize("kernel", first_by_default(KERNELS[::-1]))  # the stock kernel by default
def test_interrupt_ends_a_tools_infinite_loop_and_keeps_the_kernel(browser, lab, kernel):  # noqa: F811
    name = _put_notebook(lab, f"interrupt_{kernel}.ipynb", kernel, [
        "%load_ext nbagent\nimport nbagent\nkept = 41",
        "from nbagent.providers.simulated.script import ScriptedResponder, tool_reply, text_reply\n"
        "nbagent.session().agent.simulated_api.responder = ScriptedResponder(\n"
        "    [tool_reply('python', {'code': 'while True: pass'}), text_reply('never')])",
        "%%agent --allow python\nLoop forever, please.",
        "print('state kept', kept + 1)",
    ])
    page = _open(browser, lab, name)
    _run_all(page)  # Run All stops at the interrupted cell, so the last cell runs by itself below
    # The tool card's code box (the same text is in cell 2's source, which is no sign of a run).
    page.locator(".jp-OutputArea-output .nbagent-code", has_text="while True: pass").first.wait_for(timeout=60_000)
    # The loop is spinning in the kernel: the tool's clock has advanced (a fixed 1.5 s sleep assumed
    # it; a loaded machine can take longer to start the tool).
    page.get_by_text(re.compile(r"running python \([1-9]\d* s\)")).first.wait_for(timeout=60_000)
    started = time.monotonic()
    page.locator("jp-button[data-command='notebook:interrupt-kernel'], "
                 "button[data-command='notebook:interrupt-kernel']").first.click()
    try:
        page.get_by_text("■ interrupted — history kept").first.wait_for(timeout=60_000)
        elapsed = time.monotonic() - started
        page.wait_for_function(
            "(() => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;"
            " return k.status === 'idle'; })()", timeout=60_000)
        page.evaluate("""() => { const w = window.jupyterapp.shell.currentWidget;
            w.content.activeCellIndex = 3; window.jupyterapp.commands.execute('notebook:run-cell'); }""")
        page.get_by_text("state kept 42").first.wait_for(timeout=60_000)
    except Exception:
        page.screenshot(path=str(SHOTS / f"interrupt_failure_{kernel}.png"), full_page=True)
        raise
    page.screenshot(path=str(SHOTS / f"interrupted_{kernel}.png"), full_page=True)
    # Not stopped, the loop never ends; 2 s (click, kernel round trip, render) left a loaded CI machine little room.
    assert elapsed < 15.0, elapsed
    assert page.locator("text=CancelledError").count() == 0
    assert page.locator("text=Traceback").count() == 0
    page.close()
