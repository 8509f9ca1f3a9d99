"""Conditions on a date column: "the orders between 2024-01-01 and 2024-02-15"
(``orders[orders["order_date"].between("2024-01-01", "2024-02-15")]``), "after 2024-02-01"
(``> "2024-02-01"``), "in March" (``.dt.month == 3``), "in March 2024" (``.dt.to_period("M") == "2024-03"``).
The rows are selected, or counted when "how many" is asked; the date column must hold datetimes
(pandas compares them with a date written as text), so the column types are looked at first.
"""

from __future__ import annotations

import re

from . import readers, selection
from .columns import Frame, column, literal, without_frame, wrapped
from .step import Step

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_DAY = r"\d{4}-\d{2}-\d{2}"
_RANGE = (rf"\bbetween\s+(?P<start>{_DAY})\s+and\s+(?P<end>{_DAY})"
          rf"|\b(?P<op>on\s+or\s+after|on\s+or\s+before|after|since|before|until)\s+(?P<day>{_DAY})"
          rf"|\bin\s+(?P<month>{'|'.join(_MONTHS)})(?:\s+(?P<year>\d{{4}}))?\b")
DATE_ROWS = re.compile(rf"\b(?P<verb>show|list|display|find|get|filter|select|give me|which|how many|count)\b"
                       rf"[^.?!\n]{{0,200}}?(?:{_RANGE})", re.I)
""""Show the orders between 2024-01-01 and 2024-02-15", "how many orders after 2024-02-01",
"the orders in March": the rows in a date range, not the frame's head."""
_RANGE_AT = re.compile(_RANGE, re.I)
_OPS = {"after": ">", "since": ">=", "on or after": ">=", "before": "<", "until": "<=", "on or before": "<="}


def _mask(of: str, m: re.Match[str]) -> tuple[str, str]:
    """The mask code of the range ``m`` says on the column ``of``, and how the answer says it."""
    # a date said is a whole day: 2024-02-15 18:00 is "until 2024-02-15", not "after 2024-02-15", so
    # the times are dropped (.dt.normalize()) where comparing with the day's midnight would miss them
    day = f"{of}.dt.normalize()"
    if m.group("start"):
        start, end = m.group("start"), m.group("end")
        return f"{day}.between({literal(start)}, {literal(end)})", f"between {start} and {end} (both included)"
    if m.group("op"):
        op = _OPS[re.sub(r"\s+", " ", m.group("op").lower())]
        return f"{day if op in ('>', '<=') else of} {op} {literal(m.group('day'))}", f"{m.group('op').lower()} {m.group('day')}"
    month = _MONTHS.index(m.group("month").lower()) + 1
    if m.group("year"):  # not .dt.to_period("M"): it warns on a column with a time zone
        said = f"in {m.group('month').capitalize()} {m.group('year')}"
        return f"({of}.dt.year == {m.group('year')}) & ({of}.dt.month == {month})", said
    return f"{of}.dt.month == {month}", f"in {m.group('month').capitalize()} (any year)"


def date_condition(frame: Frame, prompt: str) -> selection.Condition | None:
    """The prompt's date range as a condition on the rows a ranking is of ("which region has the
    highest price in March"); None when it says none or no datetime column is known."""
    text = without_frame(frame.name, prompt, frame.columns)
    m, dates = _RANGE_AT.search(text), frame.dates()
    if m is None or not dates:
        return None
    mask, said = _mask(column(frame.name, dates[0]), m)
    return selection.Condition(mask, f"{dates[0]} {said}", m.start(), m.end())


def says_a_range(prompt: str) -> bool:
    """Whether the prompt says a date range ("in March", "after 2024-02-01")."""
    return _RANGE_AT.search(prompt) is not None


def _rows(n: int, name: str, what: str) -> str:
    return f"{n:,} {'row' if n == 1 else 'rows'} of `{name}` {'has' if n == 1 else 'have'} {what}"


def date_rows(frame: Frame, prompt: str) -> list[Step] | str:
    """The rows of ``frame`` in the prompt's date range, or how many ("how many …")."""
    m = DATE_ROWS.search(prompt)
    if m is None:
        return frame.no_column("to compare with a date")
    if frame.dtypes is None:
        return frame.look_first()
    dates = frame.dates()
    if not dates:
        return (f"`{frame.name}` has no column of dates (datetime) to compare with a date; "
                "convert one first, e.g. with `pd.to_datetime`.")
    mask, said = _mask(column(frame.name, dates[0]), m)
    what = f"{dates[0]} {said}"
    name = frame.name
    # "where region is North after 2024-02-01": the other condition applies too, never left out
    said_range = _RANGE_AT.search(prompt, m.start("verb"))
    text = f"{prompt[:said_range.start()]} {prompt[said_range.end():]}" if said_range else prompt
    also = selection.condition_said(frame, text)
    if isinstance(also, (str, list)):
        return also
    if also is not None:
        mask, what = f"({also.mask}) & ({mask})", f"{also.said} and {what}"
    if m.group("verb").lower() in ("how many", "count"):  # "how many orders per region after …": each region's
        per_group = selection.counted_per_group(frame, (text,), mask, what)
        if per_group is not None:
            return per_group
        return [Step("python", {"code": wrapped("(", mask, ").sum()")}, f"count the rows of `{name}` with {what}",
                     reads=lambda out: None if (n := readers.number(out)) is None
                     else _rows(int(n), name, what))]

    def shown(out: str) -> str | None:
        n = readers.frame_rows(out)
        return None if n is None else f"no row of `{name}` has {what}" if n == 0 else _rows(n, name, what)
    return [Step("python", {"code": wrapped(f"{name}[", mask, "]")}, f"select the rows of `{name}` with {what}",
                 reads=shown, shows=True)]


__all__ = ["DATE_ROWS", "date_condition", "date_rows", "says_a_range"]
