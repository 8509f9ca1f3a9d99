"""The demo brain's questions about some rows of a DataFrame: how many meet a condition
(``(orders["price"] > 20).sum()``), which they are (``orders[orders["price"] > 20]``), and missing
values filled (``orders["price"] = orders["price"].fillna(orders["price"].median())``). Sorts are in
:mod:`.sorting`.

A condition is a column, a comparison in words or symbols ("above", "at most", ">=") and a
number, which may carry a currency sign, thousands separators or an exponent ("$1,000", "1e3").
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import NamedTuple

from . import readers
from .columns import Frame, column, literal, matches, named, without_frame, words_joined, wrapped
from .step import Step
from .text_conditions import TEXT_CLAUSE, TEXT_CONDITION, text_condition

# "50k" is 50,000; any other letter on the number ("20x", "3rd") makes it no condition, not the
# number before it ("salary above 50k" was salary > 50). A comma before three digits groups
# thousands ("1,000"); before one or two it is a decimal comma ("12,5" is 12.5, as much of Europe writes it).
_NUMBER = r"[$€£]?(-?(?:\d{1,3}(?:,\d{3})+|\d+,\d{1,2}(?!\d)|\d+)(?:\.\d+)?(?:e[-+]?\d+)?)(k)?(?!\w|[,.]\d)"
_CONDITION = (r"\b(\w+)\s+(?:is\s+|are\s+|of\s+)?(above|over|greater than|more than|below|under|less than|"
              rf"at least|at most|>=|<=|>|<)\s*{_NUMBER}")
# The condition is looked for within the sentence that asks (at most 200 characters on), so that a
# long prompt with many "how many" costs linear time, not a rescan of the rest per "how many".
# A second condition joined to the first ("units at least 3 and revenue above 100"): both apply.
_AND = re.compile(r"\s*,?\s*(and|or)\s+(?:the\s+|a\s+|its\s+|their\s+)?", re.I)
# the joined condition, on a number or on text ("price above 10 and region is North"); its groups are
# numbered as in ROWS_WHERE / ROWS_SHOWN / _ANYWHERE, so that one reader reads both
_JOINED = re.compile(rf"{_CONDITION}|{TEXT_CLAUSE}", re.I)
_HOW_MANY = r"\bhow many\b[^.?!\n]{0,200}?"
_SHOW = r"\b(?:show|list|display|find|get|filter|select|give me|which)\b[^.?!\n]{0,200}?"
ROWS_WHERE = re.compile(rf"{_HOW_MANY}(?:{_CONDITION}|{TEXT_CONDITION})", re.I)
""""How many rows have price above 20", "… where region is North": a count of the rows meeting a
condition, not the frame's shape."""
ROWS_SHOWN = re.compile(rf"{_SHOW}(?:{_CONDITION}|{TEXT_CONDITION})", re.I)
""""Show the orders with price above 20", "which rows have quantity at least 5", "the orders where
region is North": the rows themselves."""
# Words before "fill" in its sentence that do not ask for it: a negation ("don't fill …", "without
# filling") or a question about it ("should I fill …", "how would I fill …"): the frame is the
# user's, changed only when they ask for the change ("can you fill …", "please fill …" do).
_NOT_ASKED = (r"(?:don'?t|dont|do\s+not|never|not|without|avoid|no\s+need|should\s+(?:i|we)|"
              r"how\s+(?:do|does|would|could|can|should|might|to)\b|(?:can|could|may|would)\s+(?:i|we|one)|"
              r"what\s+if|whether|is\s+it|would\s+it)")
FILLED = re.compile(rf"(?:^|(?<=[.?!\n]))(?:(?!\b{_NOT_ASKED}\b)[^.?!\n])*?"
                    r"\b(?P<verb>fill|impute|replace)\b[^.?!\n]{0,80}?\b(?:missing|nan|nulls?|na|empty|blanks?)\b"
                    r"[^.?!\n]{0,80}?\bwith\s+(?:the\s+|a\s+|its\s+|their\s+)?(?:column'?s?\s+)?"
                    r"(?P<how>mean|average|median|zero|-?\d+(?:\.\d+)?)\b", re.I)
""""Fill the missing prices with the median": missing values filled; not "don't fill …", nor "should I fill …"."""
_ANYWHERE = re.compile(rf"(?:{_CONDITION}|{TEXT_CONDITION})", re.I)
_SENTENCE_END = re.compile(r"[.?!;](?!\d)|\n")
_ROWS_ASKED = re.compile(r"\b(?:how many|show|list|display|give me|filter|select|count)\b", re.I)
_COMPARISONS = {"above": ">", "over": ">", "greater than": ">", "more than": ">", "below": "<", "under": "<",
                "less than": "<", "at least": ">=", "at most": "<=", ">": ">", "<": "<", ">=": ">=", "<=": "<="}
