"""The demo brain's group questions: which group has the largest (or smallest) total, mean or
number of rows, the top N groups, and which month / year / week … (a period of the date column).
Each is one pandas expression (``sales.groupby("region")["revenue"].sum().sort_values(ascending=False)``);
ties are named, and a group the frame has no column for is said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from . import readers
from .columns import Frame, column, is_id, literal, matches, named, variable_of, without_frame
from .statistics import STAT_WORDS, STATS, said_rows, said_value, stat_step
from .step import Step

# What may stand between a group question's words: the rest of its sentence (a decimal point is no
# end), at most 300 characters. Not ".*": from each "which" of a long prompt it ran to the prompt's end
# and back, so that an 18,000-character prompt took seconds (quadratic in its length).
_CLAUSE = r"(?:[^.?!\n]|\.(?=\d)){0,300}"
# "Which region sells most?", "what product has the largest total revenue?", "top store by sales"
# The group is the word after "which/what" (past "is the": "what is the max revenue" asks a column's
# maximum, not the largest group's total, whose "group" word was "is").
GROUP = re.compile(
    rf"\b(?:which|what|top)\s+(?:(?:is|are|was|were)\s+(?:the\s+)?)?(?:\d{{1,3}}\s+)?(?!(?:is|are|was|were|the)\b)(\w+)\b{_CLAUSE}"
    r"\b((?<!\bat )most|largest|biggest|highest|top|best|leading|max(?:imum)?|lowest|smallest|(?<!\bat )least|fewest)\b"
    rf"|\b((?<!\bat )most|largest|biggest|highest|lowest|smallest|(?<!\bat )least|fewest)\b{_CLAUSE}\b(?:by|per)\s+(\w+)"
    r"|\b(?:which|what)\s+(?:is|are|was|were)\s+(?:the\s+)?(?:top|best|largest|biggest|highest|leading|lowest|smallest)"
    r"\s+(?:\d+\s+)?(\w+)"
    r"|\b(?:top|bottom)\s+\d+\s+(\w+)",
    re.I)  # "what are the (top 2) regions", "which is the best region": the group follows the superlative (and its count);
# "top 3 customers by quantity": the group follows the count
# "top 3", "the bottom 2", "which 2 customers": that many groups
_TOP_N = re.compile(r"\b(?:top|bottom|which|what)\s+(\d{1,3})\b(?![.,:]\d)", re.I)
# A group named after "by" wins ("what is the highest revenue by region": region, not revenue).
_GROUP_BY = re.compile(r"\b(?:(?<!\bat )most|largest|biggest|highest|top|lowest|smallest|(?<!\bat )least|fewest)\b"
                       rf"{_CLAUSE}\b(?:by|per)\s+(\w+)", re.I)
_WHICH = re.compile(r"\b(?:which|what)\s+`?(\w+)`?", re.I)
_PER_WORD = re.compile(r"\b(?:per|by|for each|in each)\s+(\w+)", re.I)
_SMALLEST = re.compile(r"\b(lowest|smallest|(?<!\bat )least|fewest|bottom)\b", re.I)
# "which month sold most": a period of the date column (pandas' period codes), not each date
_PERIODS = {"year": "Y", "quarter": "Q", "month": "M", "week": "W", "day": "D"}


# A mean/median that says how the groups are ranked ("the highest average revenue", "top 3 by
# median", "on average"), not one asked on its own ("which region sells most, and what is the
# average revenue?": the regions' totals, then the column's mean).
_RANKED_BY = re.compile(r"\b(?:(?<!\bat )most|largest|biggest|highest|top|best|lowest|smallest|(?<!\bat )least|fewest"
                        r"|max(?:imum)?)\s+(?:\w+\s+)?(mean|average|median)\b|\bby\s+(?:the\s+)?(mean|average|median)\b"
                        r"|\bon\s+(average)\b", re.I)


def group_stat(prompt: str) -> str:
    """How a group question aggregates: "which region has the highest average revenue" ranks the
    regions' means, not their totals."""
    m = _RANKED_BY.search(prompt)
    return STATS[next(w for w in m.groups() if w).lower()] if m else "sum"


# Frame names that say an amount, not a thing counted: "the most sales" in `sales` is the largest
# total (revenue), as "which region sells most" is; "the most orders" in `orders` counts the orders.
_AMOUNT_NAMES = frozenset({"sales", "revenue", "revenues", "turnover", "income", "spend", "spending", "profit",
                           "profits", "earnings"})


