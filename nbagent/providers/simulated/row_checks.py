"""The demo brain's checks of a frame's rows as a whole: the rows with a missing value
(``orders[orders.isna().any(axis=1)]``) and the duplicated rows (``orders[orders.duplicated(keep=False)]``,
or ``orders.duplicated().sum()`` for "how many"). The counts per column of missing values are
:mod:`.frames`' (``orders.isna().sum()``)."""

from __future__ import annotations

import re

from . import readers
from .columns import Frame, column, literal, matches, without_frame
from .step import Step

MISSING_ROWS = re.compile(r"\b(?:rows?|records?|entries|entry|lines?|orders?)\s+(?:(?:of|in|from)\s+`?\w+`?\s+)?"
                          r"(?:with|that\s+have|that\s+has|having"
                          r"|containing|which\s+have|where)\s+(?:any\s+|a\s+|some\s+)?(?:missing|nan|nulls?|na|empty|blank)\b"
                          r"|\b(?:which|what)\s+(?!(?:columns?|cols?|fields?|variables?|features?|attributes?)\b)\w+\s+(?:have|has|contain)\s+(?:any\s+|a\s+)?"
                          r"(?:missing|nan|nulls?|na|empty|blank)\b", re.I)
""""Show the rows with missing values", "which rows (customers) have a missing value": those rows, not the
counts ("which columns have missing values" is the counts)."""
DUPLICATES = re.compile(r"\bduplicat(?:e|es|ed)\b|\bdupes?\b", re.I)
""""Show the duplicate rows", "how many duplicates": rows equal to another in every column."""
SECOND = re.compile(r"\bsecond\s+(?P<how>highest|largest|biggest|most\s+expensive|dearest|lowest|smallest|cheapest)"
                    r"\s+(?P<what>\w+)", re.I)
""""The second highest price" (the value), "the second most expensive order" (the row)."""
_PRICES = re.compile(r"^(?:unit_?)?price(?:_\w+)?$|^(?:unit_?)?cost$", re.I)
_HOW_MANY = re.compile(r"\b(?:how many|count|number of)\b", re.I)


def missing_rows(frame: Frame, prompt: str) -> list[Step]:
    """``orders[orders.isna().any(axis=1)]``: every row missing at least one value."""
    name = frame.name

    def said(out: str) -> str | None:
        n = readers.frame_rows(out)
        if n is None:
            return None
        return f"no row of `{name}` has a missing value" if n == 0 else \
            f"{n:,} {'row' if n == 1 else 'rows'} of `{name}` {'has' if n == 1 else 'have'} a missing value"
    return [Step("python", {"code": f"{name}[{name}.isna().any(axis=1)]"},
                 f"select the rows of `{name}` with a missing value", reads=said, shows=True)]


def duplicates(frame: Frame, prompt: str) -> list[Step]:
    """``orders.duplicated().sum()`` for "how many duplicates" (each row equal to an earlier one);
    else the duplicated rows, every copy (``keep=False``), so that each can be compared with its twin."""
    name = frame.name
    said_col = _DUPLICATED_COLUMN.search(without_frame(name, prompt, frame.columns))
    col = next((c for c in (matches(w, frame.columns) for w in _said_words(said_col)) if c), None) if said_col else None
    if col is not None:  # "how many duplicate customers": values of that column repeated, not whole rows
        return _duplicated_values(frame, col, _HOW_MANY.search(prompt) is not None)
    if _HOW_MANY.search(prompt):
        return [Step("python", {"code": f"{name}.duplicated().sum()"}, f"count the duplicated rows of `{name}`",
                     reads=lambda out: None if (n := readers.number(out)) is None
                     else f"`{name}` has {int(n):,} duplicated {'row' if int(n) == 1 else 'rows'} "
                          "(each equal to an earlier row in every column)")]

    def said(out: str) -> str | None:
        n = readers.frame_rows(out)
        if n is None:
            return None
        return f"`{name}` has no duplicated rows" if n == 0 else \
            f"{n:,} rows of `{name}` are equal to another row in every column (each copy shown)"
    return [Step("python", {"code": f"{name}[{name}.duplicated(keep=False)]"},
                 f"select the duplicated rows of `{name}`", reads=said, shows=True)]


