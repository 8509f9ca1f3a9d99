"""The display helpers: per-request tables, truncation and message frames, and the hand-made SVG plot."""

from __future__ import annotations

import dataclasses
import math
import xml.etree.ElementTree as ET

from nbagent.display import charts, tables
from nbagent.engine.api_facts.cost import Usage
from nbagent.engine.contracts.events import RequestRecord
from nbagent.engine.contracts.messages import Message


def rec(request: int, *, turn: int = 1, cost: float | None = 0.01, tokens: int = 1000,
        deleted: tuple[int, int] | None = None, keep: str | None = None, saving: float | None = None) -> RequestRecord:
    return RequestRecord(
        turn=turn, request=request, model="claude-sonnet-4-5",
        usage=Usage(input_tokens=100, output_tokens=20, cache_creation_input_tokens=30, cache_read_input_tokens=850),
        cost_usd=cost, context_tokens=tokens, max_allowed=160_000, context_window=200_000,
        deleted_range=deleted, keep=keep, file_read_saving=saving, retries=1 if request == 2 else 0,
        stop_reason="end_turn", duration_s=1.234, ts=request,
    )


def test_turns_df_columns_and_values() -> None:
    df = tables.turns_df([rec(1), rec(2, cost=None, tokens=172_310, deleted=(2, 41), keep="half", saving=0.12),
                          rec(3, cost=0.02)])
    assert list(df.columns) == [
        "turn", "request", "model", "input", "output", "cache write", "cache read", "cache hit %", "cost",
        "cumulative cost (session)", "context tokens", "% of max", "previous request tokens", "max allowed", "deleted range",
        "keep", "file-read saving", "context actions", "retries", "rate-limit wait s", "stop reason", "seconds",
        "switched off", "image tokens", "cut-off tokens",
    ]
    assert df["cost"].tolist() == [0.01, "–", 0.02]
    assert df["cumulative cost (session)"].tolist() == [0.01, 0.01, 0.03]  # unknown cost adds nothing
    row = df.iloc[1]
    assert row["deleted range"] == "2–41" and row["keep"] == "half"
    assert row["% of max"] == round(100 * 172_310 / 160_000, 1)
    assert row["file-read saving"] == 12.0
    assert math.isnan(df.iloc[0]["file-read saving"])
    assert row["retries"] == 1 and row["seconds"] == 1.23
    assert (df["input"] == 100).all() and (df["cache read"] == 850).all()
    assert (df["cache hit %"] == 86.7).all()  # 850 of 980 prompt tokens read from the cache


def test_an_unpriced_model_shows_a_dash_never_zero_and_what_the_endpoint_switched_off() -> None:
    unpriced = [dataclasses.replace(rec(i, cost=None), model="llama-local", without=("cache_control",))
                for i in (1, 2)]
    df = tables.turns_df(unpriced)
    assert df["cost"].tolist() == ["–", "–"] and df["cumulative cost (session)"].tolist() == ["–", "–"]
    assert df["switched off"].tolist() == ["cache_control", "cache_control"]
    shown = tables.for_display(df)
    assert shown["cost"].tolist() == ["–", "–"] and "switched off" in shown.columns
    assert "switched off" not in tables.for_display(tables.turns_df([rec(1)])).columns  # blank: not shown
    with_images = tables.turns_df([rec(1), rec(2)], image_tokens={2: 1_398})
    assert with_images["image tokens"].tolist() == [None, 1_398]
    assert "image tokens" not in tables.for_display(tables.turns_df([rec(1)])).columns


def test_image_tokens_read_zero_for_a_request_without_images_and_blank_only_when_unknown() -> None:
    """A student's own ``turns_df()`` printed "None" for the requests that carried no image (teacher
    pass 10, N2): 0 is a known count; blank is for a request whose body nobody kept."""
    df = tables.turns_df([rec(1), rec(2), rec(3)], image_tokens={1: 0, 2: 1_398})
    assert df["image tokens"].tolist() == [0, 1_398, None]
    assert "None" not in df[["image tokens"]].iloc[:2].to_string()
    assert tables.for_display(df)["image tokens"].tolist() == [0, 1_398, None]
    no_images = tables.turns_df([rec(1), rec(2)], image_tokens={1: 0, 2: 0})
    assert "image tokens" not in tables.for_display(no_images).columns  # nothing to say: not shown


