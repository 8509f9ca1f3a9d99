"""The permission card's preview: a cell as it is and as it will be (a unified diff with long
unchanged runs folded), the source a run executes, escaped and with hidden characters shown, in the
live card, its transcript and its static HTML."""

from __future__ import annotations

import nh3

from nbagent.engine.contracts.events import CallPreview, PermissionAsked, ToolUse
from nbagent.notebook.view.agent_view import AgentView
from nbagent.notebook.view.diff import ADDED_PANEL, REMOVED_PANEL, Row, diff_rows, preview_html, preview_plain


def test_a_replaced_line_is_removed_then_added_between_unchanged_lines() -> None:
    rows = diff_rows("a = 1\nb = 2\nc = 3", "a = 1\nb = 20\nc = 3")
    assert rows == [Row("=", 1, 1, "a = 1"), Row("-", 2, None, "b = 2"), Row("+", None, 2, "b = 20"),
                    Row("=", 3, 3, "c = 3")]


def test_long_unchanged_runs_are_folded_but_kept_around_the_change() -> None:
    before = "\n".join(f"line {i}" for i in range(1, 41))
    after = before.replace("line 20", "line twenty")
    rows = diff_rows(before, after)
    assert [r.tag for r in rows] == ["…", "=", "=", "=", "-", "+", "=", "=", "=", "…"]
    assert rows[0].text == "16 unchanged line(s)" and rows[1] == Row("=", 17, 17, "line 17")
    assert rows[-1].text == "17 unchanged line(s)"


def test_a_new_cell_is_all_added_and_a_deleted_one_all_removed() -> None:
    assert [r.tag for r in diff_rows(None, "x = 1\ny = 2")] == ["+", "+"]
    assert [r.tag for r in diff_rows("x = 1", None)] == ["-"]


def test_plain_text_marks_each_line_and_counts_the_change() -> None:
    text = preview_plain(CallPreview("replace cell 1 (id c2, code)", "x = 40", "x = 41"))
    assert text == "replace cell 1 (id c2, code)\n- x = 40\n+ x = 41\n(1 line(s) removed, 1 added)"


def test_a_run_shows_the_source_as_it_is() -> None:
    preview = CallPreview("run cell 1 (id c2, code) in the kernel", "print(x)", "print(x)")
    assert preview_plain(preview).splitlines()[1] == "  print(x)"
    html = preview_html(preview)
    assert "nbagent-code" in html and "nbagent-diff" not in html and "1 line(s), unchanged by this call" in html


def test_the_html_escapes_everything_and_shows_hidden_characters() -> None:
    attack = '<img src=x onerror="alert(1)">\nok = 1  # \u202eevil'
    html = preview_html(CallPreview("replace <b>cell</b>", "ok = 0", attack))
    assert "<img" not in html and "<b>" not in html and "&lt;img" in html
    assert "⟦U+202E⟧" in html and "⚠ 1 invisible" in html
    # What the sanitiser would keep is what we send: nothing in it is active.
    assert nh3.clean(html).count("onerror") == html.count("onerror") == 1  # as text only
    assert f"background:{REMOVED_PANEL}" in html and f"background:{ADDED_PANEL}" in html


def test_the_card_shows_the_preview_in_place_of_the_raw_input() -> None:
    view = AgentView()
    tool_input = {"action": "replace", "cell_id": "c2", "source": "x = 41"}
    view.handle(ToolUse(tool_use_id="t1", name="notebook_edit", input=tool_input))
    preview = CallPreview("replace cell 1 (id c2, code)", "x = 40", "x = 41")
    view.handle(PermissionAsked(tool_use_id="t1", name="notebook_edit", input=tool_input, preview=preview))
    card = view.card("t1", "notebook_edit")
    assert "nbagent-diff-removed" in card._input.value and "x = 40" in card._input.value
    assert "  - x = 40\n  + x = 41" in view.transcript()
    assert "nbagent-diff-added" in view.static_html() and '"cell_id"' not in view.static_html()


def test_without_a_preview_the_card_shows_the_input() -> None:
    view = AgentView()
    view.handle(PermissionAsked(tool_use_id="t1", name="notebook_run", input={"cell_id": "c2"}))
    assert '"cell_id"' in view.transcript()


def test_a_summary_with_a_given_id_marks_its_hidden_characters() -> None:
    from nbagent.notebook.document.preview import run_preview
    from nbagent.notebook.view.diff import preview_html, preview_plain

    shown = run_preview([{"id": "a", "cell_type": "code", "source": "x"}], "c\u202eX")  # an id no cell has
    for text in (preview_html(shown), preview_plain(shown)):
        assert "\u202e" not in text and "c⟦U+202E⟧X" in text