# "duplicate customers", "duplicated order ids", "duplicates in customer": one column's values
_DUPLICATED_COLUMN = re.compile(r"\bduplicat\w*\s+(?!rows?\b|records?\b|entries\b|lines?\b|values?\b)(\w+)(?:\s+(\w+))?"
                                r"|\bduplicat\w*\s+(?:values?\s+)?(?:in|of)\s+(?:the\s+)?(\w+)", re.I)


def _said_words(m: re.Match[str]) -> list[str]:
    """The words that may name the column: "order ids" as order_ids first (order_id), then each."""
    first, second, of = m.groups()
    return [w for w in (f"{first}_{second}" if first and second else "", first, of) if w]


def _duplicated_values(frame: Frame, col: str, count: bool) -> list[Step]:
    """``orders["customer"].duplicated().sum()`` (each value repeating an earlier one), or the rows
    whose value of ``col`` another row has too (every copy)."""
    name, of = frame.name, column(frame.name, col)
    if count:
        return [Step("python", {"code": f"{of}.duplicated().sum()"}, f"count the repeated {col} values of `{name}`",
                     reads=lambda out: None if (n := readers.number(out)) is None
                     else f"{int(n):,} {'row' if int(n) == 1 else 'rows'} of `{name}` "
                          f"{'repeats' if int(n) == 1 else 'repeat'} an earlier row's {col} "
                          f"({col} values seen before; whole rows may still differ)")]

    def said(out: str) -> str | None:
        n = readers.frame_rows(out)
        return None if n is None else f"no two rows of `{name}` share a {col}" if n == 0 else \
            f"{n:,} rows of `{name}` share their {col} with another row (each copy shown)"
    return [Step("python", {"code": f"{name}[{of}.duplicated(keep=False)]"},
                 f"select the rows of `{name}` whose {col} repeats", reads=said, shows=True)]


def second(frame: Frame, prompt: str) -> list[Step] | str:
    """``orders["price"].nlargest(2).iloc[-1]`` for "the second highest price"; the row,
    ``orders.nlargest(2, "price").iloc[[-1]]``, for "the second most expensive order"."""
    m = SECOND.search(prompt)
    if m is None:
        return f"I could not tell what is second in `{frame.name}`."
    if frame.dtypes is None:
        return frame.look_first()
    how = m.group("how").lower()
    smallest = how in ("lowest", "smallest", "cheapest")
    col = matches(m.group("what"), frame.numeric())
    priced = "expensive" in how or how in ("dearest", "cheapest")
    if col is None and priced:
        col = next((c for c in frame.numeric() if _PRICES.match(c)), None)
    if col is None:
        return f"I could not tell which number column of `{frame.name}` \"second {how} {m.group('what')}\" ranks."
    ranked = "nsmallest" if smallest else "nlargest"
    name, word = frame.name, "smallest" if smallest else "largest"
    if matches(m.group("what"), frame.numeric()) is not None:  # the value itself
        code = f"{column(name, col)}.{ranked}(2).iloc[-1]"
        return [Step("python", {"code": code}, f"find the second {word} {col} of `{name}`",
                     reads=lambda out: None if (n := readers.number(out)) is None
                     else f"the second {word} {col} of `{name}` is {n:,.2f}")]
    code = f"{name}.{ranked}(2, {literal(col)}).iloc[[-1]]"
    return [Step("python", {"code": code}, f"find the row of `{name}` with the second {word} {col}",
                 reads=lambda out: None if readers.frame_rows(out) is None
                 else f"the row of `{name}` with the second {word} {col}", shows=True)]


__all__ = ["DUPLICATES", "MISSING_ROWS", "SECOND", "duplicates", "missing_rows", "second"]
