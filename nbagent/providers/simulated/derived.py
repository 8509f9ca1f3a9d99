"""A column a question implies and the frame lacks: "which customer spent the most" in a frame of
prices and quantities asks for each row's price × quantity, summed per customer (the prices alone
rank the customers who bought dear, not those who spent most). The frame is not changed: the
column is made in the expression (``orders.assign(spent=orders["price"] * orders["quantity"])``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .columns import Frame, column, named

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
    # the whole frame's columns: ``assign`` aligns them on the index, so a selection of rows takes its own
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
    return bool(named(text[start:end], frame.numeric()))


__all__ = ["Spent", "spends", "with_spent"]
