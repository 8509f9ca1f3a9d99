"""A column a question implies and the frame lacks: "which customer spent the most" in a frame of
prices and quantities asks for each row's price × quantity, summed per customer (the prices alone
rank the customers who bought dear, not those who spent most). The frame is not changed: the
column is made in the expression (``orders.assign(spent=orders["price"] * orders["quantity"])``).
"""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

from . import readers
from .columns import Frame, column, literal, named
from .step import Step

_SPENT = re.compile(r"\b(spent|spend|spends|spending|paid|pays?)\b", re.I)
_PRICES = re.compile(r"^(?:unit_?)?price(?:_\w+)?$|^(?:unit_?)?cost$", re.I)
_QUANTITIES = re.compile(r"^(?:quantity|quantities|qty|units?|count|n_items|items)$", re.I)
_SENTENCE_END = re.compile(r"[.?!;](?!\d)|\n")
# a column that already holds what was spent: ranked as it is
_AMOUNTS = re.compile(r"^(?:spent|spend|amount|total|revenue|sales|value|paid|line_total|subtotal)(?:_\w+)?$", re.I)


class Spent(NamedTuple):
    """The ``spent`` column's code (for ``assign``) and how the answer says it."""

    code: str
    said: str
    col: str = "spent"
    """The made column's name: "spent" (who spent most), "sales" (which region sells most)."""

    def named_in(self, text: str) -> str:
        """``text`` naming the ``spent`` column where it says "paid", "spend" …, so that it is what
        is totalled (not the price, the first number column)."""
        return _SPENT.sub("spent", text)


def spends(prompt: str) -> bool:
    """Whether the prompt asks who spent (paid) most."""
    return _SPENT.search(prompt) is not None


def with_spent(frame: Frame, prompt: str) -> Spent | None:
    """The ``spent`` column (price × quantity, ``orders["price"] * orders["quantity"]``) when the
    prompt asks who spent most and the frame has a price and a quantity but no amount; None
    otherwise (also while the column types are not known)."""
    if frame.dtypes is None or not spends(prompt) or any(_AMOUNTS.match(c) for c in frame.columns):
        return None
    numeric = frame.numeric()
    price = next((c for c in numeric if _PRICES.match(c)), None)
    quantity = next((c for c in numeric if _QUANTITIES.match(c)), None)
    if price is None or quantity is None or _names_a_number(frame, prompt):
        return None
    return Spent(f"{column(frame.name, price)} * {column(frame.name, quantity)}", f"spent being {price} × {quantity}")


def _names_a_number(frame: Frame, prompt: str) -> bool:
    """Whether the sentence that says "spent" / "paid" names a number column itself ("which customer
    paid the highest price": the prices ranked, not price × quantity); `the frame` by its name is none."""
    text = re.sub(rf"`{re.escape(frame.name)}`", " ", prompt)
    said = _SPENT.search(text)
    if said is None:
        return False
    start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, said.start())), default=0)
    end = next((m.start() for m in _SENTENCE_END.finditer(text, said.end())), len(text))
    return bool(named(text[start:end], frame.measures()))  # "which customer_id spent most": no number named


# "the (3) most paid orders", "the top 5 orders by amount paid", "which orders paid the most": the
# orders (rows) ranked by what each was paid, not each customer's total (a frame called orders: its
# rows; of a frame called sales, "the most paid orders" are its rows too)
PAID_ROWS = re.compile(
    r"\b(?:(\d{1,3})\s+)?(?P<most>most|least|highest|lowest|largest|smallest|biggest)[\s-]+(?:paid|spent|spending)"
    r"\s+(?:rows?|records?|entry|entries|orders?|purchases?|sales?|transactions?|lines?|items?)\b"
    r"|\b(?:top|bottom)\s+(\d{1,3})\s+(?:rows?|records?|entry|entries|orders?|purchases?|sales?|transactions?|lines?|items?)"
    r"\s+by\s+(?:the\s+)?(?:amount\s+|total\s+)?(?:paid|spent|spending)\b"
    r"|\b(?:which|what)\s+(?:(\d{1,3})\s+)?(?:rows?|records?|entry|entries|orders?|purchases?|sales?|transactions?|lines?|items?)"
    r"\s+(?:paid|spent|cost)\s+(?:the\s+)?(?P<most3>most|least)\b",
    re.I)


