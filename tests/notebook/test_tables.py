"""Per-request tables, truncation and message frames, and the hand-made SVG plot."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from nbagent.engine.cost import Usage
from nbagent.engine.events import RequestRecord
from nbagent.notebook import tables


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
    df = tables.turns_df([rec(1), rec(2, cost=None, tokens=172_310, deleted=(2, 41), keep="half", saving=0.12), rec(3, cost=0.02)])
    assert list(df.columns) == [
        "turn", "request", "model", "input", "output", "cache write", "cache read", "cache hit %", "cost",
        "cumulative cost", "context tokens", "% of max", "deleted range", "keep", "file-read saving", "retries", "stop reason", "seconds",
    ]
    assert df["cost"].tolist() == [0.01, "n/a", 0.02]
    assert df["cumulative cost"].tolist() == [0.01, 0.01, 0.03]  # unknown cost adds nothing
    row = df.iloc[1]
    assert row["deleted range"] == "2–41" and row["keep"] == "half"
    assert row["% of max"] == round(100 * 172_310 / 160_000, 1)
    assert row["file-read saving"] == 12.0
    assert math.isnan(df.iloc[0]["file-read saving"])
    assert row["retries"] == 1 and row["seconds"] == 1.23
    assert (df["input"] == 100).all() and (df["cache read"] == 850).all()
    assert (df["cache hit %"] == 86.7).all()  # 850 of 980 prompt tokens read from the cache


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
    history = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "tool_use", "id": "t", "name": "read_file", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "file text"}]},
        {"role": "assistant", "content": "done"},
    ]
    df = tables.messages_df(history, (2, 3), replaced={4})
    assert df["status"].tolist() == ["first pair", "first pair", "hidden", "hidden", "replaced read", "kept"]
    assert df.loc[3, "kind"] == "text, tool_use"
    assert df.loc[4, "chars"] == len("file text")
    assert (df["est. tokens"] > 0).all()
    assert tables.messages_df(history, None)["status"].tolist()[2:] == ["kept"] * 4


def test_plot_is_small_valid_svg() -> None:
    records = [rec(i, cost=0.01 * i, tokens=20_000 * i, deleted=(2, 5) if i > 5 else None) for i in range(1, 10)]
    svg = tables.plot_context_and_cost(records)
    root = ET.fromstring(svg.data)
    assert root.tag.endswith("svg")
    assert len(svg.data) < 20_000
    assert "max allowed 160,000" in svg.data and "cumulative cost" in svg.data
    assert svg.data.count("<rect") == 1 + len(records)  # background + one bar per request
    assert ET.fromstring(tables.context_cost_svg([])) is not None


def test_html_table_blanks_missing_values() -> None:
    html = tables.html_table(tables.turns_df([rec(1)]))
    assert "<td>nan</td>" not in html and "<td>None</td>" not in html
    assert "<th>cumulative cost</th>" in html
