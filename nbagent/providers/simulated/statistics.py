"""The demo brain's statistics of a column, a frame, an array or a list: ``sales["revenue"].mean()``,
``sales[["revenue", "units"]].mean()``, per group ``sales.groupby("region")["revenue"].mean()``, of a
list ``sum(xs) / len(xs)``, read back into "the mean revenue of `sales` is 99.88"."""

from __future__ import annotations

import re
from typing import Sequence

from . import readers
from .columns import column, literal, named, wrapped
from .derived import Spent, asks_value, row_value
from .selection import Condition
from .step import Step

STATS = {"mean": "mean", "average": "mean", "sum": "sum", "total": "sum", "max": "max", "maximum": "max",
         "min": "min", "minimum": "min", "median": "median", "totals": "sum"}
"""The statistic each word of a prompt asks for (pandas' method name)."""
STAT_WORDS = {"mean": "mean", "sum": "total", "max": "maximum", "min": "minimum", "median": "median"}
"""The name each statistic's word gives it in the answer ("the total revenue", "the maximum price")."""
_PER = re.compile(r"\b(?:per|by|for each|in each)\s+(\w+)", re.I)


def said_value(value: str, count: bool = False) -> str:
    """A Series value as the answer says it: a count of rows, or a total of whole numbers, as pandas
    prints it (3, 31); a total or mean of decimals with two places (262.00)."""
    return f"{int(value):,}" if count or re.fullmatch(r"-?\d+", value) else readers.money(float(value))


def _stat_said(what: str, output: str) -> str | None:
    value = readers.number_text(output)
    return None if value is None else f"the {what} is {said_value(value)}"


def said_rows(output: str, form: str = "{label} {value}") -> tuple[str, int] | None:
    """A whole printed Series' rows as the answer lists them (``form`` places each label and its
    value, said as :func:`said_value` says it), and how many; None for anything else (a cut Series too)."""
    found = readers.series_rows(output)
    if not found or not found[0] or found[1]:
        return None
    try:
        return ", ".join(form.format(label=label, value=said_value(value)) for label, value in found[0]), len(found[0])
    except ValueError:
        return None


def _stats_said(what: str, output: str) -> str | None:
    said = said_rows(output)
    return None if said is None else f"the {what}: {said[0]}"


_ARRAYS = frozenset({"Series", "ndarray", "Index"})


def stat_needs_dtypes(prompt: str, columns: Sequence[str]) -> bool:
    """Whether a statistic names several columns besides a "per" group: which are numbers is
    looked up (``.dtypes``) before it is computed ("which customer sells most, and the average price")."""
    by = next((c for w in _PER.findall(prompt) for c in named(w, columns)), None)
    values = [c for c in named(prompt, columns) if c != by]
    # "the total sales" naming no column: whether a price and a quantity make it is in the types;
    # "per month" with no month column: which column holds the dates is in the types
    return len(values) > 1 or (not values and asks_value(prompt)) or (by is None and _PERIOD.search(prompt) is not None)


_PERIOD = re.compile(r"\b(?:per|by|each|every|a|in each)\s+(year|quarter|month|week|day)s?\b"
                     r"|\b(year|quarter|month|week|dai)ly\b", re.I)
"""A statistic per period of the dates: "the total revenue per month", "the monthly totals"; not a
unit or a span ("the average tenure in years", "over the last 3 months": no group)."""
_PERIOD_CODES = {"year": "Y", "quarter": "Q", "month": "M", "week": "W", "day": "D", "dai": "D"}


def _group_key(name: str, prompt: str, columns: Sequence[str], dates: Sequence[str]) -> tuple[str, str] | None:
    """What a statistic is grouped by: a column said after "per" / "by" (its literal, its name), or
    a period of the first date column ("per month": ``orders["order_date"].dt.to_period("M")``, "month")."""
    by = next((c for w in _PER.findall(prompt) for c in named(w, columns)), None)
    if by is not None:
        return literal(by), by
    period = _PERIOD.search(prompt) if dates else None
    if period is None:
        return None
    word = (period.group(1) or period.group(2)).lower()
    label = "day" if word == "dai" else word
    return f"{column(name, dates[0])}.dt.to_period({literal(_PERIOD_CODES[word])})", label


