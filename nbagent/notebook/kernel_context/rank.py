"""Which variables a prompt is about: named in it (in backticks, or as a word that is a name in
the namespace), used by the recent cells, or by the agent's own code. Those come first and in
full; the rest follow briefly, in the namespace's order."""

from __future__ import annotations

import re
from typing import Collection, Iterable, Sequence

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Text read for names: a prompt or a cell longer than this is read up to here (bounds the scan).
SCAN_CHARS = 20_000


def names_in(text: str, names: Collection[str]) -> list[str]:
    """The words of ``text`` that are ``names``, first mention first (``df.price`` and
    ```df``` both name ``df``)."""
    found: dict[str, None] = {}
    for word in _WORD.findall(text[:SCAN_CHARS]):
        if word in names:
            found.setdefault(word)
    return list(found)


def ranked(names: Sequence[str], prompt: str, agent_code: Iterable[str], inputs: Sequence[str]) -> list[str]:
    """The names the prompt is about, most relevant first: the prompt's own, then the agent's
    code (newest first), then the recent cells (newest first)."""
    known = set(names)
    order: dict[str, None] = dict.fromkeys(names_in(prompt, known))
    for text in [*reversed(list(agent_code)), *reversed(list(inputs))]:
        for name in names_in(text, known):
            order.setdefault(name)
    return list(order)


__all__ = ["names_in", "ranked"]
