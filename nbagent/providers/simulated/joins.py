"""Two DataFrames joined: "join `orders` with `customers` on customer", "merge `orders` and
`customers`": ``orders.merge(customers, on="customer", how="left")``, shown, not assigned (a name
the code made could be one of the user's variables). Each row of the first frame is kept, with the
second frame's columns of its key (a left join: what "add the customers' details to the orders" means).
"""

from __future__ import annotations

import re
from typing import Sequence

from . import readers
from .columns import Frame, literal, matches
from .step import Step

JOIN = re.compile(r"\b(?:join|merge|combine)\b", re.I)
""""Join `orders` with `customers`", "merge … and …": the two frames named, joined."""
_ON = re.compile(r"\bon\s+(?:the\s+)?`?(\w+)`?", re.I)


def join_steps(first: Frame, second: Frame, prompt: str) -> list[Step] | str:
    """``first.merge(second, on=key, how="left")``: the key said after "on", else the one column
    both frames have; a look first at a frame whose columns are not known; why not when no key is found."""
    unknown = [f for f in (first, second) if not f.columns]
    if unknown:
        return [f.look(quiet=True) for f in unknown if not f.looked] or \
            f"I could not read the columns of `{unknown[0].name}` to join on."
    said = _ON.search(prompt)
    shared = [c for c in first.columns if c in second.columns]
    key = None
    if said is not None:
        key = matches(said.group(1), shared)
        if key is None:
            return (f"`{first.name}` and `{second.name}` do not both have a column \"{said.group(1)}\" "
                    f"(both have: {', '.join(shared) or 'none'}).")
    elif len(shared) == 1:
        key = shared[0]
    if key is None:
        return _which_key(first.name, second.name, shared)
    code = f"{first.name}.merge({second.name}, on={literal(key)}, how=\"left\")"
    name, other = first.name, second.name
    return [Step("python", {"code": code}, f"join `{name}` with `{other}` on {key}", shows=True,
                 reads=lambda out: None if (n := readers.frame_rows(out)) is None else
                 f"`{name}` joined with `{other}` on {key} has {n:,} rows (each row of `{name}` with the columns "
                 f"of `{other}` for its {key}; missing where `{other}` has no such {key}, repeated where it has several)")]


def _which_key(first: str, second: str, shared: Sequence[str]) -> str:
    if not shared:
        return f"`{first}` and `{second}` have no column in common to join on; say which, e.g. \"on customer_id\"."
    return (f"`{first}` and `{second}` have several columns in common ({', '.join(shared)}); "
            f"say which to join on, e.g. \"on {shared[0]}\".")


__all__ = ["JOIN", "join_steps"]
