"""A pandas DataFrame's (or Series') columns named as credentials, for :mod:`.kernel_secrets`.

The same records as a list of mappings were secrets and, read into a frame (``pd.read_json``, a
database's users table), went to the model in the frame's description: a ``password`` column's
values, an ``api_key`` column's keys. A frame is known by its exact type's name, without importing
pandas (the engine never does); only pandas' own code runs, and within bounds.
"""

from __future__ import annotations

from itertools import islice
from typing import Any, Callable, cast

FRAME_ROWS = 100_000
"""Rows of a credential-named column whose distinct values are read (the rows a description samples
and lists values from come first)."""
FRAME_LABELS = 1_000
"""Column labels of a frame looked at, and values taken from one column."""
MAX_FRAME_COLUMNS = 100
"""Credential-named columns read in one namespace (each read costs a column's ``unique``)."""
_FRAME_MODULES = ("pandas", "pandas.core.frame", "pandas.core.series")  # pandas 3 names its public module, 2 the defining one
_CREDENTIAL_WORDS = ("pass", "pw", "secret", "token", "key", "auth", "credential", "dsn", "webhook")
"""A word every credential's name has: a frame whose column names have none is not read further (500
frames of 1,000 columns took 1.5 s at each prompt, checked column by column)."""
_CLASS_DICT = type.__dict__["__dict__"]  # read past any metaclass: no user code runs for a class of the user's
_CLASS_NAME = type.__dict__["__name__"]


def frame_columns(value: object, kind: type, credential_name: Callable[[str], bool],
                  budget: list[int]) -> list[tuple[object, object]] | None:
    """``(column, value)`` pairs of the distinct values, in the first :data:`FRAME_ROWS` rows, of a
    ``DataFrame``'s columns whose labels ``credential_name`` takes (``users.password``, ``api_key``),
    or of a ``Series`` so named (``pw = users["password"]``); None for anything else. ``budget`` (one
    int, shared by a namespace's walk) counts the columns still to read."""
    name = _CLASS_NAME.__get__(kind)
    if name not in ("DataFrame", "Series") or _CLASS_DICT.__get__(kind).get("__module__") not in _FRAME_MODULES:
        return None
    if budget[0] <= 0:
        return []
    frame = cast(Any, value)
    series = name == "Series"
    labels = [frame.name] if series else frame.columns[:FRAME_LABELS].tolist()  # one call, not an iterator
    joined = "\n".join(label for label in labels if type(label) is str).lower()
    if not any(word in joined for word in _CREDENTIAL_WORDS):  # one look for the frame, not a rule a column
        return []
    kinds = [frame.dtype] if series else frame.dtypes.iloc[:FRAME_LABELS].tolist()
    pairs: list[tuple[object, object]] = []
    for i, label in enumerate(labels):
        if budget[0] <= 0:
            break
        if type(label) is not str or getattr(kinds[i], "kind", "") != "O":  # only objects or strings hold text
            continue
        if credential_name(label):
            budget[0] -= 1
            column = frame.iloc[:FRAME_ROWS] if series else frame.iloc[:FRAME_ROWS, i]  # by place: labels may repeat
            pairs.extend((label, v) for v in islice(column.unique(), FRAME_LABELS))
    return pairs


__all__ = ["FRAME_ROWS", "MAX_FRAME_COLUMNS", "frame_columns"]
