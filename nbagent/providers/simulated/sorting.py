"""The demo brain's sorts: the frame sorted by one column or several ("sort `sales` by region,
then by price descending": ``sales.sort_values(["region", "price"], ascending=[True, False])``),
and only its first rows when a number of them is asked ("sort by revenue and show the top 3":
``sales.sort_values("revenue", ascending=False).head(3)``; "the top 3 rows of `sales` by revenue":
``sales.nlargest(3, "revenue")``). The frame itself is never changed.
"""

from __future__ import annotations

import re

from . import readers
from .columns import Frame, column, literal, matches, without_frame
from .groups import text_dates, unread_dates
from .step import Step

SORTED = re.compile(r"\bsort(?:ed)?\b[^.?!\n]{0,60}?\bby\s+(?:the\s+)?(\w+)(?P<rest>[^.?!\n]{0,120})", re.I)
""""Sort `orders` by price", "sorted by the price in descending order"."""
# "by price and quantity", "by region, price and units": keys listed after the first (each must be a column)
_LISTED = re.compile(r"\s*(?:,\s*(?:and\s+)?|\s+and\s+)(?:the\s+)?(\w+)", re.I)
# a key's own direction said before the next listed key ("by price, largest first, and quantity")
_KEY_ORDER = re.compile(r"\s*,?\s*(?:in\s+)?(?:(?:desc|asc)\w*|(?:de|in)creasing|reversed?"
                        r"|(?:highest|largest|biggest|most|newest|latest|lowest|smallest|least|oldest|youngest"
                        r"|earliest)\s+first|(?:from\s+)?\w+\s+to\s+\w+)(?:\s+order)?(?=\s*(?:,|\band\b))", re.I)
_THEN_BY = re.compile(r"\b(?:then|and\s+then|and)\s+by\s+(?:the\s+)?(\w+)", re.I)
_DESCENDING = re.compile(r"\b(?<!not )(?:desc\w*|decreasing|reverse|(?:highest|largest|biggest|most|newest|latest)"
                         r"(?:\s+\w+)?\s+first|from (?:the )?(?:highest|largest|biggest|most|newest|latest)"
                         r"|(?:highest|largest|biggest|greatest|most|high|large|big|z)\s+to\s+(?:the\s+)?"
                         r"(?:lowest|smallest|least|low|small|a))\b|\bnot\s+(?:asc\w*|increasing)\b", re.I)
""""Largest first", "high to low", "descending" (not "not descending": that is ascending)."""
# "Oldest first" is the largest value of an age and the smallest of a date; "youngest first" the reverse.
_OLD_OR_YOUNG = re.compile(r"\b(oldest|youngest)\s+first\b", re.I)
_AGES = re.compile(r"(?:^|_)(?:age|ages|years?|tenure|seniority)(?:_|$)", re.I)
# How many of the sorted rows to show: "the top 3" (largest first unless the order is said),
# "the first 5" (in the sort's order), "the bottom 2" (smallest first).
_HOW_MANY_ROWS = re.compile(r"\b(top|first|bottom|last)\s+(\d+)\b", re.I)
_RANKED_BY = re.compile(r"\s+by\s+(?:the\s+)?(\w+)", re.I)
TOP_ROWS = re.compile(r"\b(top|bottom|first|last)\s+(\d+)\s+(?:rows|records|entries)\b[^.?!\n]{0,80}?\bby\s+(?:the\s+)?(\w+)",
                      re.I)
""""The top 3 rows of `sales` by revenue": those rows, not a group called "rows"."""


def _descending(col: str, words: str) -> bool:
    """Whether ``words`` (what follows the column in the prompt) ask for the largest first."""
    old = _OLD_OR_YOUNG.search(words)
    if old is not None:
        return (old.group(1).lower() == "oldest") == bool(_AGES.search(col))
    return _DESCENDING.search(words) is not None


def _keys(frame: Frame, first: str, rest: str) -> list[tuple[str, bool]] | str:
    """The sort's columns with their directions: the first, those listed right after it ("by
    price and quantity", "by region, price"), then each "then by" one, each read from its own words
    (up to the next key). Listed keys with no words of their own share the list's last direction
    ("by price and quantity, descending": both)."""
    found, bounds, pos = [(first, 0)], [], 0
    while (m := _listed_key(frame, rest, pos)) is not None:
        bounds.append(m.start())
        found.append((matches(m.group(1), frame.columns) or "", m.end()))
        pos = m.end()
    listed = len(found)
    for m in _THEN_BY.finditer(rest, pos):
        col = matches(m.group(1), frame.columns)
        if col is None:  # never a key left out silently: the order would not be the one asked for
            return f"I could not tell which column of `{frame.name}` \"then by {m.group(1)}\" means."
        bounds.append(m.start())
        found.append((col, m.end()))
    bounds.append(len(rest))
    words = [rest[start:end] for (_, start), end in zip(found, bounds, strict=True)]
    for i in range(listed - 2, -1, -1):
        if not words[i].strip(" ,"):
            words[i] = words[i + 1]
    return [(col, _descending(col, said)) for (col, _), said in zip(found, words, strict=True)]


