"""The explorers' tables fit their panels in real JupyterLab (headless Chromium), Light and Dark:
each table's box is no wider than the widget panel holding it and scrolls the table inside it,
so no panel is cut on the right (issue 34: the per-strategy tables were, because an ipywidgets
HTML grows to its content's width)."""

from __future__ import annotations

import json
import time

import pytest

from tests.soak import first_by_default

from .test_jupyterlab import SHOTS, _open, _run_all, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import DARK, LIGHT, _put_notebook, _set_theme
from .test_readable import _READABLE_JS, EXPLORER, MIN_RATIO, POLICIES

pytestmark = _lab_marks

# For each table box: its width against the widget (the ipywidgets HTML) that holds it, the width
# of the table it scrolls, and every box of the panel between them that needs a sideways scroll.
_FIT_JS = """() => [...document.querySelectorAll('.jp-OutputArea-output .nbagent-panel-table')].map(box => {
  const widget = box.closest('.widget-html');
  const column = widget.parentElement;
  const table = box.querySelector('table');
  return {right: Math.round(box.getBoundingClientRect().right), limit: Math.round(widget.getBoundingClientRect().right),
          box: box.clientWidth, table: Math.round(table.getBoundingClientRect().width), scroll: box.scrollWidth,
          column_overflow: column.scrollWidth - column.clientWidth, text: table.innerText.slice(0, 30),
          wide: [...column.querySelectorAll('*')]
            .filter(e => e.getBoundingClientRect().right > column.getBoundingClientRect().right + 1).slice(0, 5)
            .map(e => [e.tagName, String(e.className.baseVal ?? e.className).slice(0, 40), e.getAttribute('style'),
                       e.textContent.slice(0, 60),
                       Math.round(e.getBoundingClientRect().width)])}; })"""


@pytest.mark.parametrize("kind", first_by_default(["explorer", "policies"]))
def test_the_explorers_tables_fit_their_panels_in_both_themes(browser, lab, kind):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    name = _put_notebook(lab, f"panels_{kind}.ipynb", "nbagent", {"explorer": EXPLORER, "policies": POLICIES}[kind])
    page = _open(browser, lab, name)
    page.set_viewport_size({"width": 1280, "height": 1000})
    found = {}
    try:
        _run_all(page)
        page.locator(".jp-OutputArea-output .nbagent-panel-table").first.wait_for(timeout=120_000)
        page.locator(".jp-OutputArea-output svg").first.wait_for(timeout=120_000)
        time.sleep(1.0)  # the last widgets of the output settle
        for theme, label in ((LIGHT, "light"), (DARK, "dark")):
            _set_theme(page, theme)
            boxes = page.locator(".nbagent-panel-table")
            boxes.nth(boxes.count() - 1).scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / f"panels_{kind}_{label}.png"))
            found[label] = {"fit": page.evaluate(_FIT_JS), "readable": page.evaluate(_READABLE_JS, MIN_RATIO)}
    finally:
        _set_theme(page, LIGHT)  # a lab setting: later tests expect the light theme
        page.close()
    (SHOTS / f"panels_{kind}.json").write_text(json.dumps(found, indent=1))
    for label, got in found.items():
        fits = got["fit"]
        assert len(fits) >= (6 if kind == "explorer" else 2), fits  # the summary and each strategy's table
        for fit in fits:
            assert fit["right"] <= fit["limit"] + 1, (label, fit)  # within its panel
            assert fit["scroll"] >= fit["table"] - 1, (label, fit)  # the whole table is reachable in its box
            assert fit["column_overflow"] <= 1, (label, fit)  # the panel itself needs no sideways scroll
        if kind == "explorer":  # its per-request tables are wider than a strategy's panel: they scroll in it
            assert any(f["table"] > f["box"] for f in fits), fits
        assert not got["readable"]["clipped"], (label, got["readable"]["clipped"][:10])
        assert not got["readable"]["low"], (label, got["readable"]["low"][:10])