_FILL_STATS = {"mean": "mean", "average": "mean", "median": "median"}


class Condition(NamedTuple):
    """A condition on rows: its mask code, how the answer says it, and where the prompt (the frame's
    name taken out, :func:`~.columns.without_frame`) says it."""

    mask: str
    said: str
    start: int
    end: int

    def cut_from(self, text: str) -> str:
        """``text`` (the frame's name taken out) without the condition's words, so that its column
        is not read as the one to total or average."""
        return f"{text[:self.start]} {text[self.end:]}"


def _condition(frame: Frame, prompt: str, pattern: re.Pattern[str]) -> Condition | list[Step] | str:
    """The mask code of the prompt's condition (``orders["price"] > 20``, ``orders["region"] == "North"``;
    two joined by "and" / "or" both, ``(…) & (…)``) and how the answer says it; else a look, or why there is none."""
    text = words_joined(without_frame(frame.name, prompt, frame.columns), frame.columns)
    m = pattern.search(text)
    first = _one(frame, m) if m else None
    if first is None or not isinstance(first, Condition):
        return frame.no_column("to compare") if first is None else first
    join = _AND.match(text, first.end)
    more = _JOINED.match(text, join.end()) if join else None
    if join is None or more is None:
        return first
    second = _one(frame, more)
    if isinstance(second, (str, list)):
        return second
    if second is None:  # never a condition left out silently: the rows would not be the ones asked for
        return f"I could not tell which column of `{frame.name}` the condition after \"{join.group(1)}\" compares."
    joined = "&" if join.group(1).lower() == "and" else "|"
    return Condition(f"({first.mask}) {joined} ({second.mask})", f"{first.said} {join.group(1).lower()} {second.said}",
                     first.start, second.end)


def _is_word(m: re.Match[str]) -> bool:
    """Whether the text condition ``m`` compares with a word ("is high"), not a number or "missing"."""
    word = m.group("word")
    return m.group("quoted") is None and not re.fullmatch(r"-?\d+(?:\.\d+)?|missing|null|nan|na|none|empty|blank|nat",
                                                            word, re.I)


def _one(frame: Frame, m: re.Match[str]) -> Condition | list[Step] | str | None:
    """The condition ``m`` found, on a number (groups 1-4) or on text ("region is North"); None when
    its word names no column, why not when it compares a word with a number column."""
    if m.group(1) is None:
        col = matches(m.group("col"), frame.columns)
        if col is not None and frame.dtypes is None and not frame.looked and _is_word(m):
            return [frame.look(quiet=True)]  # a word compares with text, not numbers: which is the column?
        kind = ("bool" if (frame.dtypes or {}).get(col or "") == "bool" else "number" if col in frame.numeric()
                else "date" if col in frame.dates() else "text")
        on_text = text_condition(frame.name, col, m, kind)
        return on_text if on_text is None or isinstance(on_text, str) else Condition(*on_text)
    col = matches(m.group(1), frame.columns)
    if col is None:
        return None
    op, number = _COMPARISONS[m.group(2).lower()], _number(m.group(3), m.group(4))
    return Condition(f"{column(frame.name, col)} {op} {number}", f"{col} {op} {number}", m.start(), m.end())


def condition_said(frame: Frame, prompt: str) -> Condition | list[Step] | str | None:
    """The condition on a column the prompt says anywhere ("region is North"), None when it says
    none; a look or why not when it says one that cannot be compared."""
    return None if _ANYWHERE.search(prompt) is None else _condition(frame, prompt, _ANYWHERE)


def rows_condition(frame: Frame, prompt: str, asks: re.Pattern[str]) -> Condition | None:
    """A condition on the rows a question (``asks``: its statistic or superlative) is about ("which
    region has the highest revenue for units above 1": ``sales["units"] > 1``); None when there is
    none that names a column, or when it is a question of its own: in another sentence ("What is
    the average price? How many rows have quantity above 2?") or after its own verb ("…, and show
    me the rows with quantity above 2"): those ask about every row."""
    found = _condition(frame, prompt, _ANYWHERE)
    if not isinstance(found, Condition):
        return None
    text = words_joined(without_frame(frame.name, prompt, frame.columns), frame.columns)
    start = max((b.end() for b in _SENTENCE_END.finditer(text, 0, found.start)), default=0)
    end = next((b.start() for b in _SENTENCE_END.finditer(text, found.end)), len(text))
    verbs = list(_ROWS_ASKED.finditer(text, start, found.start))
    # after a verb of its own, the question must be said between that verb and the condition
    own = text[verbs[-1].end():found.start] if verbs else text[start:end]
    return found if asks.search(own) else None