def paid_rows(frame: Frame, prompt: str) -> list[Step] | str:
    """``orders.assign(spent=orders["price"] * orders["quantity"]).nlargest(3, "spent")`` for "the 3
    most paid orders" (the amount column itself when the frame has one; sorted, all of them, when
    no number is said)."""
    m = PAID_ROWS.search(prompt)
    if m is None or frame.dtypes is None:
        return [frame.look(quiet=True)] if m is not None and not frame.looked else frame.no_column("to rank by")
    amount = next((c for c in frame.numeric() if _AMOUNTS.match(c)), None)
    spent = None if amount else with_spent(frame, "spent")
    if amount is None and spent is None:
        return f"I found no amount, nor a price and a quantity, in `{frame.name}` to rank its rows by what was paid."
    source = f"{frame.name}.assign(spent={spent.code})" if spent else frame.name
    col = "spent" if spent else str(amount)
    smallest = (m.group("most") or m.group("most3") or "").lower() in ("least", "lowest", "smallest") \
        or m.group(0).lower().startswith("bottom")
    n = next((int(g) for g in (m.group(1), m.group(3), m.group(4)) if g), None)
    if n is None and _ONE_ROW.search(m.group(0)):  # "the most paid order": one (and any tied with it)
        n = 1
    ties = ', keep="all"' if n == 1 else ""  # "the top 1": those tied with it too
    ranked = (f".sort_values({literal(col)}{'' if smallest else ', ascending=False'})" if n is None
              else f".{'nsmallest' if smallest else 'nlargest'}({n}, {literal(col)}{ties})")
    code = f"{source}{ranked}" if len(source + ranked) <= 100 else f"({source}\n {ranked})"  # as people break it
    first = f"{col}, {'smallest' if smallest else 'largest'} first" + (f" ({spent.said})" if spent else "")
    return [Step("python", {"code": code}, f"rank the rows of `{frame.name}` by {first}",
                 reads=lambda out: _ranked_said(frame.name, first, n, out), shows=True)]


_ONE_ROW = re.compile(r"\b(?:row|record|entry|order|purchase|sale|transaction|line|item)\b", re.I)


def _ranked_said(name: str, first: str, n: int | None, output: str) -> str | None:
    got = readers.frame_rows(output)
    if got is None:
        return None
    if n == 1 and got > 1:
        return f"{got:,} rows of `{name}` tie for the top by {first.replace(', largest first', '')}"
    return f"{'the' if n is None else 'the top'} {got:,} {'row' if got == 1 else 'rows'} of `{name}` by {first}"


# "the total sales per region", "the average order value": what each row sold for, in a frame with
# no amount column of its own (each number column totalled, price's and quantity's, is no answer)
_VALUE_WORDS = re.compile(r"\b(?:sales|revenue|turnover|order\s+values?|sales\s+values?|amounts?)\b", re.I)


def asks_value(prompt: str) -> bool:
    """Whether a statistic's prompt asks for sales, revenue or order value ("total sales per region")."""
    return _VALUE_WORDS.search(prompt) is not None


# "which region sells most", "the top 3 customers by revenue": ranked by what each row sold for
_SOLD = re.compile(r"\b(?:sales|revenue|turnover|sells?|sold|selling|order\s+values?|sales\s+values?)\b", re.I)


def sold(frame: Frame, prompt: str) -> Spent | None:
    """A ``sales`` column (price × quantity) for a ranking that asks what was sold ("which region
    sells most") in a frame with a price and a quantity and no amount column, naming no number
    column itself ("which region sells the most units": the units); None otherwise."""
    if frame.dtypes is None or not _SOLD.search(prompt) or any(_AMOUNTS.match(c) for c in frame.columns):
        return None
    if any(c in frame.measures() for c in named(prompt, frame.columns)):
        return None
    found = row_value(frame.name, frame.columns, frame.numeric(), "sales")
    return None if found is None else Spent(found.code, f"sales being {found.said}", "sales")


def row_value(name: str, columns: tuple[str, ...], numeric: Sequence[str] | None, prompt: str) -> Spent | None:
    """``orders["price"] * orders["quantity"]`` when the prompt asks for sales or order value and the
    frame has a price and a quantity column but no amount column; None otherwise (or while the
    column types are not known)."""
    if numeric is None or not asks_value(prompt) or any(_AMOUNTS.match(c) for c in columns):
        return None
    price = next((c for c in numeric if _PRICES.match(c)), None)
    quantity = next((c for c in numeric if _QUANTITIES.match(c)), None)
    if price is None or quantity is None:
        return None
    return Spent(f"{column(name, price)} * {column(name, quantity)}", f"{price} × {quantity}")


__all__ = ["PAID_ROWS", "Spent", "asks_value", "paid_rows", "row_value", "sold", "spends", "with_spent"]
