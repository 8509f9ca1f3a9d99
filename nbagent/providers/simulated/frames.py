"""The demo brain's DataFrame questions: shape, columns, describe, the group with the largest
total, missing values. Each becomes python code that computes the real numbers in the user's
namespace and prints them; lines starting with ``answer:`` are what the brain's summary leads with.

The code only reads the variable, prints, and leaves no names behind (helpers are ``_nb_``-prefixed
and deleted at the end).
"""

from __future__ import annotations

import re

ANSWER = "answer:"

_SHAPE = re.compile(r"\b(shape|how many rows|how many columns|how big|size|dimensions?)\b", re.I)
_COLUMNS = re.compile(r"\b(columns?|fields?|variables in it)\b", re.I)
_DESCRIBE = re.compile(r"\b(describe|summary statistics|statistics|stats|distribution)\b", re.I)
_MISSING = re.compile(r"\b(missing|nan|nulls?|na|empty values?|blanks?)\b", re.I)
# "Which region sells most?", "what product has the largest total revenue?", "top store by sales"
_GROUP = re.compile(
    r"\b(?:which|what|top)\s+(\w+)\b.*\b(most|largest|biggest|highest|top|best|leading|max(?:imum)?)\b"
    r"|\b(most|largest|biggest|highest)\b.*\b(?:by|per)\s+(\w+)", re.I)


def intents(prompt: str) -> list[str]:
    """The DataFrame questions asked in ``prompt``, in a fixed order."""
    found = []
    for name, pattern in (("shape", _SHAPE), ("columns", _COLUMNS), ("describe", _DESCRIBE),
                          ("largest_group", _GROUP), ("missing", _MISSING)):
        if pattern.search(prompt):
            found.append(name)
    return found


def _words(prompt: str) -> list[str]:
    return sorted({w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", prompt)})


def code(name: str, intent: str, prompt: str) -> str:
    """Python that answers ``intent`` about the DataFrame ``name`` (``print`` only)."""
    guard = f"if not hasattr({name}, 'columns'):\n    print('{name} is not a DataFrame:', type({name}).__name__)\nelse:\n"
    body = {
        "shape": (f"print('{ANSWER} {name} has', {name}.shape[0], 'rows and', {name}.shape[1], 'columns')",),
        "columns": (f"print('{ANSWER} {name} has columns', ', '.join(map(str, {name}.columns)))",
                    f"print({name}.dtypes.to_string())"),
        "describe": (f"print({name}.describe().to_string())",),
        "missing": (f"_nb_na = {name}.isna().sum()",
                    f"print('{ANSWER} {name} has', int(_nb_na.sum()), 'missing value(s)'"
                    f" + (' (' + ', '.join(f'{{c}}: {{n}}' for c, n in _nb_na.items() if n) + ')' if _nb_na.sum() else ''))",
                    "del _nb_na"),
        "largest_group": _largest_group(name, prompt),
    }[intent]
    return guard + "\n".join("    " + line for line in body)


def _largest_group(name: str, prompt: str) -> tuple[str, ...]:
    """Group by the column the prompt names (else the first text column) and total the numeric
    column it names (else the first numeric one)."""
    return (
        f"_nb_words = {_words(prompt)!r}",
        "_nb_named = lambda cols: [c for c in cols if str(c).lower() in _nb_words"
        " or str(c).lower().rstrip('s') in _nb_words or str(c).lower() + 's' in _nb_words]",
        f"_nb_num = list({name}.select_dtypes('number').columns)",
        f"_nb_text = [c for c in {name}.columns if c not in _nb_num]",
        "_nb_by = (_nb_named(_nb_text) or _nb_text or [None])[0]",
        "_nb_val = (_nb_named(_nb_num) or _nb_num or [None])[0]",
        "if _nb_by is None or _nb_val is None:",
        "    print('no text column to group by or no numeric column to total')",
        "else:",
        f"    _nb_tot = {name}.groupby(_nb_by)[_nb_val].sum().sort_values(ascending=False)",
        f"    print('{ANSWER}', _nb_tot.index[0], 'has the largest total', _nb_val,"
        " f'({_nb_tot.iloc[0]:,.2f})', 'by', _nb_by)",
        "    print(_nb_tot.to_string())",
        "    del _nb_tot",
        "del _nb_words, _nb_named, _nb_num, _nb_text, _nb_by, _nb_val",
    )


def answers(texts: list[str]) -> list[str]:
    """The ``answer:`` lines printed by the tool results, without the marker."""
    return [line.split(ANSWER, 1)[1].strip() for t in texts for line in t.splitlines()
            if line.strip().startswith(ANSWER)]


__all__ = ["ANSWER", "answers", "code", "intents"]