def _listed_key(frame: Frame, rest: str, pos: int) -> re.Match[str] | None:
    """The next key listed at ``pos`` ("and quantity"), maybe after the previous key's own
    direction (", largest first, and quantity"); None when no column is listed there."""
    m = _LISTED.match(rest, pos)
    if m is None or matches(m.group(1), frame.columns) is None:
        said = _KEY_ORDER.match(rest, pos)
        m = _LISTED.match(rest, said.end()) if said else None
    return m if m is not None and matches(m.group(1), frame.columns) is not None else None


def _sort_code(name: str, keys: list[tuple[str, bool]]) -> str:
    cols = [c for c, _ in keys]
    downs = [d for _, d in keys]
    by = literal(cols[0]) if len(cols) == 1 else f"[{', '.join(map(literal, cols))}]"
    if not any(downs):
        return f"{name}.sort_values({by})"
    if all(downs):
        return f"{name}.sort_values({by}, ascending=False)"
    return f"{name}.sort_values({by}, ascending=[{', '.join(str(not d) for d in downs)}])"


def _order_said(keys: list[tuple[str, bool]]) -> str:
    return ", then ".join(f"{c}, {'largest' if d else 'smallest'} first" for c, d in keys)


def sorted_by(frame: Frame, prompt: str) -> list[Step] | str:
    """``orders.sort_values("price")`` (``ascending=False`` when asked for the largest first, a list
    of columns for "then by", ``.head(n)`` for "the top n"); the frame itself is left as it was."""
    text = without_frame(frame.name, prompt, frame.columns)
    m = SORTED.search(text)
    col = matches(m.group(1), frame.columns) if m else None
    if m is None or col is None:
        return frame.no_column("to sort by")
    keys = _keys(frame, col, m.group("rest"))
    if isinstance(keys, str):
        return keys
    shown = _HOW_MANY_ROWS.search(text, m.start())
    ranked = _RANKED_BY.match(text, shown.end()) if shown else None
    if shown is not None and ranked is not None:  # "sort by date and show the top 3 by price": the 3 largest prices
        by = matches(ranked.group(1), frame.columns)
        if by is None:  # never a ranking left out silently
            return f"I could not tell which column of `{frame.name}` \"{shown.group(0)} by {ranked.group(1)}\" means."
        keys = [(by, False)]
    if shown is not None and (ranked or not _said_order(m.group("rest"))):
        # "the top 3" are the largest, "the bottom 3" the smallest, by every key ("sort by price and
        # quantity and show the top 3"); "first" / "last" keep the order
        where = shown.group(1).lower()
        keys = [(c, True if where == "top" else False if where == "bottom" else d) for c, d in keys]
    code = _sort_code(frame.name, keys)
    order = _order_said(keys)
    if shown is None:
        return [Step("python", {"code": code}, f"sort `{frame.name}` by {order}",
                     reads=lambda out: None if (n := readers.frame_rows(out)) is None
                     else f"`{frame.name}` sorted by {order} ({n:,} rows; `{frame.name}` itself is unchanged)",
                     shows=True)]
    n = int(shown.group(2))
    end = "tail" if shown.group(1).lower() == "last" else "head"
    which = "last" if end == "tail" else "first"
    return [Step("python", {"code": f"{code}.{end}({n})"}, f"sort `{frame.name}` by {order} and show its {which} {n} rows",
                 reads=lambda out: None if (got := readers.frame_rows(out)) is None
                 else f"the {which} {got:,} rows of `{frame.name}` sorted by {order} (`{frame.name}` itself is unchanged)",
                 shows=True)]


def _said_order(words: str) -> bool:
    """Whether the sort's own words say its order ("descending", "oldest first", "ascending")."""
    return bool(_DESCENDING.search(words) or _OLD_OR_YOUNG.search(words)
                or re.search(r"\b(?:asc\w*|increasing|(?:lowest|smallest|least)\s+first)\b", words, re.I))


def top_rows(frame: Frame, prompt: str) -> list[Step] | str:
    """``sales.nlargest(3, "revenue")`` for "the top 3 rows of `sales` by revenue" (``nsmallest``
    for the bottom ones)."""
    m = TOP_ROWS.search(without_frame(frame.name, prompt, frame.columns))
    col = matches(m.group(3), frame.columns) if m else None
    if m is None or col is None:
        return frame.no_column("to rank by")
    # "top" the largest, "bottom" the smallest; "first" / "last" in the column's order, as a sort's
    # "show the first 3" (the last 2 by date are the latest, not the earliest)
    largest = m.group(1).lower() in ("top", "last")
    n = int(m.group(2))
    ties = ', keep="all"' if n == 1 else ""  # "the top 1 row": those tied with it too
    code = f"{frame.name}.{'nlargest' if largest else 'nsmallest'}({n}, {literal(col)}{ties})"
    which = "largest" if largest else "smallest"
    return [Step("python", {"code": code}, f"find the {n} rows of `{frame.name}` with the {which} {col}",
                 reads=lambda out: None if (got := readers.frame_rows(out)) is None
                 else f"{got:,} rows of `{frame.name}` tie for the {which} {col}" if n == 1 and got > 1
                 else f"the {got:,} rows of `{frame.name}` with the {which} {col}", shows=True)]