def stat_step(name: str, stat: str, columns: tuple[str, ...], prompt: str, kind: str,
              numeric: Sequence[str] | None = None, rows: Condition | None = None, dates: Sequence[str] = (),
              group: str | None = None) -> Step:
    """A statistic of a named column (``df["revenue"].mean()``), of every numeric column, of a
    Series or array (``x.mean()``), or of a plain sequence (``sum(xs) / len(xs)``); ``kind`` is
    "frame" or the variable's type; ``numeric``: the numeric columns, once known; ``rows``: a
    condition on a frame's rows (``df.loc[df["units"] > 1, "revenue"].mean()``)."""
    word = STAT_WORDS[stat]
    chosen = named(prompt, columns)
    if numeric is not None and any(c in numeric for c in chosen):  # "region … the average revenue": not region's
        chosen = [c for c in chosen if c in numeric]
    # ``group``: a column already chosen ("compare North and South": the one holding them), whatever its name
    key, by = (literal(group), group) if group else _group_key(name, prompt, columns, dates) or ("", None)
    values = [c for c in chosen if c != by]
    if kind != "frame":
        return _of_sequence(name, stat, word, kind)
    value = row_value(name, columns, numeric, prompt) if not values else None
    if value is not None:  # "the total sales per region": price × quantity, not each number column's total
        return _of_value(name, stat, word, value, (key, by) if by else None, rows)
    among = f" for the rows with {rows.said}" if rows else ""
    within = f"{name}[{rows.mask}]" if rows else name
    if by and values:
        chain = f".groupby({key})[{literal(values[0])}].{stat}()"
        code = f"{within}{chain}" if len(within + chain) <= 100 else f"({within}\n {chain})"  # as people break it
        what = f"{word} {values[0]} per {by} in `{name}`{among}"
        return Step("python", {"code": code}, f"compute the {what}", reads=lambda out: _stats_said(what, out))
    if by and not chosen[1:]:  # "the total sales per region" (no number column named): each numeric column's, per region
        code = f"{within}.groupby({key}).{stat}(numeric_only=True)"  # not region's own (its names glued)
        return Step("python", {"code": code}, f"compute the {word} of each numeric column per {by} in `{name}`{among}")
    if len(chosen) > 1:  # "the mean price and quantity": one call, one row each
        picked = f"[{', '.join(map(literal, chosen))}]"
        code = f"{name}.loc[{rows.mask}, {picked}].{stat}()" if rows else f"{name}[{picked}].{stat}()"
        what = f"{word} of `{name}`{among}"
        return Step("python", {"code": code}, f"compute the {word} of {', '.join(chosen)} in `{name}`{among}",
                    reads=lambda out: _stats_said(what, out))
    if chosen:
        code = f"{name}.loc[{rows.mask}, {literal(chosen[0])}].{stat}()" if rows else f"{column(name, chosen[0])}.{stat}()"
        what = f"{word} {chosen[0]} of `{name}`{among}"
    else:
        code, what = f"{within}.{stat}(numeric_only=True)", f"{word} of each numeric column of `{name}`{among}"
    return Step("python", {"code": code}, f"compute the {what}", reads=lambda out: _stat_said(what, out))


def _of_value(name: str, stat: str, word: str, value: Spent, group: tuple[str, str] | None,
              rows: Condition | None) -> Step:
    """The statistic of each row's value, price × quantity (the frame itself unchanged): per group
    ``orders.assign(sales=…).groupby("region")["sales"].sum()``, else ``(…).mean()``; of the rows
    meeting ``rows`` only (``orders.assign(sales=…)[orders["order_date"].dt.month == 3]…``)."""
    said = f"sales ({value.said})"
    among = f" for the rows with {rows.said}" if rows else ""
    if group is None:
        code = wrapped(f"({value.code})[", rows.mask, f"].{stat}()") if rows else f"({value.code}).{stat}()"
        what = f"{word} of {said} of `{name}`{among}"
        return Step("python", {"code": code}, f"compute the {what}", reads=lambda out: _stat_said(what, out))
    key, by = group
    source, chain = f"{name}.assign(sales={value.code})", f".groupby({key})[\"sales\"].{stat}()"
    selected = f".loc[{rows.mask}]" if rows else ""
    code = (f"{source}{selected}{chain}" if len(source + selected + chain) <= 100  # else broken as people break it
            else f"({source}\n {selected}\n {chain})" if selected else f"({source}\n {chain})")
    what = f"{word} of {said} per {by} in `{name}`{among}"
    return Step("python", {"code": code}, f"compute the {what}", reads=lambda out: _stats_said(what, out))


def _of_sequence(name: str, stat: str, word: str, kind: str) -> Step:
    """The statistic of a Series or array (``x.mean()``) or of a plain sequence (``sum(xs) / len(xs)``)."""
    if kind in _ARRAYS:
        code = f"{name}.{stat}()" if stat != "median" or kind == "Series" else f"import numpy as np\n\nnp.median({name})"
    else:
        code = {"mean": f"sum({name}) / len({name})", "sum": f"sum({name})", "max": f"max({name})",
                "min": f"min({name})", "median": f"import statistics\n\nstatistics.median({name})"}[stat]
    what = f"{word} of `{name}`"
    return Step("python", {"code": code}, f"compute the {what}", reads=lambda out: _stat_said(what, out))


__all__ = ["STATS", "STAT_WORDS", "said_rows", "said_value", "stat_needs_dtypes", "stat_step"]
