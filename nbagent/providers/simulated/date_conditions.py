"""Conditions on a date column: "the orders between 2024-01-01 and 2024-02-15"
(``orders[orders["order_date"].between("2024-01-01", "2024-02-15")]``), "after 2024-02-01"
(``> "2024-02-01"``), "in March" (``.dt.month == 3``), "in March 2024" (``.dt.to_period("M") == "2024-03"``).
The rows are selected, or counted when "how many" is asked; the date column must hold datetimes
(pandas compares them with a date written as text), so the column types are looked at first.
"""

from __future__ import annotations

import re
from datetime import date

from . import readers, selection
from .columns import Frame, column, literal, without_frame, wrapped
from .step import Step

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
# a day as people write it: 2024-02-01, "Feb 1, 2024", "February 1st 2024", "1 March 2024", "1st of Mar. 2024"
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_NTH = r"\d{1,2}(?:st|nd|rd|th)?"
_DAY = (rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|{_MONTH}\s+{_NTH},?\s+\d{{4}}|{_NTH}\s+(?:of\s+)?{_MONTH},?\s+\d{{4}})"
        r"(?![\w-])")
_QUARTER = {"first": "1", "second": "2", "third": "3", "fourth": "4"}
_RANGE = (rf"\bbetween\s+(?P<start>{_DAY})\s+and\s+(?P<end>{_DAY})"
          rf"|\b(?P<op>on\s+or\s+after|on\s+or\s+before|after|since|before|until)\s+(?P<day>{_DAY})"
          rf"|\bin\s+(?P<month>{'|'.join(_MONTHS)})(?:\s+(?P<year>\d{{4}}))?\b"
          rf"|\b(?:from|between)\s+(?P<m1>{'|'.join(_MONTHS)})\s+(?:to|and)\s+(?P<m2>{'|'.join(_MONTHS)})"
          r"(?:\s+(?P<myear>\d{4}))?\b"
          r"|\bin\s+(?:q(?P<quarter>[1-4])|the\s+(?P<nth>first|second|third|fourth)\s+quarter)\b"
          r"(?:(?:\s+of)?\s+(?P<qyear>\d{4})\b)?"
          r"|\bin\s+(?:the\s+year\s+)?(?P<year_only>(?:19|20)\d{2})(?![\w./-]|,\d)")
DATE_ROWS = re.compile(rf"\b(?P<verb>show|list|display|find|get|filter|select|give me|which|how many|count)\b"
                       rf"[^.?!\n]{{0,200}}?(?:{_RANGE})", re.I)
""""Show the orders between 2024-01-01 and 2024-02-15", "how many orders after 2024-02-01",
"the orders in March": the rows in a date range, not the frame's head."""
_RANGE_AT = re.compile(_RANGE, re.I)
_OPS = {"after": ">", "since": ">=", "on or after": ">=", "before": "<", "until": "<=", "on or before": "<="}


def _iso(said: str) -> str:
    """A day as written ("Feb 1, 2024", "1st March 2024") in ISO form, as the code compares it
    (2024-02-01); as written when it is no calendar day (pandas then says why)."""
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", said)
    if m is None:
        day = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", said)
        month = re.search(r"[a-z]+", said, re.I)
        year = re.search(r"\d{4}", said)
        m_no = next((i + 1 for i, n in enumerate(_MONTHS) if month and n.startswith(month.group(0).lower()[:3])), 0)
        parts = (int(year.group(0)), m_no, int(day.group(1))) if day and year and m_no else None
    else:
        parts = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    try:
        return date(*parts).isoformat() if parts else said
    except ValueError:
        return said


def _mask(of: str, m: re.Match[str]) -> tuple[str, str]:
    """The mask code of the range ``m`` says on the column ``of``, and how the answer says it."""
    # a date said is a whole day: 2024-02-15 18:00 is "until 2024-02-15", not "after 2024-02-15", so
    # the times are dropped (.dt.normalize()) where comparing with the day's midnight would miss them
    day = f"{of}.dt.normalize()"
    if m.group("start"):
        start, end = _iso(m.group("start")), _iso(m.group("end"))
        return f"{day}.between({literal(start)}, {literal(end)})", f"between {start} and {end} (both included)"
    if m.group("op"):
        op, when = _OPS[re.sub(r"\s+", " ", m.group("op").lower())], _iso(m.group("day"))
        return f"{day if op in ('>', '<=') else of} {op} {literal(when)}", f"{m.group('op').lower()} {when}"
    if m.group("m1"):  # "from January to March 2024": each month from the first to the last, both included
        first, last = (_MONTHS.index(m.group(g).lower()) + 1 for g in ("m1", "m2"))
        # not only the two said: "the total from January to March" is of February too; a range
        # across the year's end ("from November to February") is the two months said
        months = list(range(first, last + 1)) if first <= last else [first, last]
        year = m.group("myear")
        mask = f"{of}.dt.month.isin({months})"
        names = [_MONTHS[k - 1].capitalize() for k in months]
        said = f"in {', '.join(names[:-1])} or {names[-1]}" + (f" {year}" if year else "")
        return (f"({of}.dt.year == {year}) & ({mask})" if year else mask), said
    if m.group("quarter") or m.group("nth"):  # "in Q1 2024", "in the first quarter of 2024", "in Q1" (any year)
        quarter, year = m.group("quarter") or _QUARTER[m.group("nth").lower()], m.group("qyear")
        if year is None:
            return f"{of}.dt.quarter == {quarter}", f"in Q{quarter} (any year)"
        return f"({of}.dt.year == {year}) & ({of}.dt.quarter == {quarter})", f"in Q{quarter} {year}"
    if m.group("year_only"):  # "in 2023"
        return f"{of}.dt.year == {m.group('year_only')}", f"in {m.group('year_only')}"
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


_CHANGE = re.compile(r"\b(?:chang\w*|grow\w*|grew|growth|differ\w*|compar\w*|increas\w*|decreas\w*|drop\w*)\b", re.I)
_MONTH_TO_MONTH = re.compile(rf"\b(?:from|between)\s+(?:{'|'.join(_MONTHS)})\s+(?:to|and)\s+(?:{'|'.join(_MONTHS)})\b", re.I)


def asks_a_change(prompt: str) -> bool:
    """Whether the prompt asks how something changed from one month to another ("how did total sales
    change from January to February"): the statistic of each of the two months, side by side."""
    return _CHANGE.search(prompt) is not None and _MONTH_TO_MONTH.search(prompt) is not None


_RELATIVE = re.compile(r"\b(?:last|this|previous|past|current)\s+(?:\d+\s+)?(?:day|week|month|quarter|year)s?\b"
                       r"|\b(?:yesterday|today|ytd|mtd|year[- ]to[- ]date|month[- ]to[- ]date)\b|\bin\s+week\s+\d+\b", re.I)


def unread_time(prompt: str) -> str | None:
    """A time said relative to today or by week number ("last month", "this year", "in week 5"),
    which no rule reads: the answer must say the rows were not narrowed to it, not give every row's
    total as if it were that period's."""
    m = _RELATIVE.search(prompt)
    return None if m is None or _RANGE_AT.search(prompt) else m.group(0)


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


__all__ = ["DATE_ROWS", "asks_a_change", "date_condition", "date_rows", "says_a_range", "unread_time"]