def test_a_percentage_reads_the_same_in_every_table_whatever_the_other_rows_hold() -> None:
    """ "cache hit %" read "98" in one table and "98.0" in the next, as the column's other values were
    whole or not (teacher pass 10, N3): each value now reads as the notices write it."""
    import pandas as pd

    whole = tables.for_display(pd.DataFrame({"request": [1, 2], "cache hit %": [0.0, 98.0]}))
    mixed = tables.for_display(pd.DataFrame({"request": [1, 2], "cache hit %": [98.0, 91.1]}))
    assert whole["cache hit %"].tolist() == ["0", "98"] and mixed["cache hit %"].tolist() == ["98", "91.1"]


def test_empty_frames_keep_their_columns() -> None:
    assert list(tables.turns_df([]).columns) == tables.TURN_COLUMNS
    assert tables.truncation_df([]).empty


def test_truncation_df_lists_only_changes() -> None:
    records = [rec(1), rec(2, deleted=(2, 9), keep="half"), rec(3, deleted=(2, 9), keep="half"),
               rec(4, deleted=(2, 21), keep="quarter"), rec(5, deleted=(2, 21))]
    df = tables.truncation_df(records)
    assert df["request"].tolist() == [2, 4]
    assert df["deleted range"].tolist() == ["2–9", "2–21"]
    assert df["hidden messages"].tolist() == [8, 20]
    assert df["keep"].tolist() == ["half", "quarter"]


def test_messages_df_statuses() -> None:
    history: list[Message] = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": [{"type": "text", "text": "x"},
                                          {"type": "tool_use", "id": "t", "name": "read_file", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "file text"}]},
        {"role": "assistant", "content": "done"},
    ]
    df = tables.messages_df(history, None, replaced={4})
    assert df["status"].tolist() == ["first pair", "first pair", "kept", "kept", "replaced read", "kept"]
    # With 2-3 hidden, message 4's read is not sent at all: its call (3) is hidden.
    assert tables.messages_df(history, (2, 3), replaced={4})["status"].tolist() == [
        "first pair", "first pair", "hidden", "hidden", "results omitted", "kept"]
    assert df.loc[3, "kind"] == "text, tool_use"
    assert df.loc[4, "chars"] == len("file text")
    assert (df["est. tokens"] > 0).all()
    assert tables.messages_df(history, None)["status"].tolist()[2:] == ["kept"] * 4


def test_messages_df_measures_what_is_sent_and_names_masked_and_omitted_results() -> None:
    from nbagent.engine.context.mask import MASKED_RESULT
    from nbagent.engine.context.updates import ContextHistoryUpdates

    big = "row " * 2000
    history: list[Message] = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "read_file", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": big}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "read_file", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": big}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "python", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": big}]},
        {"role": "assistant", "content": "done"},
    ]
    updates = ContextHistoryUpdates()
    updates.add(6, 0, 1, "[Old tool result cleared]", edit_type=MASKED_RESULT)
    df = tables.messages_df(history, (2, 3), updates=updates)
    # 4: its call (3) is hidden, so the request leaves its result out; 6: sent as the placeholder.
    assert df["status"].tolist() == ["first pair", "first pair", "hidden", "hidden", "results omitted", "kept",
                                     "masked", "kept"]
    assert df.loc[2, "est. tokens"] > 1000  # a hidden message keeps its own size
    assert df.loc[4, "est. tokens"] < 50 and df.loc[6, "est. tokens"] < 50
    assert df.loc[4, "kind"] == "tool_result"  # what the message is; its size is what was sent