def _counted(frame: str, prompt: str, columns: Sequence[str]) -> bool:
    """Whether "most" asks for the most rows ("which customer has the most orders" in `orders`,
    "which store appears most often"), not the largest total of a number (nor of a column named
    like the frame: `orders["orders"]`)."""
    amount = frame.lower() in _AMOUNT_NAMES or any(c.lower() == frame.lower() for c in columns)
    named = "" if amount else rf"{re.escape(frame)}|"
    things = rf"{named}rows|records|entries|times|often|frequent\w*|common"
    ranked = r"most|fewest|(?:largest|highest|smallest) number of"
    return re.search(rf"\b(?:{ranked})\s+`?(?:{things})\b", prompt, re.I) is not None


def rows_counted(frame: str, prompt: str, columns: Sequence[str]) -> str:
    """``prompt`` saying "rows" where its "most" counts the frame's own name ("which customer has
    the most orders" in `orders`: the most rows), so that a selection of the frame's rows, named by
    its code (``orders[orders["price"] > 10]``), still counts them (not the prices' total)."""
    if not _counted(frame, prompt, columns):
        return prompt
    ranked = r"most|fewest|(?:largest|highest|smallest) number of"
    return re.sub(rf"\b({ranked})\s+`?{re.escape(frame)}\b`?", r"\1 rows", prompt, flags=re.I)


def _largest_said(by: str, what: str, output: str, count: bool = False) -> str | None:
    """The first row of a sorted Series, and the rows tied with it ("ann, bob and cy have the most
    rows (3) by customer")."""
    found = readers.series_rows(output)
    if not found or not found[0]:
        return None
    rows = found[0]
    try:
        top = float(rows[0][1])
        tied = [label for label, value in rows if float(value) == top]
    except ValueError:
        return None
    shown = said_value(rows[0][1], count)
    if len(tied) == 1:
        return f"{tied[0]} has the {what} ({shown}) by {by}"
    return f"{', '.join(tied[:-1])} and {tied[-1]} tie for the {what} ({shown}) by {by}"


def largest_group(frame: Frame, prompt: str) -> list[Step] | str:
    """Group by the column the prompt names (else the first text column), or by a period of the
    date column ("which month"), and total the numeric column it names (else the first numeric
    one), or count the rows ("the most orders"); look at the dtypes first when that is unknown."""
    m, by_word = GROUP.search(prompt), _GROUP_BY.search(prompt)
    words = [by_word.group(1) if by_word else "", (m.group(1) or m.group(4) or m.group(5) or m.group(6) or "") if m else ""]
    # "what is the total sales per region, largest first": the group said before the superlative
    if not any(matches(w, frame.columns) for w in words if w):
        words += [w for w in _PER_WORD.findall(prompt) if matches(w, frame.columns)][:1]
    order = _Order(_counted(frame.name, prompt, frame.columns), bool(_SMALLEST.search(prompt)), _TOP_N.search(prompt),
                   group_stat(prompt))
    prompt = without_frame(frame.name, prompt, frame.columns)
    period = next((_PERIODS[w.lower().rstrip("s")] for w in words if w.lower().rstrip("s") in _PERIODS), None)
    if period is not None and not any(matches(w, frame.columns) for w in words if w):
        return _by_period(frame, prompt, period, order)
    numeric = frame.numeric() if frame.dtypes is not None else []
    # "the top regions by revenue": revenue, a numeric column, is what to total, not the group
    named_groups = list(dict.fromkeys(c for c in (matches(w, frame.columns) for w in words if w) if c))
    if frame.dtypes is None and len(named_groups) > 1:  # which is the number: look at the dtypes first
        named_groups = []
    # "which customer_id spent the most": an identifier asked for is the group, not a number to rank
    # ("what is the highest store_id" is still its maximum)
    asked = {matches(w, frame.columns) for w in _WHICH.findall(prompt)}
    numeric = [c for c in numeric if not (is_id(c) and c in asked)]
    if numeric and named_groups and not by_word and all(c in numeric for c in named_groups):
        # "what is the highest revenue": the word after the superlative is the number, and no group is
        # named: the column's maximum (262), not the largest group's total (462 for north)
        return [stat_step(frame.name, "min" if order.smallest else "max", frame.columns, prompt, "frame")]
    by = next((c for c in named_groups if c not in numeric), None)
    if order.counted and by is not None:
        return [_count_step(frame.name, column(frame.name, by), by, order)]
    said = [c for c in named(prompt, frame.columns) if c != by]
    guessed = by is None
    if frame.dtypes is not None:
        # not a CSV's dates read as text ("2024-01-05" each its own group), unless no other text column
        by = by or next((c for c in frame.text() if _date_rank(c) is None), next(iter(frame.text()), None))
        said = [c for c in said if c in frame.numeric()] or frame.measures()  # not order_id's total
    if by is None or not said:
        if not frame.looked:
            return [frame.look(quiet=True)]
        return (f"I found no text column to group `{frame.name}` by, or no numeric column to total."
                if not frame.look_failed else frame.unknown())
    step = (_count_step(frame.name, column(frame.name, by), by, order) if order.counted
            else _total_step(frame.name, literal(by), by, said[0], order))
    lacking = [w for w in words if w and w.lower() not in _NOT_A_GROUP and matches(w, frame.columns) is None]
    return [_saying_the_group(step, variable_of(frame.name), lacking[0], by) if guessed and lacking else step]


