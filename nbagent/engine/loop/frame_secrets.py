"""A pandas DataFrame's (or Series') columns named as credentials, for :mod:`.kernel_secrets`.

The same records as a list of mappings were secrets and, read into a frame (``pd.read_json``, a
database's users table), went to the model in the frame's description: a ``password`` column's
values, an ``api_key`` column's keys. A frame is known by its exact type's name, without importing
pandas (the engine never does); only pandas' own code runs, and within bounds.
"""

from __future__ import annotations

import re
from typing import Any, cast

from .credential_names import frame_credential_name

FRAME_ROWS = 100_000
"""Rows of a credential-named column whose distinct values are read (the rows a description samples
and lists values from come first)."""
FRAME_LABELS = 1_000
"""Column labels of a frame looked at."""
MAX_FRAME_COLUMNS = 100
"""Credential-named columns read in one namespace."""
MAX_FRAME_VALUES = 50
"""Distinct values taken from frames in one namespace, in row order (the rows a description samples
come first): each secret is one more form every text and streamed delta is scanned for, and a users
table's 2,000 hashes made one prompt five times slower (50 cost a 9 KB text ~0.5 ms, 200 ~2 ms)."""
NESTED_ROWS, NESTED_COLUMNS = 20, 50
"""Cells of a frame's first rows and columns looked at for mappings and lists (JSON records read into a
frame: ``pd.DataFrame(json.load(f))`` keeps each record's ``{"user": …, "password": …}`` whole in one
cell, and the sample rows show it)."""
MAX_NESTED_FRAMES = 50
"""Frames (and Series) of a namespace looked into that way."""
_NESTED_KINDS = (dict, list)
_PLAIN_WORD = re.compile(r"[A-Za-z]+")
"""A column of plain words under a password's name is a dataset about passwords (``"football"``,
``"sunshine"``), not a users table (hashes, or passwords with digits and signs): redacting the word
``password`` wherever it is written garbled every text about it."""
_FRAME_MODULES = ("pandas", "pandas.core.frame", "pandas.core.series")  # pandas 3 names its public module, 2 the defining one
_CREDENTIAL_WORDS = ("pass", "pw", "secret", "token", "key", "auth", "credential", "dsn", "webhook")
"""A word every credential's name has: a frame whose column names have none is not read further (500
frames of 1,000 columns took 1.5 s at each prompt, checked column by column)."""
_CLASS_DICT = type.__dict__["__dict__"]  # read past any metaclass: no user code runs for a class of the user's
_CLASS_NAME = type.__dict__["__name__"]
_CLASS_MODULE = type.__dict__["__module__"]


def frame_columns(value: object, kind: type, budget: list[int]) -> list[tuple[object, object]] | None:
    """``(column, value)`` pairs of the distinct text values, in the first :data:`FRAME_ROWS` rows, of a
    ``DataFrame``'s columns named as credentials (:func:`.frame_credential_name`: ``users.password``,
    ``api_key``), and the mappings and lists in its first cells, or of a ``Series`` so named
    (``pw = users["password"]``); None for anything else. ``budget`` (three
    ints, shared by a namespace's walk) counts the columns, the values and the frames looked into
    for nested records still to take. Values are
    never hashed nor compared by their own code (a column of dicts, a user object's ``__eq__``), and
    a frame that cannot be read gives nothing, never an error: the namespace's other secrets stand."""
    name = _CLASS_NAME.__get__(kind)
    module = _CLASS_DICT.__get__(kind).get("__module__") if name in ("DataFrame", "Series") else None
    if module not in _FRAME_MODULES and module not in _POLARS_MODULES:
        return None
    if (budget[0] <= 0 or budget[1] <= 0) and budget[2] <= 0:
        return []
    try:
        if module in _POLARS_MODULES:
            return _polars_columns(cast(Any, value), name == "Series", budget)
        return _credential_columns(cast(Any, value), name == "Series", budget)
    except Exception:  # noqa: BLE001 - pandas on an odd frame: this frame gives nothing, the rest stands
        return []


_POLARS_MODULES = ("polars.dataframe.frame", "polars.series.series")
_POLARS_TEXT = ("String", "Utf8", "Categorical", "Enum", "Object", "Binary")
"""polars' dtypes whose values may be text (a numeric ``token_count`` column is not listed)."""