def test_messages_df_measures_the_result_missing_the_request_adds_after_the_hidden_range() -> None:
    """The first pair's call (1) has its result in the hidden range: the request sends the next kept
    prompt with a "result missing" result first (the pairing repair), which the table left out."""
    from nbagent.engine.api_facts.tokens import count_message_tokens
    from nbagent.engine.context.request import RESULT_MISSING, get_truncated_messages

    history: list[Message] = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "read_file", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "row " * 500}]},
        {"role": "assistant", "content": "read it"},
        {"role": "user", "content": "and now?"},
        {"role": "assistant", "content": "done"},
    ]
    sent = get_truncated_messages(history, (2, 3))
    assert RESULT_MISSING in str(sent[2])
    df = tables.messages_df(history, (2, 3))
    assert df["status"].tolist() == ["first pair", "first pair", "hidden", "hidden", "kept", "kept"]
    assert [df.loc[i, "est. tokens"] for i in (0, 1, 4, 5)] == [count_message_tokens(m) for m in sent]


def test_messages_df_of_a_history_the_pairing_repair_adds_a_message_to_keeps_one_row_per_message() -> None:
    """An assistant tool call followed by another assistant message: the request gets a message of
    missing results in between, so it no longer lines up with the history; each message is still
    measured (as sent without the repair)."""
    history: list[Message] = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "python", "input": {}}]},
        {"role": "assistant", "content": "stopped"},
        {"role": "user", "content": "again"},
    ]
    df = tables.messages_df(history, None)
    assert df["index"].tolist() == [0, 1, 2, 3] and df["status"].tolist()[2:] == ["kept", "kept"]
    assert (df["est. tokens"] > 0).all()


def test_a_count_unknown_in_some_rows_shows_the_others_as_whole_numbers() -> None:
    """A replayed notebook with a turn recorded before the cache counts were kept: its row is blank
    (unknown, never 0), and the newer rows read 1898, not 1898.0."""
    import pandas as pd

    df = pd.DataFrame([{"turn": 1, "cache write": None, "cache read": None},
                       {"turn": 2, "cache write": 1898, "cache read": 0}])
    text = tables.text_table(tables.for_display(df))
    assert "1898.0" not in text and "1898" in text and " 0.0" not in text
    assert tables.text_table(tables.for_display(df)).splitlines()[1].split() == ["1"]  # blank, not 0
    html = tables.ReadableTable(df)._repr_html_()
    assert "<td>1898</td>" in html and "<td></td>" in html


def test_the_turn_table_says_what_the_context_layers_removed_before_each_request() -> None:
    from dataclasses import replace

    from nbagent.engine.contracts.records import ContextAction

    masked = replace(rec(2), context_actions=(ContextAction("mask", 5_081), ContextAction("truncate", 0)))
    edited = replace(rec(3), context_actions=(ContextAction("server_edit", 1_200, reported=True),))
    df = tables.turns_df([rec(1), masked, edited])
    assert df["context actions"].tolist() == ["", "mask −5,081 est.", "server_edit −1,200"]
    assert "context actions" not in tables.for_display(tables.turns_df([rec(1)])).columns  # none: not shown


def test_plot_is_small_valid_svg() -> None:
    records = [rec(i, cost=0.01 * i, tokens=20_000 * i, deleted=(2, 5) if i > 5 else None) for i in range(1, 10)]
    svg = charts.plot_context_and_cost(records)
    root = ET.fromstring(svg.data)
    assert root.tag.endswith("svg")
    assert len(svg.data) < 20_000
    assert "max allowed 160,000" in svg.data and "cumulative cost" in svg.data
    assert svg.data.count("<rect") == 1 + len(records)  # background + one bar per request
    assert ET.fromstring(charts.context_cost_svg([])) is not None


def test_html_table_blanks_missing_values() -> None:
    html = tables.html_table(tables.turns_df([rec(1)]))
    assert "<td>nan</td>" not in html and "<td>None</td>" not in html
    assert "<th>cumulative cost (session)</th>" in html


def test_a_runs_table_and_the_sessions_name_their_running_totals_apart() -> None:
    run = tables.turns_df([rec(1), rec(2)], tables.RUN_COST)
    assert tables.RUN_COST in run.columns and tables.SESSION_COST not in run.columns
    assert run[tables.RUN_COST].tolist() == [0.01, 0.02]
    assert tables.for_display(run)[tables.RUN_COST].tolist() == ["0.0100", "0.0200"]  # money format too


