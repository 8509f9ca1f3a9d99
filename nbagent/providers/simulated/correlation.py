"""The demo brain's correlation questions: of two named numeric columns
(``orders["price"].corr(orders["quantity"])``, said with its strength), else the table of every
numeric pair (``orders.corr(numeric_only=True)``, quoted)."""

from __future__ import annotations

import re

from . import readers
from .columns import Frame, column, named, without_frame
from .step import Step

CORRELATION = re.compile(r"\b(?:correlat\w*|corr)\b", re.I)
""""What is the correlation between price and quantity", "how do price and quantity correlate"."""


def correlation(frame: Frame, prompt: str) -> list[Step] | str:
    """Pearson's r of the two numeric columns the prompt names (it looks at ``.dtypes`` first, so
    that a text column named beside them is left out); with fewer named, every numeric pair."""
    if frame.dtypes is None:
        return frame.look_first()
    said = named(without_frame(frame.name, prompt, frame.columns), frame.columns)
    chosen = [c for c in said if c in frame.numeric()]
    if len(chosen) < 2:
        code = f"{frame.name}.corr(numeric_only=True)"
        text = [c for c in said if c not in chosen]
        why = (f"{' and '.join(text)} {'is' if len(text) == 1 else 'are'} not numeric, so these are the correlations "
               f"of the numeric columns of `{frame.name}`") if text else ""
        return [Step("python", {"code": code}, f"compute the correlations of the numeric columns of `{frame.name}`",
                     reads=lambda out: why, shows=True)]
    x, y = chosen[:2]
    code = f"{column(frame.name, x)}.corr({column(frame.name, y)})"
    return [Step("python", {"code": code}, f"compute the correlation of {x} and {y} in `{frame.name}`",
                 reads=lambda out: _said(x, y, frame.name, out))]


def _said(x: str, y: str, name: str, output: str) -> str | None:
    r = readers.number(output)
    if r is None:
        return None
    if r != r:  # NaN: fewer than two rows with both values, or a constant column
        return f"the correlation of {x} and {y} in `{name}` is undefined (NaN: too few rows with both, or a constant column)"
    strength = "no" if abs(r) < 0.1 else "a weak" if abs(r) < 0.3 else "a moderate" if abs(r) < 0.7 else "a strong"
    sign = "" if strength == "no" else " negative" if r < 0 else " positive"
    return f"the correlation of {x} and {y} in `{name}` is {r:.2f} (Pearson's r: {strength}{sign} linear relation)"


__all__ = ["CORRELATION", "correlation"]