def _polars_columns(frame: Any, series: bool, budget: list[int]) -> list[tuple[object, object]]:
    """The same for a polars ``DataFrame`` or ``Series`` (the kernel context describes them with
    their values and sample rows too): labels are unique there, so a column is read by its name."""
    columns = [frame] if series else [frame.get_column(label) for label in frame.columns[:FRAME_LABELS]
                                      if type(label) is str and frame_credential_name(label)]
    pairs: list[tuple[object, object]] = []
    for column in columns:
        if budget[0] <= 0 or budget[1] <= 0:
            break
        label = column.name
        if type(label) is str and frame_credential_name(label) and _CLASS_NAME.__get__(type(column.dtype)) in _POLARS_TEXT:
            pairs.extend(_taken(label, column.head(FRAME_ROWS).to_list(), budget))
    return pairs


def _nested_cells(frame: Any, series: bool, labels: list[object], kinds: list[object],
                  budget: list[int]) -> list[tuple[object, object]]:
    """``(column, cell)`` for the plain mappings and lists in the frame's first rows and columns: the
    walk reads their items as it reads a list of mappings (a nested record's ``password``)."""
    # numpy's object columns only: an extension array's (a library's, a user's) conversion is its own code.
    places = [i for i, kind in enumerate(kinds[:NESTED_COLUMNS]) if _numpy_objects(kind)]
    if budget[2] <= 0 or not places:
        return []
    budget[2] -= 1
    head = frame.iloc[:NESTED_ROWS] if series else frame.iloc[:NESTED_ROWS, places]
    rows = [[cell] for cell in head.tolist()] if series else head.to_numpy(dtype=object).tolist()
    return [(labels[0] if series else labels[places[j]], cell) for row in rows for j, cell in enumerate(row)
            if type(cell) in _NESTED_KINDS]


def _numpy_objects(kind: object) -> bool:
    """Whether a column's dtype is numpy's ``object`` (read past any metaclass: no user code runs)."""
    module = _CLASS_MODULE.__get__(type(kind))
    return type(module) is str and module.startswith("numpy") and getattr(kind, "kind", "") == "O"


def _label_name(label: object) -> str | None:
    """A column's name as a credential's rule reads it: a text label, or the last level of a
    ``MultiIndex`` label (``("db", "password")``)."""
    if type(label) is str:
        return label
    if type(label) is tuple and label and type(label[-1]) is str:
        return label[-1]
    return None


def _credential_columns(frame: Any, series: bool, budget: list[int]) -> list[tuple[object, object]]:
    labels = [frame.name] if series else frame.columns[:FRAME_LABELS].tolist()  # one call, not an iterator
    kinds = [frame.dtype] if series else frame.dtypes.iloc[:FRAME_LABELS].tolist()
    nested = _nested_cells(frame, series, labels, kinds, budget)
    names = [_label_name(label) for label in labels]
    index_name = _label_name(getattr(frame.index, "name", None))  # a users table indexed by its passwords
    joined = "\n".join(name for name in (*names, index_name) if name is not None).lower()
    if not any(word in joined for word in _CREDENTIAL_WORDS):  # one look for the frame, not a rule a column
        return nested
    pairs: list[tuple[object, object]] = nested
    for i, name in enumerate(names):
        if budget[0] <= 0 or budget[1] <= 0:  # before a column is read: 100,000 rows are no small copy
            break
        if name is None or getattr(kinds[i], "kind", "") != "O":  # only objects or strings hold text
            continue
        if frame_credential_name(name):
            column = frame.iloc[:FRAME_ROWS] if series else frame.iloc[:FRAME_ROWS, i]  # by place: labels may repeat
            pairs.extend(_taken(name, column.tolist(), budget))
    if index_name is not None and frame_credential_name(index_name) and frame.index.dtype.kind == "O" \
            and budget[0] > 0 and budget[1] > 0:
        pairs.extend(_taken(index_name, frame.index[:FRAME_ROWS].tolist(), budget))
    return pairs


def _taken(name: str, values: list[object], budget: list[int]) -> list[tuple[object, object]]:
    """``(name, value)`` for the distinct texts (and bytes) among ``values``, within ``budget``."""
    if budget[0] <= 0 or budget[1] <= 0:
        return []
    budget[0] -= 1
    taken: dict[object, None] = {}
    for v in values:  # Python objects, in row order; only exact strings and bytes are looked at
        if (type(v) is str and not _PLAIN_WORD.fullmatch(v) or type(v) is bytes) and v not in taken:
            taken[v] = None
            if len(taken) >= budget[1]:
                break
    budget[1] -= len(taken)
    return [(name, v) for v in taken]


__all__ = ["FRAME_ROWS", "MAX_FRAME_COLUMNS", "MAX_FRAME_VALUES", "MAX_NESTED_FRAMES", "frame_columns"]
