"""pandas frames built from turn records and histories, and a static HTML table of a frame.

pandas is imported inside the functions, so importing nbagent stays cheap. Shared by the agent view,
the session's ``*_df()`` methods and the truncation explorer, so a table reads the same everywhere.
"""

from __future__ import annotations

import re
from html import escape
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence, cast

from ..engine.contracts.events import RequestRecord
from .format import fmt_range, hidden_count, is_hidden, live_range, terminal_text
from .html import NO_TEX

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..engine.context.updates import ContextHistoryUpdates

RUN_COST, SESSION_COST = "cumulative cost (run)", "cumulative cost (session)"
"""The running total of a cell's table (its run's requests) and of ``%agent history`` and
``turns_df()`` (the session's): two names, since the same figure means two things."""
TURN_COLUMNS = [
    "turn", "request", "model", "input", "output", "cache write", "cache read", "cache hit %", "cost",
    SESSION_COST, "context tokens", "% of max", "previous request tokens", "max allowed", "deleted range",
    "keep", "file-read saving", "context actions", "retries", "rate-limit wait s", "stop reason", "seconds",
    "switched off", "image tokens", "cut-off tokens",
]
UNPRICED = "–"
"""A cost nobody could price (a local or gateway model): never $0, never Claude's price."""


_NAN = float("nan")
MONEY_COLUMNS = frozenset({"cost", RUN_COST, SESSION_COST})
PERCENT_COLUMNS = frozenset({"cache hit %", "% of max", "file-read saving"})
"""Shown value by value as the notices and ``%agent cost`` write them (``98``, ``91.1``): a column
converted to integers only when all its values were whole read ``98`` in one table, ``98.0`` in the next."""
ZERO_IS_BLANK = frozenset({"image tokens"})
"""Columns left out of a shown table when every value is 0 or blank: 0 image tokens is a known count
(the frame keeps it), but a table of requests without images has nothing to say in that column."""


def _whole(x: float) -> float | int:
    """``3200`` for ``3200.0``: a whole number shown as one, as the notices show it (104857.6 stays)."""
    return int(x) if float(x).is_integer() else x


def _pct(value: float | None) -> float:
    """A fraction as a percentage; NaN (shown blank) when unknown, so the column stays numeric."""
    return _NAN if value is None else round(100.0 * value, 1)


def turns_df(records: Sequence[RequestRecord], cumulative: str = SESSION_COST, *,
             image_tokens: Mapping[int, int] | None = None) -> "pd.DataFrame":
    """One row per API request, in the columns of the notebook spec.

    ``cost`` is a float rounded to 4 decimals, or ``"–"`` when the model has no prices; the
    running total (named ``cumulative``: :data:`SESSION_COST` for a session's records,
    :data:`RUN_COST` for one run's) sums the known costs (``"–"`` while none is known). ``switched off`` lists
    the request features the endpoint refused (blank, hence not shown, when none). ``image tokens``
    (by request number, when given): the API's estimate for the images the request carried, part of
    its prompt (input, cache write and cache read together): 0 for a request that carried none,
    blank for one whose request body is not known. ``cut-off tokens``: what the request's attempts
    cut off mid-answer (then retried) were billed for, part of its ``cost``; blank when none was.
    """
    import pandas as pd

    rows: list[dict[str, object]] = []
    total, priced = 0.0, False
    for r in records:
        if r.cost_usd is not None:
            total += r.cost_usd
            priced = True
        pct_max = round(100.0 * r.context_tokens / r.max_allowed, 1) if r.max_allowed else _NAN
        rows.append({
            "turn": r.turn,
            "request": r.request,
            "model": r.model,
            "input": r.usage.input_tokens,
            "output": r.usage.output_tokens,
            "cache write": r.usage.cache_creation_input_tokens,
            "cache read": r.usage.cache_read_input_tokens,
            "cache hit %": _pct(r.usage.cache_hit_share),
            "cost": UNPRICED if r.cost_usd is None else round(r.cost_usd, 4),
            SESSION_COST: round(total, 4) if priced else UNPRICED,
            "context tokens": r.context_tokens,
            "image tokens": None if image_tokens is None else image_tokens.get(r.request),
            "% of max": pct_max,
            # Only on the request whose truncation notice shows them (blank, hence not shown, when
            # nothing was truncated): the notice's figures are then cells of the table under it.
            "previous request tokens": r.trigger_tokens,
            "max allowed": _whole(r.max_allowed) if r.trigger_tokens is not None else None,
            "deleted range": fmt_range(r.deleted_range),
            "keep": r.keep or "",
            "file-read saving": _pct(r.file_read_saving),
            # What the context layers did before this request (blank, hence not shown, when nothing):
            # a masking was seen only as a jump of the cache write.
            "context actions": context_actions_text(r),
            "retries": r.retries,
            # Blank (hence not shown) when no request waited: a table of a class run shows who queued.
            "rate-limit wait s": round(r.rate_limit_wait_s, 1) if r.rate_limit_wait_s else _NAN,
            "stop reason": r.stop_reason or "",
            "seconds": round(r.duration_s, 2),
            "switched off": ", ".join(r.without),
            # What this request's attempts cut off mid-answer and retried were billed (in its cost, not in
            # its token columns, which are the answer's): blank, hence not shown, when none was.
            "cut-off tokens": r.unanswered_usage.total_tokens if r.unanswered_usage is not None else None,
        })
    df = pd.DataFrame(rows, columns=TURN_COLUMNS)
    if cumulative != SESSION_COST:
        df = df.rename(columns={SESSION_COST: cumulative})
    for column in ("previous request tokens", "max allowed", "image tokens", "cut-off tokens"):  # ints and blanks, never 3200.0
        df[column] = pd.Series([row[column] for row in rows], dtype=object)
    return df