FIRST_ROWS = re.compile(r"\b(top|first|bottom|last)\s+(\d+)\s+(?:rows|records|entries|lines)\b(?![^.?!\n]{0,80}?\bby\s)",
                        re.I)
""""The top 5 rows of `sales`", "the last 3 rows": the frame's own first (last) rows, in its order."""


def first_rows(frame: Frame, prompt: str) -> list[Step] | str:
    """``sales.head(5)`` for "the top 5 rows" / "the first 5 rows", ``sales.tail(3)`` for "the last 3"."""
    m = FIRST_ROWS.search(prompt)
    if m is None:
        return f"I could not tell how many rows of `{frame.name}` to show."
    n = int(m.group(2))
    end = "tail" if m.group(1).lower() in ("last", "bottom") else "head"
    which = "last" if end == "tail" else "first"
    return [Step("python", {"code": f"{frame.name}.{end}({n})"}, f"show the {which} {n} rows of `{frame.name}`",
                 reads=lambda out: None if (got := readers.frame_rows(out)) is None
                 else f"the {which} {got:,} rows of `{frame.name}`", shows=True)]


AGED = re.compile(r"\b(?:(\d{1,4})|the)\s+(oldest|youngest|newest|latest|earliest|most\s+recent)\b(?!\s+first\b)", re.I)
""""The 3 oldest people", "the 5 most recent orders", "the latest order": the rows with the largest
(smallest) age or date; not "oldest first" (a sort's order)."""


def aged_rows(frame: Frame, prompt: str) -> list[Step] | str:
    """``people.nlargest(3, "age")`` for "the 3 oldest" (of an age column; of a date, the earliest:
    ``orders.nsmallest(3, "date")``), ``nlargest`` of the date for "the 5 newest / latest / most
    recent"; a date read from a CSV as text is parsed first (``pd.to_datetime``), and "the latest
    order" (one) shows any tied with it (``keep="all"``)."""
    m = AGED.search(prompt)
    if m is None:
        return f"I could not tell which rows of `{frame.name}` to show."
    word = m.group(2).lower()
    ages = [c for c in frame.columns if _AGES.search(c)] if word in ("oldest", "youngest") else []
    dates = [c for c, t in (frame.dtypes or {}).items() if t.startswith("datetime")]
    texts = text_dates(frame) if frame.dtypes is not None and not ages and not dates else []
    col = next(iter(ages or dates or texts), None)
    if col is None:
        if frame.dtypes is None and not frame.looked:
            return [frame.look(quiet=True)]
        return f"I found no age or date column in `{frame.name}` to tell the {word} rows by."
    largest = (word in ("oldest", "earliest")) == bool(ages)  # the earliest date is the smallest, as the oldest
    n = int(m.group(1)) if m.group(1) else 1
    source = f"{frame.name}.assign({col}=pd.to_datetime({column(frame.name, col)}))" if texts else frame.name
    ties = ', keep="all"' if n == 1 else ""  # the one asked for may tie: all of them, not the first found
    code = f"{source}.{'nlargest' if largest else 'nsmallest'}({n}, {literal(col)}{ties})"
    code = f"import pandas as pd\n\n{code}" if texts else code
    parsed = f" (reading `{col}`, which holds text, as dates)" if texts else ""
    return [Step("python", {"code": code}, f"find the {n} {word} rows of `{frame.name}` by {col}{parsed}",
                 reads=lambda out: _aged_said(frame.name, word, col, n, out, parsed), shows=True,
                 on_error=unread_dates(frame.name, col) if texts else None)]


def _aged_said(name: str, word: str, col: str, n: int, output: str, parsed: str) -> str | None:
    """"the latest row of `orders` by date", or the rows tied for it ("2 rows tie for the latest …")."""
    got = readers.frame_rows(output)
    if got is None:
        return None
    if n == 1 and got == 1:
        return f"the {word} row of `{name}` by {col}{parsed}"
    if n == 1:
        return f"{got:,} rows of `{name}` tie for the {word} {col}{parsed}"
    return f"the {got:,} {word} rows of `{name}` by {col}{parsed}"


__all__ = ["AGED", "FIRST_ROWS", "aged_rows", "SORTED", "TOP_ROWS", "first_rows", "sorted_by", "top_rows"]
