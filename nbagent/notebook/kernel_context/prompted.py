"""A value the user typed at a hidden prompt and left as a cell's value: ``getpass.getpass("DB
password")`` alone in a cell (not assigned) shows the password as ``Out[n]``, and the kernel context's
"Recent cell outputs" sent it to the model at every prompt, though no variable names it."""

from __future__ import annotations

import re
from itertools import islice
from typing import Mapping

from ...engine.loop.embedded_secrets import MAX_CHARS, MIN_CHARS

_ASKED = re.compile(r"(?:\bgetpass\s*\.\s*)?\bgetpass\s*\(|\binput\s*\(\s*[rRbBuUfF]{0,2}[\"']{1,3}[^\"'\n]*"
                    r"(?i:\b(?:pass(?:word|wd|phrase|code)?|pwd?|secret|token|(?:api[ _-]?)?key|credentials?)\b)")
"""A hidden prompt (``getpass(…)``), or ``input(…)`` asking for a credential (``input("API key: ")``,
``input(\"\"\"Password: \"\"\")``) by a whole word: ``input("Search keyword: ")`` or ``input("Keyboard
layout? ")`` asks for none (their answers were hidden from every text the model read)."""
MAX_CELLS = 200
"""The newest cells with a value looked at."""


def prompted_secrets(user_ns: Mapping[str, object]) -> tuple[str, ...]:
    """The text values of the cells whose last line asks for a credential at a prompt."""
    out, cells = user_ns.get("Out"), user_ns.get("In")
    if type(out) is not dict or type(cells) is not list:
        return ()
    found: list[str] = []
    for n in islice(sorted((k for k in out if type(k) is int), reverse=True), MAX_CELLS):
        value = out[n]
        if type(value) is not str or not MIN_CHARS <= len(value) <= MAX_CHARS or not 0 <= n < len(cells):
            continue
        source = cells[n]
        last = next((line for line in reversed(source.splitlines()) if line.strip()), "") if type(source) is str else ""
        if _ASKED.search(last):
            found.append(value)
    return tuple(found)


__all__ = ["prompted_secrets"]