def context_actions_text(record: RequestRecord) -> str:
    """``mask −5,108 est.`` (the layer, and the tokens it removed: estimated by nbagent, or as the
    API reported them), one per layer that acted on ``record``'s request; a truncation's range is in
    its own columns."""
    return ", ".join(
        (f"{a.layer} −{a.tokens_removed:,}" + ("" if a.reported else " est.")) if a.tokens_removed else a.layer
        for a in record.context_actions if a.layer != "truncate")


def for_display(df: "pd.DataFrame") -> "pd.DataFrame":
    """The table as a person reads it: columns with nothing in any row left out (no truncation,
    no file-read saving) and whole numbers shown as integers. The data frames themselves keep
    every column, so code that selects them never breaks."""
    import pandas as pd

    empty = [c for c in df.columns if all(_blank(v) or (c in ZERO_IS_BLANK and v == 0) for v in df[c])]
    shown = df.drop(columns=empty)
    for c in shown.columns:
        values = shown[c]
        if c in MONEY_COLUMNS:
            # One money format: 0.0030 beside 0.0031, not 0.003 (as fmt_usd, without the $).
            shown[c] = [v if isinstance(v, str) else f"{v:.4f}" for v in values]
        elif c in PERCENT_COLUMNS:
            shown[c] = ["" if _blank(v) else f"{v:g}" for v in values]
        elif values.dtype.kind == "f" and (values.dropna() == values.dropna().round()).all():
            # A count unknown in some rows (an older record) made the column float: 1898.0 beside a blank.
            shown[c] = values.astype("int64") if values.notna().all() else \
                pd.Series([None if v != v else int(v) for v in values], index=values.index, dtype=object)
    return shown


def _blank(value: object) -> bool:
    return value is None or value == "" or (isinstance(value, float) and value != value)


class ReadableTable:
    """A frame shown as a person reads it (see :func:`for_display`): no index, blanks for missing
    values; HTML in a notebook, text elsewhere."""

    def __init__(self, df: "pd.DataFrame") -> None:
        self.df = for_display(df)

    def _repr_html_(self) -> str:
        return html_table(self.df)

    def __repr__(self) -> str:
        return text_table(self.df)


