"""A lesson handed to students, in real JupyterLab (headless Chromium): the notebook a student
receives is untrusted until they run it, so JupyterLab sanitises its saved HTML outputs. The
explorers' saved outputs must read as tables and text there, not as the labels of their charts
run together ("0250k500k750k1Mwindowmax allowedrequest 15tokens sent (shaded: cache read)").
"""

from __future__ import annotations

import json
import urllib.request

import nbformat
import pytest

from nbagent import explore, explore_policies

from .test_jupyterlab import _open, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks

pytestmark = _lab_marks

# The text a reader sees in the outputs: every text node with a box of some width (the sanitiser
# keeps a dropped <svg>'s text as plain text nodes), and whether each rendered SVG's labels show.
_VISIBLE_JS = """() => {
  const out = [...document.querySelectorAll('.jp-OutputArea-output')];
  const seen = [];
  for (const area of out) {
    const walk = document.createTreeWalker(area, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const range = document.createRange(); range.selectNodeContents(n);
      if (range.getBoundingClientRect().width > 0 && n.textContent.trim()) seen.push(n.textContent.trim());
    }
  }
  return {visible: seen.join(' | '), svgs: out.reduce((k, a) => k + a.querySelectorAll('svg').length, 0),
          trusted: window.jupyterapp.shell.currentWidget.content.model.cells.get(0).trusted};
}"""

EXPLORERS = {
    "explorer": (lambda: explore(window=8_000, requests=12), ["tokens sent (shaded: cache read)", ": first pair"]),
    "policies": (lambda: explore_policies(requests=12, large_results=4, planted=2, window=30_000), ["tokens sent per request"]),
}


def _received(lab, name: str, bundle: dict) -> None:  # noqa: F811
    """A notebook as a teacher saved it and a student received it: the output the explorer
    displayed (its widget view, whose state was not saved, and its HTML), no trust signature."""
    base, token = lab
    cell = nbformat.v4.new_code_cell("import nbagent\nnbagent.explore()", execution_count=1, outputs=[
        nbformat.v4.new_output("display_data", data=bundle)])
    nb = nbformat.v4.new_notebook(cells=[cell], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                          "language": "python"}})
    body = json.dumps({"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))})
    req = urllib.request.Request(f"{base}/api/contents/{name}?token={token}", data=body.encode(), method="PUT",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()


@pytest.mark.parametrize("kind", ["explorer", "policies"])
def test_a_received_explorer_output_shows_no_chart_labels_run_together(browser, lab, kind):  # noqa: F811
    make, labels = EXPLORERS[kind]
    bundle = {k: v for k, v in make()._repr_mimebundle_().items() if k != "text/plain"}
    assert "<svg" in bundle["text/html"]
    name = f"handout_{kind}.ipynb"
    _received(lab, name, {**bundle, "text/plain": "<explorer>"})
    page = _open(browser, lab, name)
    page.wait_for_selector(".jp-OutputArea-output table", timeout=30_000)
    seen = page.evaluate(_VISIBLE_JS)

    assert seen["trusted"] is False and seen["svgs"] == 0  # sanitised: the case a student opens
    for label in labels:
        assert label not in seen["visible"], seen["visible"][:600]
    assert "strategy" in seen["visible"] or "policy" in seen["visible"]  # the tables still read
    page.close()