# Words the group patterns can take that name no group: "which one sells most", "what has the most".
_NOT_A_GROUP = frozenset({"one", "ones", "has", "have", "had", "do", "does", "did", "sells", "sell", "sold",
                          "makes", "made", "earns", "earned", "brings", "spends", "spent", "buys", "bought"})


def _saying_the_group(step: Step, name: str, asked: str, by: str) -> Step:
    """``step`` whose answer says it grouped by another column than the one the prompt named."""
    word = asked[:-3] + "y" if asked.endswith("ies") else asked[:-1] if re.search(r"[^s]s$", asked) else asked
    note = f"`{name}` has no {word} column, so I grouped by {by}"
    read = step.reads
    return replace(step, why=f"{step.why} (no {word} column)",
                   reads=lambda out: f"{note}: {found}" if read is not None and (found := read(out)) else None)


@dataclass(frozen=True)
class _Order:
    """How a group question ranks: rows counted or a column totalled, smallest or largest first,
    the top N only."""

    counted: bool
    smallest: bool
    top: re.Match[str] | None
    stat: str = "sum"

    def word(self) -> str:
        return STAT_WORDS[self.stat]

    def ranked(self, what: str) -> str:
        return f"{'smallest' if self.smallest else 'largest'} {self.word()} {what}"


def _by_period(frame: Frame, prompt: str, period: str, order: _Order) -> list[Step] | str:
    """``sales.groupby(sales["date"].dt.to_period("M"))["revenue"].sum()…`` for "which month"."""
    if frame.dtypes is None:
        return frame.look_first()
    dates = frame.dates()
    # A CSV's dates are read as text ("object"): a column named like a date is parsed where it is used.
    texts = text_dates(frame) if not dates else []
    values = [c for c in named(prompt, frame.columns) if c in frame.numeric()] or frame.measures()
    label = next(w for w, code in _PERIODS.items() if code == period)
    if not (dates or texts) or not (values or order.counted):
        return f"I found no date column in `{frame.name}` to group by {label}, or no numeric column to total."
    # a time zone ("datetime64[ns, UTC]") is dropped first, as to_period warns it would be
    local = ".dt.tz_localize(None)" if dates and "," in (frame.dtypes or {}).get(dates[0], "") else ""
    # of the user's frame (`orders`), not of the expression ranked (`orders.assign(…)`): aligned on its index
    when = (column(variable_of(frame.name), dates[0]) if dates
            else f"pd.to_datetime({column(variable_of(frame.name), texts[0])})")
    key = f"{when}{local}.dt.to_period({literal(period)})"
    step = _count_step(frame.name, key, label, order) if order.counted else _total_step(frame.name, key, label, values[0], order)
    if dates:
        return [step]
    read = step.reads
    return [replace(step, input={"code": f"import pandas as pd\n\n{step.input['code']}"},
                    why=f"{step.why} (reading {texts[0]}, which holds text, as dates)",
                    reads=lambda out: f"reading `{texts[0]}` (text) as dates, {found}"
                    if read and (found := read(out)) else None, on_error=unread_dates(frame.name, texts[0]))]


# The words of a column name that say it holds dates, best first: "order_date", "createdAt", "ts";
# not a name that merely contains one ("validated", "weekday", "holiday").
_NOT_DATES = frozenset({"of", "week", "name", "type", "count", "number", "num", "id", "flag", "label"})
_DATE_WORDS = ("date", "datetime", "timestamp", "time", "ts", "dt", "at", "on", "day", "month", "year")


def rows_per_period(frame: Frame, word: str) -> list[Step] | str | None:
    """``orders.groupby(orders["date"].dt.to_period("M")).size()`` for "how many orders per month"
    (a date read as text parsed first), in time order; None when ``word`` is no period."""
    period = _PERIODS.get(word.lower().rstrip("s"))
    if period is None:
        return None
    if frame.dtypes is None:
        return frame.look_first()
    dates, texts = frame.dates(), text_dates(frame)
    if not dates and not texts:
        return f"I found no date column in `{frame.name}` to count its rows per {word.lower().rstrip('s')}."
    when = column(frame.name, dates[0]) if dates else f"pd.to_datetime({column(frame.name, texts[0])})"
    local = ".dt.tz_localize(None)" if dates and "," in (frame.dtypes or {}).get(dates[0], "") else ""
    code = f"{frame.name}.groupby({when}{local}.dt.to_period({literal(period)})).size()"
    label = word.lower().rstrip("s")
    said = f"the rows of `{frame.name}` per {label}"
    return [Step("python", {"code": f"import pandas as pd\n\n{code}" if not dates else code},
                 f"count the rows of `{frame.name}` per {label}" + ("" if dates else f" (reading {texts[0]} as dates)"),
                 reads=lambda out: None if (got := said_rows(out)) is None else f"{said}: {got[0]}",
                 on_error=None if dates else unread_dates(frame.name, texts[0]))]


