"""Which buttons autorun presses for a cell: the cell's ``nbagent.click`` list, read strictly."""

from __future__ import annotations


def test_a_cells_click_list_counts_only_as_a_list_of_button_names() -> None:
    from nbagent.notebook.autorun import cell_clicks

    assert cell_clicks({"nbagent": {"click": ["Deny"]}}, ["Allow"]) == ["Deny"]
    assert cell_clicks({"nbagent": {"click": []}}, ["Allow"]) == []  # clicks nothing, as documented
    assert cell_clicks({}, ["Deny"]) == ["Deny"]
    # a string matched by substring ("Allow" in "Allow always (this session)"); a non-object raised
    assert cell_clicks({"nbagent": {"click": "Allow always (this session)"}}, ["Deny"]) == ["Deny"]
    assert cell_clicks({"nbagent": "x"}, ["Deny"]) == ["Deny"]
    assert cell_clicks({"nbagent": {"click": [1]}}, ["Deny"]) == ["Deny"]


def test_a_cells_click_list_never_presses_allow_where_the_run_denies() -> None:
    """A received template run by ``nbagent.batch --notebook`` (which answers Deny: only --allow runs)
    named ``Allow`` in a cell's metadata and every question of that cell was allowed."""
    from nbagent.notebook.autorun import cell_clicks

    assert cell_clicks({"nbagent": {"click": ["Allow"]}}, ["Deny"]) == ["Deny"]
    assert cell_clicks({"nbagent": {"click": ["Allow always (this session)"]}}, ["Deny"]) == ["Deny"]
    assert cell_clicks({"nbagent": {"click": ["Allow always (this session)", "Retry now"]}}, ["Deny"]) == ["Retry now"]
    assert cell_clicks({"nbagent": {"click": []}}, ["Deny"]) == []
    # a run that allows (autorun's default) lets the teaching notebooks pick Allow always
    assert cell_clicks({"nbagent": {"click": ["Allow always (this session)"]}}, ["Allow"]) == \
        ["Allow always (this session)"]