def text_table(df: "pd.DataFrame") -> str:
    """The frame as plain text, no index, missing values blank: ``na_rep`` leaves a None in a column
    of ints as "None" (notebook 03's row after the overflow recovery read "None None" under
    previous request tokens and max allowed). Control characters are marked (``⟦U+001B⟧``): a
    terminal prints the text, and a table's cells may come from a received folder (a recorded
    model's name, an external client's row)."""
    shown = df.astype(object).where(df.notna(), "")
    # Marked per cell, before the columns are aligned: ⟦U+001B⟧ is 10 characters where one was.
    shown = shown.map(lambda v: terminal_text(v) if isinstance(v, str) else v)
    return terminal_text(str(shown.to_string(index=False)))


def truncation_df(records: Sequence[RequestRecord]) -> "pd.DataFrame":
    """The requests at which the hidden range changed (the first request counts if it hides any)."""
    import pandas as pd

    rows: list[dict[str, object]] = []
    previous: tuple[int, int] | None = None
    for r in records:
        current = live_range(r.deleted_range)
        if current != previous or r.trigger_tokens is not None:
            rows.append({
                "turn": r.turn,
                "request": r.request,
                "previous request tokens": r.trigger_tokens,
                "context tokens": r.context_tokens,
                "max allowed": _whole(r.max_allowed),
                "window": r.context_window,
                "deleted range": fmt_range(current),
                "hidden messages": hidden_count(current),
                "keep": r.keep or "",
                "file-read saving": _pct(r.file_read_saving),
            })
        previous = current
    columns = ["turn", "request", "previous request tokens", "context tokens", "max allowed", "window", "deleted range",
               "hidden messages", "keep", "file-read saving"]
    return pd.DataFrame(rows, columns=columns)


def _kinds(message: Mapping[str, object]) -> str:
    content = message.get("content", "")
    if isinstance(content, str):
        return "text"
    kinds: list[str] = []
    for block in content if isinstance(content, Iterable) else ():
        match block:
            case {"type": found}:
                kind = str(found)
            case _:
                kind = "?"
        if kind not in kinds:
            kinds.append(kind)
    return ", ".join(kinds)


def messages_df(
    history: Sequence[Mapping[str, object]],
    deleted_range: tuple[int, int] | None,
    replaced: Iterable[int] = frozenset(),
    updates: "ContextHistoryUpdates | None" = None,
    server_cleared: int = 0,
    never_cleared: Iterable[str] = (),
) -> "pd.DataFrame":
    """One row per history message: what the model sees of it.

    ``status`` is ``first pair`` (0 and 1, never hidden), ``hidden`` (inside ``deleted_range``),
    ``results omitted`` (the first message after the hidden range, sent without its tool results
    because their tool calls were hidden), ``masked`` (a tool result cleared by observation masking:
    ``updates`` holds it), ``replaced read`` (a duplicate file read replaced by a notice; indices in
    ``replaced``) or ``kept``. ``chars`` and ``est. tokens`` (tiktoken *estimates*) measure a sent
    message as it is sent (with ``updates`` applied), a hidden one as the history holds it.
    ``server_cleared``: how many tool uses the API reported its context editing cleared in the
    last request (``clear_tool_uses``); the server clears the oldest results it was sent, but not
    those of ``never_cleared`` tools, so the messages holding them are ``cleared by server``.
    """
    import pandas as pd

    from ..engine.api_facts.tokens import count_message_tokens
    from ..engine.context.as_sent import results_omitted_index, sent_by_index
    from ..engine.context.mask import MASKED_RESULT
    from ..engine.contracts.messages import Message, message_text

    replaced_set = set(replaced)
    masked = updates.indices_with_edit_type(MASKED_RESULT) if updates is not None else frozenset()
    omitted = results_omitted_index(cast("Sequence[Message]", history), deleted_range)
    # Measured as the request sends them: a kept prompt after the hidden range also carries the
    # pairing repair's "result missing" for a first-pair call whose result was hidden.
    sent = sent_by_index(cast("Sequence[Message]", history), deleted_range, updates)
    rows: list[dict[str, object]] = []
    cleared = _server_cleared(history, deleted_range, sent, server_cleared, set(never_cleared))
    for i, m in enumerate(history):
        shown = m
        if i >= 2 and is_hidden(i, deleted_range):
            status = "hidden"
        else:
            shown = sent.get(i, m)
            status = "cleared by server" if i in cleared else _sent_status(i, omitted, masked, replaced_set)
        rows.append({
            "index": i,
            "role": m.get("role", ""),
            "kind": _kinds(m),
            "chars": len(message_text(shown)),
            "est. tokens": count_message_tokens(shown),
            "status": status,
        })
    return pd.DataFrame(rows, columns=["index", "role", "kind", "chars", "est. tokens", "status"])


