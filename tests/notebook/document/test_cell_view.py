"""What a page shows of one cell, from its nbformat JSON: the fields a ``find`` reply adds (the
front-end's own reading of them is tested against a real YNotebook in frontend/test/ops.test.mjs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nbagent.notebook.document.cell_view import MAX_WIDGETS, heading_level, shown_of, under_collapsed_heading

CASES = json.loads((Path(__file__).parents[3] / "frontend" / "test" / "heading_cases.json").read_text())["cases"]


def _md(source: str, collapsed: bool = False) -> Any:
    return {"cell_type": "markdown", "source": source,
            "metadata": {"jp-MarkdownHeadingCollapsed": True} if collapsed else {}}


def _view(model_id: str) -> Any:
    return {"output_type": "display_data", "metadata": {},
            "data": {"application/vnd.jupyter.widget-view+json": {"model_id": model_id}, "text/plain": "VBox()"}}


def test_a_collapsed_heading_hides_its_section_up_to_the_next_heading_of_its_level() -> None:
    code: Any = {"cell_type": "code", "source": "x = 1", "metadata": {}}
    assert under_collapsed_heading([_md("# A", collapsed=True), _md("## A.1"), code])
    assert not under_collapsed_heading([_md("## A.1", collapsed=True), _md("# B"), code])
    assert not under_collapsed_heading([_md("# A", collapsed=True), _md("# B"), code])
    assert not under_collapsed_heading([_md("# A"), _md("text, no heading"), code])


@pytest.mark.parametrize(("source", "level"), CASES)
def test_a_markdown_cells_level_is_its_highest_heading_as_the_front_end_reads_it(source: str, level: int | None) -> None:
    assert heading_level(source) == level


def test_a_section_ends_at_an_underlined_or_html_heading_not_at_a_hash_in_a_code_fence() -> None:
    code: Any = {"cell_type": "code", "source": "x = 1", "metadata": {}}
    assert under_collapsed_heading([_md("## A", collapsed=True), _md("```\n# setup\n```"), code])
    assert not under_collapsed_heading([_md("## A", collapsed=True), _md("Results\n---"), code])
    assert not under_collapsed_heading([_md("# A", collapsed=True), _md("Results\n======="), code])
    assert not under_collapsed_heading([_md("# A", collapsed=True), _md("<h1>Results</h1>"), code])
    assert not under_collapsed_heading([_md("# A", collapsed=True), _md("  # B"), code])
    assert not under_collapsed_heading([_md("## A", collapsed=True), _md("### x\n# Part 2"), code])


def test_a_cell_says_its_outputs_the_widgets_they_view_and_whether_they_are_hidden() -> None:
    stream = {"output_type": "stream", "name": "stdout", "text": "serving\n"}
    serve: Any = {"cell_type": "code", "source": "%agent serve", "metadata": {}, "outputs": [stream, _view("panel-1")]}
    assert shown_of([_md("# Sales"), serve], 1) == {
        "outputs": 2, "widgets": ["panel-1"], "outputs_hidden": False, "in_collapsed_section": False}
    serve["metadata"] = {"jupyter": {"outputs_hidden": True}}
    assert shown_of([serve], 0)["outputs_hidden"] is True
    serve["metadata"] = {"collapsed": True}
    assert shown_of([serve], 0)["outputs_hidden"] is True
    assert shown_of([_md("# Sales", collapsed=True), serve], 1)["in_collapsed_section"] is True
    assert shown_of([_md("# Sales")], 0) == {"outputs": 0, "widgets": [], "outputs_hidden": False,
                                            "in_collapsed_section": False}


def test_a_received_cells_odd_outputs_are_read_without_error_and_the_widget_list_is_bounded() -> None:
    odd: Any = {"cell_type": "code", "metadata": "x", "outputs": [None, {"data": "x"}, {"data": {
        "application/vnd.jupyter.widget-view+json": {"model_id": 5}}}] + [_view(f"w{i}") for i in range(50)]}
    shown = shown_of([odd], 0)
    assert shown["outputs"] == 53 and len(shown["widgets"]) == MAX_WIDGETS and shown["outputs_hidden"] is False
