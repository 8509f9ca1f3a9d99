"""Dollar amounts in an agent cell's output stay dollar amounts, in JupyterLab and Notebook 7.

Both front-ends typeset LaTeX in HTML outputs: two ``$`` in one output (the header's "session
cost $0.0204 ($0.0102 of it spent before this kernel …)" after a replayed turn, or an answer
that says "$5 … $10") turned the text between them into math, the dollar signs gone, the amounts
in a math font. nbagent's HTML is marked so MathJax leaves it alone.
"""

from __future__ import annotations

import pytest

from .test_bridge_frontend import _kernel, _open, _require_installed_bridge
from .test_jupyterlab import SHOTS, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import _put_notebook

pytestmark = _lab_marks

ANSWER = "Apples cost $5 a box and pears $10 a box, so the pears cost $5 more."
SCRIPT = f'''
import nbagent.notebook.magics as _m
from nbagent.providers.simulated import ScriptedResponder, text_reply
s = _m.active_magics().new_session()
s.agent.simulated_api.responder = ScriptedResponder([text_reply({ANSWER!r})])
'''

OUTPUT_JS = """() => { const cells = window.__nb.content.widgets;
  const agent = cells.find(c => c.model.sharedModel.getSource().startsWith('%%agent'));
  const out = agent.node.querySelector('.jp-OutputArea');
  return {text: out ? out.innerText : '', math: out ? out.querySelectorAll('mjx-container').length : -1}; }"""


@pytest.mark.parametrize("frontend", ["jupyterlab", "notebook"])
def test_dollar_amounts_in_an_agent_cell_are_not_typeset_as_math(browser, lab, frontend):  # noqa: F811
    _require_installed_bridge()
    name = _put_notebook(lab, f"dollars_{frontend}.ipynb", "nbagent",
                         ["%load_ext nbagent", "%%agent\nWhich fruit costs more?"])
    page = _open(browser, lab, name, frontend)
    _kernel(page, "get_ipython().run_line_magic('load_ext', 'nbagent')\n" + SCRIPT)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    # The run is over when its last line is in: the static transcript has replaced the live view
    # (an update of the display: the output JupyterLab typesets).
    page.wait_for_function(
        "() => [...document.querySelectorAll('.nbagent-transcript')].some(e => e.innerText.includes('done: end_turn'))",
        timeout=90_000)
    # MathJax typesets after the output is attached: wait until the page has typeset something
    # (a markdown cell's math, added now) so a typeset of the agent cell would have happened too.
    page.evaluate("() => { const m = window.__nb.content.model.sharedModel; "
                  "m.insertCell(m.cells.length, {cell_type: 'markdown', source: 'a check: $x^2$'}); }")
    page.evaluate("() => { const nb = window.__nb.content; nb.activeCellIndex = nb.widgets.length - 1; "
                  "window.jupyterapp.commands.execute('notebook:run-cell'); }")
    page.wait_for_function("() => document.querySelectorAll('.jp-MarkdownOutput mjx-container').length > 0",
                           timeout=30_000)
    got = page.evaluate(OUTPUT_JS)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"dollar_amounts_{frontend}.png"), full_page=True)
    assert got["math"] == 0, got
    assert ANSWER in got["text"].replace("\n", " "), got["text"]
    assert "session spent $" in got["text"], got["text"]
