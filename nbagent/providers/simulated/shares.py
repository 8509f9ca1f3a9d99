"""The demo brain's shares: "the share of each region in total sales" is each region's total
divided by the whole (``(sales.groupby("region")["revenue"].sum() / sales["revenue"].sum())``),
of what was spent (price × quantity) when the frame has no amount column; "the share of orders by
region" (no number named) is each region's part of the rows (``value_counts(normalize=True)``)."""

from __future__ import annotations

import re

from . import readers
from .columns import Frame, column, literal, named, without_frame
from .derived import with_spent
from .step import Step

SHARE = re.compile(r"\b(?:share|shares|percentage|percent|proportion|fraction)\b", re.I)
""""The share of each region in total sales", "what percentage of orders comes from each region"."""
_AMOUNTS = re.compile(r"^(?:spent|amount|total|revenue|sales|value|paid|line_total|subtotal)(?:_\w+)?$", re.I)
_SALES_WORDS = re.compile(r"\b(?:sales|revenue|spent|spending|spend|amount|turnover|paid)\b", re.I)


def share(frame: Frame, prompt: str) -> list[Step] | str:
    """Each group's part of the total (of the number column named, else the amount or price ×
    quantity when sales are asked about, else of the rows), largest first."""
    if frame.dtypes is None:
        return frame.look_first()
    text = without_frame(frame.name, prompt, frame.columns)
    said = named(text, frame.columns)
    by = next((c for c in said if c in frame.text()), None)
    if by is None:
        return f"I could not tell which column of `{frame.name}` to split the total by (name one, e.g. \"by region\")."
    numbers = [c for c in said if c in frame.numeric()]
    amount = next((c for c in frame.numeric() if _AMOUNTS.match(c)), None)
    name, key = frame.name, literal(by)
    # "total sales" of a frame called sales still asks for the sales (only `sales` quoted names the frame)
    asks_sales = _SALES_WORDS.search(re.sub(rf"`{re.escape(name)}`", " ", prompt)) is not None
    if numbers or (amount and asks_sales):
        value = numbers[0] if numbers else str(amount)
        code = (f"({name}.groupby({key})[{literal(value)}].sum() / {column(name, value)}.sum())"
                ".sort_values(ascending=False)")
        of = f"total {value}"
    elif asks_sales and (spent := with_spent(frame, "spent")) is not None:
        # no name assigned: none of the user's variables (the facts list 40 at most) can be overwritten
        code = (f"(\n    ({spent.code}).groupby({column(name, by)}).sum()\n"
                f"    / ({spent.code}).sum()\n).sort_values(ascending=False)")
        of = f"what was spent ({spent.said})"
    else:
        code = f"{column(name, by)}.value_counts(normalize=True)"
        of = f"the rows of `{name}`"
    return [Step("python", {"code": code}, f"find each {by}'s share of {of}",
                 reads=lambda out: _shares_said(by, of, out))]


def _shares_said(by: str, of: str, output: str) -> str | None:
    """"the share of total revenue by region: north 48.1%, south 30.2%, …"."""
    found = readers.series_rows(output)
    if not found or not found[0]:
        return None
    try:
        listed = ", ".join(f"{label} {float(value) * 100:.1f}%" for label, value in found[0])
    except ValueError:
        return None
    return f"the share of {of} by {by}: {listed}{', …' if found[1] else ''}"


__all__ = ["SHARE", "share"]
