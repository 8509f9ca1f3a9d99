"""The live view's header in a narrow notebook, in real JupyterLab and Notebook 7 (headless Chromium).

In JupyterLab in a 640-pixel window with the file browser open, the header's row (model, context
gauge, context tokens, session spent) broke the model id at its hyphens ("claude-sonnet-" over
"5-5") and squeezed the gauge to a few pixels (newcomer pass 26). The model id now stays on one
line and the row wraps instead, the gauge keeping a readable width; a wide notebook keeps one row.
"""

from __future__ import annotations

import pytest

from .test_bridge_frontend import _open
from .test_jupyterlab import SHOTS, _run_all, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import _put_notebook

pytestmark = _lab_marks

MODEL = "claude-sonnet-4-5-20250929"

_HEADER = """(model) => {
  const name = [...document.querySelectorAll('b')].find(b => b.textContent === model);
  if (!name) return null;
  const row = name.closest('.widget-hbox');
  const gauge = row.querySelector('.progress, .widget-inline-hbox progress, .widget-progress');
  const g = gauge.getBoundingClientRect(), n = name.getBoundingClientRect();
  return {lines: name.getClientRects().length, gauge: g.width, oneRow: Math.abs((g.top + g.bottom) - (n.top + n.bottom)) < 24,
          nameRight: name.getBoundingClientRect().right, rowRight: row.getBoundingClientRect().right};
}"""


@pytest.mark.parametrize("frontend, width", [("jupyterlab", 640), ("notebook", 420), ("jupyterlab", 1400)])
def test_the_model_id_stays_whole_and_the_gauge_readable_in_a_narrow_notebook(browser, lab, frontend, width) -> None:  # noqa: F811
    page = _open(browser, lab, _put_notebook(lab, f"narrow_header_{frontend}_{width}.ipynb", "nbagent", [
        "%load_ext nbagent", f"%%agent --model {MODEL}\nWhat is 2 + 2?"]), frontend)
    page.set_viewport_size({"width": width, "height": 900})
    _run_all(page)
    header = page.locator(f"b:text-is('{MODEL}')").first
    header.wait_for(state="visible", timeout=90_000)
    header.scroll_into_view_if_needed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"narrow_header_{frontend}_{width}.png"))
    found = page.evaluate(_HEADER, MODEL)
    assert found is not None
    assert found["lines"] == 1, found  # was 2: "claude-sonnet-4-5-" / "20250929"
    assert found["gauge"] >= 80, found  # was a few pixels
    assert found["nameRight"] <= found["rowRight"] + 1, found  # whole, not cut at the row's edge
    assert found["oneRow"] is (width >= 1400), found  # wraps only where the row is too narrow
    page.close()
