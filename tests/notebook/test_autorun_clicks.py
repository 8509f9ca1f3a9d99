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


def test_a_cells_click_list_in_an_unattended_batch_still_cancels_a_request_that_failed_for_good() -> None:
    """A template cell of ``nbagent.batch --notebook`` picking ``["Deny"]`` (or ``["Retry now"]``)
    replaced the batch's list, failed-request Cancel included: a 401 in that cell waited on Retry /
    Cancel until the cell's timeout, 300 s an item (review of newcomer pass 25)."""
    from nbagent.batch.notebook_item import UNATTENDED_CLICK
    from nbagent.notebook.autorun import CANCEL_FAILED, cell_clicks

    default = list(UNATTENDED_CLICK)
    assert cell_clicks({"nbagent": {"click": ["Deny"]}}, default) == ["Deny", CANCEL_FAILED]
    assert cell_clicks({"nbagent": {"click": ["Retry now"]}}, default) == ["Retry now", CANCEL_FAILED]
    assert cell_clicks({"nbagent": {"click": ["Allow"]}}, default) == default
    assert cell_clicks({"nbagent": {"click": ["Retry"]}}, default) == ["Retry"]  # the cell's own answer
    assert cell_clicks({}, default) == default
    # a run that allows (autorun) keeps a cell's list as it is: its author watches the result
    assert cell_clicks({"nbagent": {"click": ["Deny"]}}, ["Allow", CANCEL_FAILED]) == ["Deny"]
