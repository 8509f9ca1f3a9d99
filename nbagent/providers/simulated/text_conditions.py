"""Conditions on a column's text (or any value said as a word): "the orders where region is
North" (``orders["region"] == "North"``), "whose name contains 'a'"
(``orders["name"].str.contains("a")``), "where city starts with B", "where status is not paid".
A person writes them as comparisons with the value quoted, or with the ``.str`` methods; a number
said this way ("where quantity is 3") is compared as a number.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .columns import column, literal

# the value: quoted (any words), else one word (or a number); it ends the clause
_VALUE = r"""(?:['"‘“](?P<quoted>[^'"’”\n]{1,60})['"’”]|(?P<word>[\w.@-]+)(?=\s*(?:$|[.?!,;:)]|\b(?:and|or|in|of)\b)))"""
TEXT_CLAUSE = (r"(?P<col>\w+)\s+(?P<op>is\s+not|isn'?t|is|equals?|==|=|!=|contains|includes|has|starts?\s+with"
               rf"|ends?\s+with|begins?\s+with)\s+{_VALUE}")
"""The condition itself, "region is North" (joined to another by "and" it has no "where" of its own)."""
TEXT_CONDITION = (r"\b(?:where|with|whose|for|when|in which|that have|which have|having)\s+(?:the\s+|a\s+|its\s+|their\s+)?"
                  rf"{TEXT_CLAUSE}")
# "where price is missing" asks for the missing values (isna), not for the text "missing"
_MISSING = frozenset({"missing", "null", "nan", "na", "none", "empty", "blank", "nat"})
# a value with one of these is text to find as typed, not a regular expression ("contains '('" raised,
# "contains '.com'" matched "xcom"): str.contains reads its pattern as a regex unless told not to
_REGEX_CHARS = frozenset(".^$*+?{}[]|()\\")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class TextCondition(NamedTuple):
    """The mask code and how the answer says it, with where the prompt says it."""

    mask: str
    said: str
    start: int
    end: int


def _on_bool(frame: str, col: str, value: str, negated: bool, m: re.Match[str]) -> TextCondition | str:
    """``orders["active"]`` or ``~orders["active"]`` for "where active is true / no"; else why not."""
    truth = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}.get(value.lower())
    if truth is None:
        return f"{col} of `{frame}` holds True/False, and I could not tell which \"{value}\" means; say true or false."
    wanted = truth != negated
    return TextCondition(column(frame, col) if wanted else f"~{column(frame, col)}", f"{col} {wanted}", m.start(), m.end())


def text_condition(frame: str, col: str | None, m: re.Match[str], kind: str = "text") -> TextCondition | str | None:
    """The mask of the text condition ``m`` found (``col`` the column its word names; None: no column);
    ``kind`` the column's ("text", "number", "date"): a word compared with numbers is said to be
    not understood (a str), not run to find no row or fail."""
    if col is None:
        return None
    value = m.group("quoted") if m.group("quoted") is not None else m.group("word")
    op = re.sub(r"\s+", " ", m.group("op").lower())
    shown = value if _NUMBER.fullmatch(value) and m.group("quoted") is None else literal(value)
    of = column(frame, col)
    negated = op in ("is not", "isnt", "isn't", "!=")
    if m.group("quoted") is None and value.lower() in _MISSING and (negated or op in ("is", "equals", "equal", "==", "=")):
        mask = f"{of}.notna()" if negated else f"{of}.isna()"
        return TextCondition(mask, f"{col} {'not ' if negated else ''}missing", m.start(), m.end())
    if kind == "number" and shown != value:
        return (f"{col} of `{frame}` holds numbers, and I could not tell which number \"{value}\" means; "
                f"say it with one (\"{col} above 20\").")
    if kind == "bool":  # True/False: .str on it fails the cell, == "true" finds no row
        return _on_bool(frame, col, value, negated, m)
    if kind == "date" and shown != value:  # a datetime never equals a word: no row, said as if none were
        return (f"{col} of `{frame}` holds dates, and I could not tell which date \"{value}\" means; "
                f"say it with one (\"{col} after 2024-02-01\", \"in March\").")
    # A word is matched in any case: "where region is north" means the rows the column holds as
    # "North" (as typed it found none). A number said as a word stays a number comparison.
    as_text = shown != value and kind == "text"
    lowered, folded = literal(value.lower()), f"{of}.str.lower()"
    # na=False: a missing value is no match (without it the mask holds NaN and selecting rows fails)
    if op in ("contains", "includes", "has"):
        plain = ", regex=False" if _REGEX_CHARS & set(value) else ""
        mask = f"{of}.str.contains({literal(value)}, case=False, na=False{plain})"
        said = f"{col} containing {literal(value)}"
    elif op.endswith("with"):
        method = "endswith" if op.startswith("end") else "startswith"
        mask = f"{folded}.str.{method}({lowered}, na=False)"
        said = f"{col} {'ending' if method == 'endswith' else 'starting'} with {literal(value)}"
    elif negated:
        mask, said = f"{folded if as_text else of} != {lowered if as_text else shown}", f"{col} other than {shown}"
    else:
        mask, said = f"{folded if as_text else of} == {lowered if as_text else shown}", f"{col} == {shown}"
    return TextCondition(mask, said, m.start(), m.end())


__all__ = ["TEXT_CLAUSE", "TEXT_CONDITION", "TextCondition", "text_condition"]