def _number(text: str, thousands: str | None) -> str:
    """The number as code: "1,000" is 1000 (not 1), "12,5" 12.5, "50k" 50000."""
    text = text.replace(",", ".") if re.fullmatch(r"-?\d+,\d{1,2}", text) else text.replace(",", "")
    if not thousands:
        return text
    value = Decimal(text) * 1000
    return str(int(value)) if value == value.to_integral_value() else format(value, "f")


def _rows(n: int, name: str) -> str:
    """ "1 row of `people` has", "3 rows of `people` have"."""
    return f"{n:,} {'row' if n == 1 else 'rows'} of `{name}` {'has' if n == 1 else 'have'}"


def rows_where(frame: Frame, prompt: str) -> list[Step] | str:
    """``(sales["revenue"] > 100).sum()``: how many rows meet the prompt's condition; per group
    when asked ("how many orders for price above 10 does each customer have":
    ``(orders["price"] > 10).groupby(orders["customer"]).sum().sort_values(ascending=False)``)."""
    found = _condition(frame, prompt, ROWS_WHERE)
    if not isinstance(found, Condition):
        return found
    mask, what = found.mask, found.said
    text = words_joined(without_frame(frame.name, prompt, frame.columns), frame.columns)
    # after the condition ("… above 10 does each customer have"), else before it ("how many orders
    # per customer have price over 10": the condition's span starts at "how many")
    per_group = counted_per_group(frame, (found.cut_from(text), text), mask, what)
    if per_group is not None:
        return per_group
    counted = _counted_column(frame, text)  # "how many customers have price above 10": distinct customers, not rows
    if counted is not None and frame.dtypes is None and not frame.looked:
        return [frame.look(quiet=True)]  # a number column ("how many units …") is no one to count
    if counted is not None and counted not in frame.numeric():
        code = f"{frame.name}.loc[{mask}, {literal(counted)}].nunique()"
        return [Step("python", {"code": code}, f"count the distinct {counted} values of the rows with {what}",
                     reads=lambda out: None if (n := readers.number(out)) is None
                     else f"{int(n):,} distinct {counted} values of `{frame.name}` have a row with {what}")]
    code = wrapped("(", mask, ").sum()")
    return [Step("python", {"code": code}, f"count the rows of `{frame.name}` with {what}",
                 reads=lambda out: None if (n := readers.number(out)) is None
                 else f"{_rows(int(n), frame.name)} {what}")]


_COUNTED = re.compile(r"\bhow many\s+(?:different\s+|distinct\s+|unique\s+)?(\w+)", re.I)


def _counted_column(frame: Frame, text: str) -> str | None:
    """The column "how many customers …" counts (its distinct values), None for rows ("how many
    rows", "how many orders" of a frame called orders)."""
    m = _COUNTED.search(text)
    return matches(m.group(1), frame.columns) if m else None


# "sort by price" is a sort (its own question), not a count per price
_PER_GROUP = re.compile(r"\b(?:each|per|every|(?<!sort\s)(?<!sorted\s)(?<!order\s)(?<!ordered\s)by)\s+(\w+)", re.I)

# "sort them by price", "ranked by price": a sort of its own, not a count per price
_SORTED_BEFORE = re.compile(r"\b(?:sort|sorted|order|ordered|rank|ranked)(?:\s+(?:them|it|these|those|the\s+rows"
                            r"|the\s+results?))?\s*$", re.I)


def counted_per_group(frame: Frame, texts: tuple[str, ...], mask: str, what: str) -> list[Step] | None:
    """Each group's count of the rows meeting ``mask`` when the first of ``texts`` to say a group
    does ("how many orders per region …"), a group with none too (value_counts of the selected rows
    leaves it out); None when none says one."""
    by = next((col for said in texts for per in _PER_GROUP.finditer(said)
               if not _SORTED_BEFORE.search(said, max(0, per.start() - 40), per.start())
               and (col := matches(per.group(1), frame.columns)) is not None), None)
    if by is None:
        return None
    chain = f".groupby({frame.name}[{literal(by)}]).sum().sort_values(ascending=False)"
    code = f"({mask}){chain}" if len(f"({mask}){chain}") <= 100 else f"(({mask})\n {chain})"  # as people break it
    return [Step("python", {"code": code}, f"count the rows of `{frame.name}` with {what} per {by}",
                 reads=lambda out: _per_group_said(frame.name, what, by, out))]


