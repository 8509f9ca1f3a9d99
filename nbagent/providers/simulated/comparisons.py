"""A statistic compared between two values of a column: "compare the average price of North and
South". The prompt does not say which column holds North and South, so the model first asks the
frame (``orders.select_dtypes(exclude="number").isin(["North", "South"]).sum()``: how often each
text column holds them), then computes the statistic of those rows per that column
(``orders[orders["region"].isin(["North", "South"])].groupby("region")["price"].mean()``), never the
whole frame's statistic as if it answered the comparison.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

from . import readers
from .columns import Frame, column, literal, matches, without_frame
from .selection import Condition
from .step import Call, Step

_COMPARE = re.compile(r"\bcompar\w*\b[^.?!\n]{0,120}?\b(\w+)\s+(?:and|with|to|vs\.?|versus)\s+(\w+)\b", re.I)
_NOT_VALUES = frozenset({"the", "a", "an", "of", "in", "for", "between", "average", "mean", "median", "total", "sum",
                         "max", "min", "each", "all", "it", "them", "this", "that"})


class Compared(NamedTuple):
    """The rows compared (a condition) and the column that holds the two values (the group)."""

    rows: Condition
    by: str


def compared(frame: Frame, prompt: str, calls: Sequence[Call]) -> Compared | Step | str | None:
    """The comparison the prompt asks for: the rows and group once the column holding the values is
    known, the call that finds it before, why not when no column holds them; None when the prompt
    compares no two values (two columns, "compare price and quantity", are no values)."""
    text = without_frame(frame.name, prompt, frame.columns)
    m = _COMPARE.search(text)
    if m is None:
        return None
    values = [m.group(1), m.group(2)]
    if any(v.lower() in _NOT_VALUES or matches(v, frame.columns) or v.isdigit() for v in values):
        return None
    if frame.dtypes is None:  # which columns hold text is in the types
        return None if frame.looked else frame.look(quiet=True)
    listed = f"[{', '.join(map(literal, values))}]"
    code = f"{frame.name}.select_dtypes(exclude=\"number\").isin({listed}).sum()"
    call = next((c for c in calls if c.tool == "python" and code in c.input.values()), None)
    if call is None:
        return Step("python", {"code": code}, f"find which column of `{frame.name}` holds {values[0]} and {values[1]}",
                    reads=lambda out: "")
    found = None if call.failed else readers.series_rows(call.output)
    holders = [label for label, n in (found[0] if found else []) if n.isdigit() and int(n) > 0]
    if not holders:
        return (f"No text column of `{frame.name}` holds {values[0]} or {values[1]} as written "
                "(values are matched exactly, case included); name the column, e.g. \"per region\".")
    mask = f"{column(frame.name, holders[0])}.isin({listed})"
    return Compared(Condition(mask, f"{holders[0]} {values[0]} or {values[1]}", m.start(1), m.end(2)), holders[0])


__all__ = ["Compared", "compared"]
