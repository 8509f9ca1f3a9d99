"""The demo brain's DataFrame questions: the table of what asks each (:data:`_SKILLS`) and the
simple ones: shape, columns, describe, missing values, how many distinct values. The group
questions are in :mod:`.groups`, the rows a condition or a sort selects in :mod:`.selection`, the
statistics in :mod:`.statistics`. Each answer is short pandas with the column names written in;
the brain reads the printed result back into the answer's sentence (:mod:`.readers`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable

from . import readers, row_checks, selection, shares, sorting, statistics
from .columns import Frame, column, look_code, matches, without_frame
from .correlation import CORRELATION, correlation
from .date_conditions import DATE_ROWS, date_condition, date_rows, says_a_range
from .derived import PAID_ROWS, paid_rows, sold, spends, with_spent
from .groups import GROUP, largest_group, rows_counted, rows_per_period
from .step import Step

# "how many rows per region" counts each region's rows, not the frame's
_SHAPE = re.compile(r"\b(shape|how many rows(?!\s+(?:are\s+)?(?:there\s+)?(?:per|for each|in each|by|for every)\b)"
                    r"|how many columns|how big|size|dimensions?)\b", re.I)
_COLUMNS = re.compile(r"\b(columns?|fields?|variables in it)\b", re.I)
_DESCRIBE = re.compile(r"\b(describe|summary statistics|statistics|stats|distribution)\b", re.I)
_MISSING = re.compile(r"\b(missing|nan|nulls?|na|empty values?|blanks?)\b", re.I)
# "How many customers are in `orders`" (not "how many missing values", "how many prices are missing"
# nor "how many units in total": the missing values' count and the column's total answer those);
# the rest of its clause tells the frame's rows ("how many orders are there") from an unclear count.
_HOW_MANY = re.compile(r"\bhow many\s+(?!(?:missing|nan|nulls?|na|empty|blanks?)\b)(\w+)"
                       r"(?![^.?!\n]{0,120}?\b(?:missing|nan|nulls?|empty|blanks?|total|sum|altogether)\b)"
                       r"([^.?!\n,;]{0,120})", re.I)
_UNIQUE = re.compile(r"\b(?:how many|number of|count (?:of )?(?:the )?)\s*(?:unique|distinct|different)\s+(\w+)", re.I)


# "price between 10 and 20" (numbers, not dates: "between 2024-01-01 and …" is a date range)
_NUM = r"([$€£]?-?\d+(?:\.\d+)?k?)(?![\w/-]|[.,]\d)"
_BETWEEN = re.compile(rf"\b(\w+)\s+(?:is\s+|are\s+|of\s+)?between\s+{_NUM}\s+and\s+{_NUM}", re.I)


_MOST_COMMON = re.compile(r"\b(?:the\s+)?most\s+(?:common|frequent|popular)\s+(\w+)", re.I)
_VALUE_OF = re.compile(r"\s(?:from|in|of)\s+the\s+([A-Z][\w-]*)\s+(\w+)\b")


def rows_by_name(frame: Frame, prompt: str) -> str:
    """``prompt`` with "the top 3 orders" of a frame called `orders` said as "the top 3 rows": its
    rows, not a group called "orders" (kept when a column has the frame's name); "price between 10
    and 20" said as the two conditions it is, "price at least 10 and price at most 20" (both included)."""
    # "the most common region": which region appears most often (its rows counted, not a total)
    prompt = _MOST_COMMON.sub(lambda m: f"the {m.group(1)} that appears most often"
                              if matches(m.group(1), frame.columns) else m.group(0), prompt)
    # "orders from the North region": where region is North
    prompt = _VALUE_OF.sub(lambda m: f" where {m.group(2)} is {m.group(1)}"
                           if matches(m.group(2), frame.columns) and not matches(m.group(1), frame.columns)
                           else m.group(0), prompt)
    prompt = _BETWEEN.sub(lambda m: f"{m.group(1)} at least {m.group(2)} and {m.group(1)} at most {m.group(3)}"
                          if matches(m.group(1), frame.columns) else m.group(0), prompt)
    name = frame.name
    if any(c.lower() == name.lower() for c in frame.columns):
        return prompt
    forms = "|".join(re.escape(f) for f in dict.fromkeys((name, name.rstrip("s"))) if f)
    # "the 5 largest orders by quantity": the top 5 rows by quantity, not each customer's total
    prompt = re.sub(rf"\b(\d+)\s+(largest|biggest|highest|smallest|lowest)\s+`?(?:{forms}|rows|records|entries)`?(?=\s+by\b)",
                    lambda m: f"{'bottom' if m.group(2).lower() in ('smallest', 'lowest') else 'top'} {m.group(1)} rows",
                    prompt, flags=re.I)
    return re.sub(rf"\b(top|bottom|first|last)\s+(\d+)\s+`?(?:{forms})`?(?=\s|$|[.,?!])", r"\1 \2 rows", prompt,
                  flags=re.I)


def _with_date_rows(found: list[str]) -> list[str]:
    """The questions ``found`` with a date range: "which region … in March" ranks those rows (no rows
    of their own); "how many orders after 2024-02-01" is the rows in the range, not the shape or a head."""
    if "date_rows" in found and "largest_group" in found:
        return [f for f in found if f != "date_rows"]
    if "date_rows" in found:
        return [f for f in found if f not in ("how_many", "shape", "rows_where", "rows_shown")]
    return found


def intents(prompt: str) -> list[str]:
    """The DataFrame questions asked in ``prompt``, in the order the answer says them."""
    found = _with_date_rows([name for name, (asks, _) in _SKILLS.items() if asks.search(prompt)])
    if "shape" in found:  # the shape only if asked outside the counts ("how many rows have price above 20")
        rest = prompt
        for name in (n for n in _NOT_THE_SHAPE if n in found):
            rest = _SKILLS[name][0].sub(" ", rest)
        if not _SHAPE.search(rest):
            found.remove("shape")
    if "how_many" in found and {"rows_where", "unique", "shape"} & set(found):  # a count asked more precisely
        found.remove("how_many")
    if "share" in found:  # "the share of each region in total sales": one answer, not the group's total too
        found = [f for f in found if f not in ("largest_group", "how_many", "describe")]
    if "second" in found:  # "the second highest price": one value (row), not a group
        found = [f for f in found if f not in ("largest_group", "top_rows", "sorted")]
    if "missing_rows" in found:  # "the rows with missing values": those rows, not the counts per column
        found.remove("missing")
    if "duplicates" in found:  # "how many duplicate rows": not the frame's shape nor a distinct count
        found = [f for f in found if f not in ("how_many", "shape", "unique")]
    if "paid_rows" in found:  # "the 3 most paid orders": rows ranked by their amount, not each customer's
        found = [f for f in found if f not in ("largest_group", "top_rows", "first_rows")]
    if "top_rows" in found:  # "the top 3 rows by revenue" are rows, not a group called "rows"
        found = [f for f in found if f not in ("largest_group", "sorted")]
    if "first_rows" in found and {"sorted", "top_rows"} & set(found):  # the sort's (ranking's) own rows
        found.remove("first_rows")
    if "first_rows" in found and "largest_group" in found and not GROUP.search(sorting.FIRST_ROWS.sub(" ", prompt)):
        found.remove("largest_group")  # "the top 5 rows": the frame's head, not a group called "rows"
    if {"sorted", "largest_group"} <= set(found) and not GROUP.search(sorting.SORTED.sub(" ", prompt)):
        found.remove("largest_group")  # "sort … and show the top 3 (by price)": the sort's rows, no group
    return found


def _shape_said(name: str, output: str) -> str | None:
    size = readers.shape(output)
    if size is None or len(size) != 2:
        return None
    return f"`{name}` has {size[0]} rows and {size[1]} columns"


def _missing_said(name: str, output: str) -> str | None:
    found = readers.series_rows(output)
    if found is None:
        return None
    rows, cut = found
    counts = {label: int(value) for label, value in rows if value.isdigit()}
    some = ", ".join(f"{c}: {n}" for c, n in counts.items() if n)
    total = sum(counts.values())
    if cut:
        return f"`{name}` has at least {total} missing values" + (f" ({some})" if some else "")
    return f"`{name}` has {total} missing value{'' if total == 1 else 's'}" + (f" ({some})" if some else "")


def _unique_count(frame: Frame, prompt: str) -> list[Step] | str:
    """``sales["region"].nunique()`` for "how many unique regions"."""
    m = _UNIQUE.search(prompt)
    col = matches(m.group(1), frame.columns) if m else None
    if col is None:
        return frame.no_column("to count")
    return [_nunique_step(frame.name, col)]


def _how_many(frame: Frame, prompt: str) -> list[Step] | str:
    """"How many customers are in `orders`": the distinct values of the text column the word names
    (of a number column, "how many units were sold", its total); "how many orders are there" (the
    frame's own name) or "how many records": its rows; "how many sales does each region have": the
    rows per region; anything else in the clause ("how many people are older than 40") is unclear."""
    if not any(c.lower() == frame.name.lower() for c in frame.columns):
        # "how many orders per region" in `orders`: its rows (the name taken out left "how many per region")
        prompt = re.sub(rf"\b(how many)\s+`?{re.escape(frame.name)}\b`?", r"\1 rows", prompt, flags=re.I)
    m = _HOW_MANY.search(without_frame(frame.name, prompt, frame.columns))
    period = _PER_PERIOD.search(m.group(0)) if m else None
    if period is not None and matches(period.group(1), frame.columns) is None:  # "how many orders per month"
        counted = rows_per_period(frame, period.group(1))
        if counted is not None:
            return counted
    col = matches(m.group(1), frame.columns) if m else None
    if col is not None:
        if frame.dtypes is None and not frame.looked:
            return [frame.look(quiet=True)]  # a number column is totalled, a text column's values counted
        if frame.dtypes is not None and col in frame.numeric():
            return [statistics.stat_step(frame.name, "sum", frame.columns, col, "frame")]
        return [_nunique_step(frame.name, col)]
    if not frame.columns and not frame.looked:
        return [frame.look(quiet=True)]
    if m is None or m.group(1).lower() not in _ROW_WORDS:
        word = m.group(1) if m else ""
        return frame.unknown() if frame.look_failed else f"`{frame.name}` has no column for \"{word}\" to count."
    rest = re.split(r"\band\b", m.group(2), maxsplit=1)[0]
    per = re.search(r"\b(?:per|each|by|every)\s+(\w+)", rest, re.I)
    if per and (by := matches(per.group(1), frame.columns)) is not None:
        return [Step("python", {"code": f"{column(frame.name, by)}.value_counts()"},
                     f"count the rows of `{frame.name}` per {by}", reads=lambda out: _per_group_said(frame.name, by, out))]
    if all(w.lower() in _ROW_WORDS | _FILLER for w in re.findall(r"\w+", rest)):
        return _shape(frame, prompt)
    return frame.unknown() if frame.look_failed else (
        f"I could not tell what to count in `{frame.name}` (ask, for example, \"how many rows have <column> above <number>\").")


_PER_PERIOD = re.compile(r"\b(?:per|each|by|every|a)\s+(year|quarter|month|week|day)s?\b", re.I)
_ROW_WORDS = frozenset({"rows", "records", "entries", "lines", "items", "are", "is", "were", "was", "there", "do", "does",
                        "of", "in"})
"""Words after "how many" once the frame's own name is taken out ("how many orders are in `orders`"): its rows."""
_FILLER = frozenset({"the", "a", "an", "it", "this", "that", "table", "frame", "dataframe", "data", "have", "has", "had",
                     "contain", "contains", "hold", "holds", "got", "we", "i", "you", "here", "now", "currently",
                     "all", "total"})
"""Words that leave "how many orders are there in this table" a question about the frame's rows."""


def _per_group_said(name: str, by: str, output: str) -> str | None:
    """"the rows of `sales` per region: north 3, south 2, east 1" (pandas' ``value_counts`` order)."""
    found = readers.series_rows(output)
    if not found or not found[0]:
        return None
    rows, cut = found
    listed = ", ".join(f"{label} {value}" for label, value in rows)
    return f"the rows of `{name}` per {by}: {listed}{', …' if cut else ''}"


def _nunique_step(name: str, col: str) -> Step:
    said = f"distinct {col} values in `{name}`"
    return Step("python", {"code": f"{column(name, col)}.nunique()"}, f"count the {said}",
                reads=lambda out: None if (n := readers.number(out)) is None else f"there are {int(n):,} {said}")


def _shape(frame: Frame, prompt: str) -> list[Step]:
    name = frame.name
    return [Step("python", {"code": f"{name}.shape"}, f"find the shape of `{name}`",
                 reads=lambda out: _shape_said(name, out))]


def _columns(frame: Frame, prompt: str) -> list[Step]:
    return [frame.look()]


def _describe(frame: Frame, prompt: str) -> list[Step]:
    return [Step("python", {"code": f"{frame.name}.describe()"}, f"describe `{frame.name}` with summary statistics")]


def _missing(frame: Frame, prompt: str) -> list[Step]:
    name = frame.name
    return [Step("python", {"code": f"{name}.isna().sum()"}, f"count the missing values in `{name}`",
                 reads=lambda out: _missing_said(name, out))]


# Each DataFrame question: what asks it, and the calls that answer it (or why there are none).
_SKILLS: dict[str, tuple[re.Pattern[str], Callable[[Frame, str], list[Step] | str]]] = {
    "date_rows": (DATE_ROWS, date_rows),
    "rows_where": (selection.ROWS_WHERE, selection.rows_where),
    "rows_shown": (selection.ROWS_SHOWN, selection.rows_shown),
    "sorted": (sorting.SORTED, sorting.sorted_by),
    "top_rows": (sorting.TOP_ROWS, sorting.top_rows),
    "first_rows": (sorting.FIRST_ROWS, sorting.first_rows),
    "aged_rows": (sorting.AGED, sorting.aged_rows),
    "unique": (_UNIQUE, _unique_count),
    "how_many": (_HOW_MANY, _how_many),
    "shape": (_SHAPE, _shape),
    "columns": (_COLUMNS, _columns),
    "describe": (_DESCRIBE, _describe),
    "share": (shares.SHARE, shares.share),
    "paid_rows": (PAID_ROWS, paid_rows),
    "largest_group": (GROUP, largest_group),
    "missing_rows": (row_checks.MISSING_ROWS, row_checks.missing_rows),
    "duplicates": (row_checks.DUPLICATES, row_checks.duplicates),
    "second": (row_checks.SECOND, row_checks.second),
    "missing": (_MISSING, _missing),
    "filled": (selection.FILLED, selection.filled),
    "correlation": (CORRELATION, correlation),
}
_NOT_THE_SHAPE = ("rows_where", "rows_shown", "unique")
""""How many rows have price above 20", "how many unique customers": counts, not the frame's shape."""
_RANKED = re.compile(r"\b(?:most|largest|biggest|highest|top|best|leading|max\w*|lowest|smallest|least|fewest|bottom"
                     r"|spent|spends?|spending|paid|pays?)\b", re.I)
"""A group question's words: a condition ranks only its rows when said with them."""
SHOWS_ROWS = frozenset({"date_rows", "second", "missing_rows", "duplicates", "paid_rows",
                        "rows_shown", "sorted", "top_rows", "first_rows", "aged_rows", "correlation"})
"""Questions answered with rows: their "show" asks for those rows, not the frame's head."""


def frame_steps(frame: Frame, intent: str, prompt: str) -> list[Step] | str:
    """The calls answering ``intent`` (a name :func:`intents` gave) about ``frame``, or why there are none."""
    made = _SKILLS[intent][1](frame, prompt)
    if intent != "largest_group" or isinstance(made, str) or any(s.input.get("code") == look_code(frame.name) for s in made):
        return made
    prompt = rows_counted(frame.name, prompt, frame.columns)  # "the most orders" of a selection: its rows
    rows = selection.rows_condition(frame, prompt, _RANKED) or date_condition(frame, prompt)
    if (rows is not None or spends(prompt) or says_a_range(prompt)) and frame.dtypes is None:
        # which column is a number decides what is ranked: look first, at the frame itself
        return made if frame.looked else [frame.look(quiet=True)]
    about, notes = without_frame(frame.name, prompt, frame.columns), []
    about = rows.cut_from(about) if rows is not None else about
    spent = with_spent(frame, prompt if rows is None else about)  # a condition's column is not what was spent
    spent = spent or sold(frame, about)  # "which region sells most": price × quantity, not the prices
    if rows is None and spent is None:
        return made
    segments = [frame.name]  # the ranked frame's code, in the pieces a long cell is broken at
    if spent is not None:  # "which customer spent the most": price × quantity, not the prices
        segments = [f"{frame.name}.assign({spent.col}={spent.code})"]
        frame = replace(frame, columns=(*frame.columns, spent.col), dtypes={**(frame.dtypes or {}), spent.col: "float64"})
        # said first, so that it is what is totalled (not a price named earlier: "sort by price. Who spent most?")
        about = f"{spent.col}: {spent.named_in(about)}"
    if rows is not None:  # "… for units above 1": those rows ranked, the condition's column no group or value
        # after the assign: spent is made on the whole frame, then the rows selected, and no name is
        # assigned, so none of the user's variables (the facts list 40 at most) can be overwritten
        segments = [*segments, f".loc[{rows.mask}]"] if spent is not None else [f"{frame.name}[{rows.mask}]"]
        notes.append(f"among the rows with {rows.said}")
    if spent is not None:
        notes.append(spent.said)
    frame = replace(frame, name="".join(segments))
    within = _SKILLS[intent][1](frame, about)
    if isinstance(within, str):
        return within
    return [_chained(_saying(step, ", ".join(notes)), segments) for step in within]


def _chained(step: Step, segments: list[str]) -> Step:
    """A long pandas chain on the source ``segments`` make broken as people write it: in
    parentheses, a method a line."""
    code, source = str(step.input.get("code", "")), "".join(segments)
    if len(code) <= 100 or not code.startswith(source):
        return step
    rest = code[len(source):]
    return replace(step, input={**step.input, "code": "(" + "\n ".join([*segments, rest]) + ")"})


def _saying(step: Step, note: str) -> Step:
    """``step`` whose sentence says what it ranked ("…, among the rows with units > 1")."""
    reads = step.reads
    if reads is None:
        return step
    return replace(step, reads=lambda out: text if not (text := reads(out)) else f"{text}, {note}")


__all__ = ["SHOWS_ROWS", "frame_steps", "intents", "rows_by_name"]