def server_cleared_tool_uses(record: RequestRecord | None) -> int:
    """How many tool uses the API reported its context editing cleared in ``record``'s request
    (``context_management.applied_edits``, kept as the record's ``server_edit`` actions)."""
    if record is None:
        return 0
    counts = (re.search(r"\btool_uses (\d+)", a.detail) for a in record.context_actions if a.layer == "server_edit")
    return sum(int(m.group(1)) for m in counts if m)


def _server_cleared(history: Sequence[Mapping[str, object]], deleted_range: tuple[int, int] | None,
                    sent: Mapping[int, object], count: int, never: set[str]) -> set[int]:
    """The messages whose tool results the server's ``clear_tool_uses`` cleared: the oldest
    ``count`` results sent (the API reports how many, and clears oldest first), skipping tools it
    never clears."""
    names = {str(b.get("id")): str(b.get("name")) for m in history for b in _blocks(m) if b.get("type") == "tool_use"}
    found: set[int] = set()
    for i, m in enumerate(history):
        if count <= 0:
            break
        if i >= 2 and is_hidden(i, deleted_range):
            continue
        for b in _blocks(cast("Mapping[str, object]", sent.get(i, m))):
            if count > 0 and b.get("type") == "tool_result" and names.get(str(b.get("tool_use_id"))) not in never:
                found.add(i)
                count -= 1
    return found


def _blocks(message: Mapping[str, object]) -> list[Mapping[str, object]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _sent_status(i: int, omitted: int | None, masked: frozenset[int], replaced: set[int]) -> str:
    # Results omitted first: the stripped message is sent without them, a masked or replaced one's too.
    if i < 2:
        return "first pair"
    if i == omitted:
        return "results omitted"
    if i in masked:
        return "masked"
    return "replaced read" if i in replaced else "kept"


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and value != value):  # None or NaN: blank
        return ""
    return escape(str(value))


def html_table(df: "pd.DataFrame", *, scroll: bool = True, wrap_head: bool = False) -> str:
    """A compact static HTML table (no index) for transcripts; missing values are blank. With
    ``scroll=False`` its box does not scroll by itself (the caller's box does: :func:`panel_table`);
    with ``wrap_head`` a long column name may take two lines (a narrow panel)."""
    th = '<th style="white-space:normal;vertical-align:bottom">' if wrap_head else "<th>"
    head = "".join(f"{th}{escape(str(c))}</th>" for c in df.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>"
        for row in df.itertuples(index=False, name=None)
    )
    # nowrap: a model id or a range wrapping onto three lines is harder to read than a scroll, and
    # the scroll is the table's own box: a wide table never runs past (and is cut by) its cell.
    box = "overflow-x:auto;max-width:100%" if scroll else ""
    return (f'<div class="nbagent-table-box {NO_TEX}" style="{box}">'
            f'<table class="nbagent-table" style="white-space:nowrap"><thead><tr>{head}</tr></thead>'
            f'<tbody>{body}</tbody></table></div>')


def panel_table(df: "pd.DataFrame", max_height: int | None = None, style: str = "") -> str:
    """:func:`html_table` for a panel of a widget: column names may wrap, and the table scrolls
    (both ways, one box) inside the panel's width and, with ``max_height``, its height.

    An ipywidgets ``HTML`` lays its content out as a flex item that grows to the content's width,
    so a table's own ``max-width:100%`` box grew with the table and the panel cut it on the right
    (the explorer's per-strategy tables). ``contain:inline-size`` keeps the table's width out of
    the panel's sizing: the box is as wide as the panel, and the table scrolls in it.
    """
    height = f"max-height:{max_height}px;" if max_height is not None else ""
    return (f'<div class="nbagent-panel-table" style="contain:inline-size;overflow:auto;{height}{style}">'
            f'{html_table(df, scroll=False, wrap_head=True)}</div>')