def test_every_number_in_a_truncation_notice_equals_its_table_cell(tmp_path) -> None:
    """The notice and the table use the same quantities with the same labels."""
    import asyncio

    from nbagent.display.format import fmt_range, fmt_tokens, truncation_line
    from nbagent.display.tables import truncation_df
    from nbagent.engine.contracts.events import ContextTruncated, RequestCompleted
    from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
    from tests.engine.loop.test_query_support import make_engine, run

    words = " ".join(f"word{i}" for i in range(60))
    api = SimulatedAPI([tool_reply("echo", {"text": words}) for _ in range(8)] + [text_reply("done")])
    engine = make_engine(api, tmp_path, context_window=2_000, custom_system_prompt="x " * 700)
    events = asyncio.run(run(engine, "go"))
    pairs: list[tuple[ContextTruncated, RequestRecord]] = []
    pending: ContextTruncated | None = None
    for e in events:
        if isinstance(e, ContextTruncated):
            pending = e
        elif isinstance(e, RequestCompleted) and pending is not None:
            assert e.record is not None
            pairs.append((pending, e.record))
            pending = None
    assert pairs, "the session must truncate at least once"
    table = truncation_df(engine.session.records).set_index("request")
    for notice, record in pairs:
        row = table.loc[record.request]
        line = truncation_line(notice.deleted_range, notice.keep, notice.previous_tokens, notice.max_allowed,
                               notice.file_read_saving, notice.reason)
        assert row["previous request tokens"] == notice.previous_tokens
        assert f"previous request tokens {fmt_tokens(row['previous request tokens'])}" in line
        assert row["max allowed"] == notice.max_allowed and f"max allowed {fmt_tokens(row['max allowed'])}" in line
        assert row["deleted range"] == fmt_range(notice.deleted_range) and row["deleted range"] in line
        assert row["keep"] == (notice.keep or "") and f"keep {row['keep']}" in line


def test_the_shown_table_hides_empty_columns_and_shows_whole_numbers_as_integers() -> None:
    import pandas as pd

    from nbagent.display.tables import for_display

    df = pd.DataFrame({"request": [1, 2], "keep": ["", ""], "file-read saving": [float("nan")] * 2,
                       "% of max": [12.0, 13.0], "seconds": [0.25, 1.0]})
    shown = for_display(df)
    assert list(shown.columns) == ["request", "% of max", "seconds"]
    assert shown["% of max"].tolist() == ["12", "13"] and shown["seconds"].dtype.kind == "f"
    assert list(df.columns) == ["request", "keep", "file-read saving", "% of max", "seconds"]  # untouched


def test_every_number_in_a_truncation_notice_is_a_cell_of_the_run_table_under_it(tmp_path) -> None:
    """The run table the view shows under the notices (for_display(turns_df)) holds each figure of
    a notice in the truncating request's row, under the label the notice gives it; in particular
    not "context tokens" (the prompt alone) for the previous request's input + output."""
    import asyncio
    import re

    from nbagent.display.format import truncation_line
    from nbagent.display.tables import for_display, turns_df
    from nbagent.engine.contracts.events import ContextTruncated, RequestCompleted
    from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
    from tests.engine.loop.test_query_support import make_engine, run

    words = " ".join(f"word{i}" for i in range(60))
    api = SimulatedAPI([tool_reply("echo", {"text": words}) for _ in range(8)] + [text_reply("done")])
    engine = make_engine(api, tmp_path, context_window=2_000, custom_system_prompt="x " * 700)
    events = asyncio.run(run(engine, "go"))
    notices = {}
    pending = None
    for e in events:
        if isinstance(e, ContextTruncated):
            pending = e
        elif isinstance(e, RequestCompleted) and pending is not None and e.record is not None:
            notices[e.record.request], pending = pending, None
    assert notices, "the session must truncate at least once"
    shown = for_display(turns_df(engine.session.records)).set_index("request")
    for request, notice in notices.items():
        line = truncation_line(notice.deleted_range, notice.keep, notice.previous_tokens, notice.max_allowed,
                               notice.file_read_saving, notice.reason)
        row = shown.loc[request]
        cells = {label: str(value) for label, value in row.items()}
        for number in re.findall(r"\d[\d,]*(?:\.\d+)?(?:–\d+)?", line):
            labels = [label for label, cell in cells.items() if cell == number.replace(",", "")]
            assert labels, f"{number} of {line!r} is in no cell of request {request}: {cells}"
            assert any(label in line or label == "deleted range" for label in labels), (number, labels, line)