def _per_group_said(name: str, what: str, by: str, output: str) -> str | None:
    """"the rows of `orders` with price > 10 per customer: bob 3, cy 2" (none: said so)."""
    found = readers.series_rows(output)
    if readers.is_empty_series(output) or (found and found[0] and not found[1]
                                           and all(value == "0" for _, value in found[0])):
        return f"no row of `{name}` has {what}"
    if not found or not found[0]:
        return None
    listed = ", ".join(f"{label} {value}" for label, value in found[0])
    return f"the rows of `{name}` with {what} per {by}: {listed}{', …' if found[1] else ''}"


def rows_shown(frame: Frame, prompt: str) -> list[Step] | str:
    """``orders[orders["price"] > 20]``: the rows meeting the condition, counted in the answer
    and shown as pandas prints them."""
    found = _condition(frame, prompt, ROWS_SHOWN)
    if not isinstance(found, Condition):
        return found
    mask, what = found.mask, found.said
    code = wrapped(f"{frame.name}[", mask, "]")

    def said(out: str) -> str | None:
        n = readers.frame_rows(out)
        if n is None:
            return None
        return f"no row of `{frame.name}` has {what}" if n == 0 else f"{_rows(n, frame.name)} {what}"
    return [Step("python", {"code": code}, f"select the rows of `{frame.name}` with {what}", reads=said, shows=True)]


def fill_stat(prompt: str) -> str | None:
    """The statistic the prompt fills missing values with ("mean", "median"), None for a number or no fill."""
    m = FILLED.search(prompt)
    return _FILL_STATS.get(m.group("how").lower()) if m else None


def filled(frame: Frame, prompt: str) -> list[Step] | str:
    """Missing values of the columns the prompt names (else of every column, numeric ones for a
    mean or median) filled with their mean, median or a number, then counted again to show the fill
    took. Only the named columns change: "fill the missing cities with 0" is not every column's."""
    m = FILLED.search(prompt)
    if m is None:
        return f"I could not tell what to fill the missing values of `{frame.name}` with."
    if frame.dtypes is None:
        return frame.look_first()
    how = m.group("how").lower()
    # the columns named in the fill's own words ("fill the missing age … with the median", not the
    # salary of "… and show the salary above 40000")
    said = named(without_frame(frame.name, prompt[m.start("verb"):m.end()], frame.columns), frame.columns)
    stat = _FILL_STATS.get(how)
    value = "0" if how == "zero" else how
    name = frame.name
    chosen = [c for c in said if c in frame.numeric()] if stat else said
    if said and not chosen:
        text = " and ".join(said)
        return (f"{text} of `{name}` {'is' if len(said) == 1 else 'are'} not numeric, so there is no {stat} to fill "
                "its missing values with; I filled nothing.")
    if chosen:
        cols = column(name, chosen[0]) if len(chosen) == 1 else f"{name}[[{', '.join(map(literal, chosen))}]]"
        # a text column takes the number as text: pandas warns (and will refuse) an int in a str column
        typed = {c: value if c in frame.numeric() else literal(value) for c in chosen}
        as_given = typed[chosen[0]] if len(chosen) == 1 else "{" + ", ".join(f"{literal(c)}: {v}" for c, v in typed.items()) + "}"
        with_what = f"{cols}.{stat}()" if stat else as_given
        code = f"{cols} = {cols}.fillna({with_what})\n{cols}.isna().sum()"
        what = f"missing {' and '.join(chosen)} values of `{name}`"
    else:
        with_what = f"{name}.{stat}(numeric_only=True)" if stat else value
        code = f"{name} = {name}.fillna({with_what})\n{name}.isna().sum()"
        what = f"missing values of `{name}`" if not stat else f"missing values of the numeric columns of `{name}`"
    by = (f"its {stat}" if len(chosen) == 1 else f"each column's {stat}") if stat else value
    return [Step("python", {"code": code}, f"fill the {what} with {by}",
                 reads=lambda out: _filled_said(what, by, out))]


def _filled_said(what: str, by: str, output: str) -> str | None:
    """What is still missing after the fill: none, or (a text column) the counts left."""
    left = readers.number(output)
    if left is not None:
        return f"filled the {what} with {by}; none is missing now" if left == 0 else \
            f"filled the {what} with {by}; {int(left):,} are still missing"
    found = readers.series_rows(output)
    if found is None:
        return None
    rest = {label: int(v) for label, v in found[0] if v.isdigit() and int(v)}
    if not rest:
        return f"filled the {what} with {by}; none is missing now"
    listed = ", ".join(f"{c}: {n}" for c, n in rest.items())
    return f"filled the {what} with {by}; still missing (not numbers): {listed}"


__all__ = ["Condition", "FILLED", "ROWS_SHOWN", "ROWS_WHERE", "fill_stat", "filled", "rows_condition", "rows_shown", "rows_where"]