def text_dates(frame: Frame) -> list[str]:
    """The text columns whose names say they hold dates (a CSV's dates are read as text), surest first."""
    ranked = [(rank, c) for c in frame.text() if (rank := _date_rank(c)) is not None]
    return [c for _, c in sorted(ranked, key=lambda r: r[0])]


# the last line of a failed pd.to_datetime: "ValueError: time data "x" doesn't match format …, at position 3. You might …"
_UNREAD = re.compile(r"^(?:[\w.]*\.)?(?:DateParseError|ValueError|OutOfBoundsDatetime|ParserError): (.+?)(?:\. You might.*)?$",
                     re.M)


def unread_dates(name: str, col: str) -> Callable[[str], str | None]:
    """The reader of a failed ``pd.to_datetime(name[col])``: which value pandas could not read, and
    what to do (a traceback's last line is what says it, and a long traceback is shown cut)."""
    def said(output: str) -> str | None:
        found = _UNREAD.findall(output)
        if not found:
            return None
        return (f"`{col}` of `{name}` holds text that pandas cannot read as a date ({found[-1]}): correct those "
                f"values, or ask again naming how to read them (pd.to_datetime(…, format=\"mixed\") for several "
                f"formats, errors=\"coerce\" to leave the unreadable ones missing)")
    return said


def _date_rank(name: str) -> int | None:
    """How surely a text column's name says it holds dates (lower is surer); None: it does not."""
    words = [w.lower() for w in re.split(r"[\W_]+|(?<=[a-z])(?=[A-Z])", name) if w]
    if _NOT_DATES & set(words):  # "day_of_week" ("Mon"), "month_name" ("January"): no dates to parse
        return None
    ranks = [_DATE_WORDS.index(w) for w in words if w in _DATE_WORDS]
    return min(ranks) if ranks else None


def _total_step(name: str, key: str, by: str, value: str, order: _Order) -> Step:
    """The groups' totals of ``value``, ranked as asked (``key``: the groupby argument's code)."""
    # "the top 1": the groups tied with it too (keep="all"), not the first pandas meets
    ties = ', keep="all"' if order.top and order.top.group(1) == "1" else ""
    ranked = (f"{'nsmallest' if order.smallest else 'nlargest'}({order.top.group(1)}{ties})" if order.top
              else "sort_values()" if order.smallest else "sort_values(ascending=False)")
    code = f"{name}.groupby({key})[{literal(value)}].{order.stat}().{ranked}"
    what = f"{order.word()} {value}"
    doing = f"total {value}" if order.stat == "sum" else f"find the {what}"  # "I will total revenue by region"
    if order.top:
        top = order.top.group(1)
        return Step("python", {"code": code}, f"{doing} by {by} in `{name}`, {'bottom' if order.smallest else 'top'} {top}",
                    reads=_ranked_reader(name, by, lambda out: _top_said(by, what, out, order.smallest)
                                         if top != "1" else _largest_said(by, order.ranked(value), out)))
    first = "smallest" if order.smallest else "largest"
    return Step("python", {"code": code}, f"{doing} by {by} in `{name}`, {first} first",
                reads=_ranked_reader(name, by, lambda out: _largest_said(by, order.ranked(value), out)))


def _ranked_reader(name: str, by: str, read: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """``read``, but an empty Series ("Series([], …)": no rows, or none with a group) is said, not dumped."""
    empty = f"`{name}` has no rows with a {by}, so there is nothing to rank"
    return lambda out: empty if readers.is_empty_series(out) else read(out)


def _top_said(by: str, value: str, output: str, smallest: bool) -> str | None:
    said = said_rows(output, "{label} ({value})")
    return None if said is None else f"the {'bottom' if smallest else 'top'} {said[1]} {by} values by {value}: {said[0]}"


def _count_step(name: str, key: str, by: str, order: _Order) -> Step:
    """The rows per group (``key``: a column's or a period's code), most (or fewest) first."""
    code = f"{key}.value_counts({'ascending=True' if order.smallest else ''})"
    most = "fewest" if order.smallest else "most"
    return Step("python", {"code": code}, f"count the rows of `{name}` per {by}, {most} first",
                reads=_ranked_reader(name, by, lambda out: _largest_said(by, f"{most} rows", out, count=True)))


__all__ = ["GROUP", "group_stat", "largest_group", "rows_counted", "rows_per_period", "text_dates", "unread_dates"]