def test_money_has_one_format_and_the_history_table_has_no_index_or_nan() -> None:
    import pandas as pd

    from nbagent.display.tables import ReadableTable, for_display

    df = pd.DataFrame({"request": [1, 2], "cost": [0.003, 0.0031], "cumulative cost (session)": [0.003, 0.0061],
                       "keep": ["", ""], "% of max": [float("nan"), 12.5]})
    shown = for_display(df)
    assert list(shown["cost"]) == ["0.0030", "0.0031"] and list(shown["cumulative cost (session)"]) == ["0.0030", "0.0061"]
    table = ReadableTable(df)
    assert "NaN" not in table._repr_html_() and "keep" not in table._repr_html_()
    assert "nan" not in repr(table).lower() and repr(table).split("\n")[0].split()[0] == "request"  # no index


def test_the_text_of_a_run_table_leaves_a_request_without_a_truncation_blank_not_none() -> None:
    # Notebook 03's table (text/plain, as nbconvert and static readers show it): the request after
    # the overflow recovery read "None None" under previous request tokens and max allowed.
    from dataclasses import replace

    from nbagent.display.tables import ReadableTable

    records = [replace(rec(1, deleted=(2, 7), keep="quarter"), trigger_tokens=2120), rec(2, deleted=(2, 7))]
    text = repr(ReadableTable(tables.turns_df(records)))
    assert "None" not in text and "2120" in text and "160000" in text


def test_truncation_table_shows_a_whole_max_allowed_as_an_integer() -> None:
    from nbagent.display.tables import truncation_df

    r = rec(1, deleted=(2, 5))
    assert str(truncation_df([r])["max allowed"].iloc[0]) == str(int(r.max_allowed))


def test_a_panel_table_scrolls_in_one_box_as_wide_as_its_panel() -> None:
    import pandas as pd

    html = tables.panel_table(pd.DataFrame({"replaced reads": [1], "cache-read share": ["5%"]}), 320, "font-size:11px")
    outer, inner = html.split("<table", 1)[0].split("<div")[1:]
    # The outer box holds the panel's width (containment) and scrolls both ways; the table's own box
    # does not scroll (its scrollbar would sit below 320 px of rows).
    assert "contain:inline-size" in outer and "overflow:auto" in outer and "max-height:320px" in outer
    assert "overflow" not in inner and "font-size:11px" in outer
    assert '<th style="white-space:normal;vertical-align:bottom">replaced reads</th>' in html
    assert "<th>" in tables.html_table(pd.DataFrame({"a": [1]}))  # other tables are unchanged


def test_a_readable_table_s_text_marks_a_cell_s_terminal_escapes() -> None:
    """``%agent history`` prints a table whose cells a received folder wrote (a recorded model's
    name): a terminal acted on their escapes (attacker pass 20)."""
    import pandas as pd

    from nbagent.display.tables import ReadableTable

    text = repr(ReadableTable(pd.DataFrame({"turn": [1], "model": ["claude\x1b]52;c;Y3VybA==\x07\x1b[2K"]})))
    assert "\x1b" not in text and "\x07" not in text and "claude⟦U+001B⟧]52;c;Y3VybA==⟦U+0007⟧⟦U+001B⟧[2K" in text


def test_a_marked_cell_keeps_the_table_s_columns_aligned() -> None:
    """The marks were put in after the columns were aligned: a row with an escape stood 9 characters
    to the right of the others (review of attacker pass 20)."""
    import pandas as pd

    from nbagent.display.tables import text_table

    lines = text_table(pd.DataFrame({"model": ["a\x1bb", "claude"], "n": [1, 22]})).splitlines()
    assert lines[1].endswith("a⟦U+001B⟧b  1") and len({len(line) for line in lines}) == 1, lines
