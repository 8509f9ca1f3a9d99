"""Two dollar amounts in one HTML output ("$5 … $10") are typeset as math by JupyterLab and Notebook 7
unless its element says not to (``mathjax_ignore``): every HTML nbagent shows says so, the tables,
``%agent saw`` and an interrupted answer included (the review of newcomer pass 11, L6)."""

from __future__ import annotations

import pandas as pd

from nbagent.display.html import NO_TEX
from nbagent.display.tables import ReadableTable
from nbagent.notebook.saw import render_sent
from nbagent.notebook.view.text import TextBlock
from tests.notebook.test_saw import _requests


def _opens_with_no_tex(html: str) -> bool:
    return html.startswith("<div class=") and NO_TEX in html.split(">", 1)[0]


def test_a_table_saw_and_an_interrupted_answer_are_never_typeset_as_math() -> None:
    table = ReadableTable(pd.DataFrame({"request": [1], "cost": [0.0031], "note": ["$5 and $10"]}))._repr_html_()
    saw = render_sent(_requests(1, 10))._repr_mimebundle_()["text/html"]
    answer = TextBlock()
    answer.append("It costs $5 and $10 a month.")
    answer.interrupt("■")
    for html in (table, saw, answer.html()):
        assert _opens_with_no_tex(html), html[:200]
