"""A pandas DataFrame's (or Series') columns named as credentials, for :mod:`.kernel_secrets`.

The same records as a list of mappings were secrets and, read into a frame (``pd.read_json``, a
database's users table), went to the model in the frame's description: a ``password`` column's
values, an ``api_key`` column's keys. A frame is known by its exact type's name, without importing
pandas (the engine never does); only pandas' own code runs, and within bounds.
"""

from __future__ import annotations

import re
from typing import Any, Callable, cast

from .credential_names import AUTHORIZATION, KEYED_NAME, SEPARATORS, frame_credential_name
from .named_values import named_secret

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
KEYED_ROWS = 100
"""Rows of a key/value settings table (or labels of a Series) looked at for a credential's name written
as data beside its value: ``pd.read_csv("config.csv")``'s ``key``/``value`` columns, a record as a
Series (``users.iloc[0]``, ``pd.Series(config)``), whose labels say "password" where no column does."""
KEYED_FRAMES, KEYED_VALUES, KEYED_LOOKS = 50, 50, 100
"""Frames and Series so read (each whose keys name a credential's word, whether or not it gives a
value: 500 tables of ``svc_api_token`` → ``n/a`` cost 10× main's walk), values taken, and frames of a
settings shape whose keys are looked at, in one namespace: budgets of their own (``budget[3]`` to
``budget[5]``), so that settings tables never use up what ``users["password"]`` and nested records get."""
FRAME_BUDGETS = (MAX_FRAME_COLUMNS, MAX_FRAME_VALUES, MAX_NESTED_FRAMES, KEYED_FRAMES, KEYED_VALUES, KEYED_LOOKS)
"""A namespace's walk starts :func:`frame_columns`' ``budget`` so."""
_NESTED_KINDS = (dict, list)
PLAIN_WORD = re.compile(r"[A-Za-z]+")
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
    (``pw = users["password"]``), and a credential's value beside its name held as data
    (:func:`_keyed_values`); None for anything else. ``budget`` (six ints, shared by a namespace's
    walk) counts the columns, the values and the frames looked into for nested records still to take,
    and the frames and values the keyed read has left. Values are
    never hashed nor compared by their own code (a column of dicts, a user object's ``__eq__``), and
    a frame that cannot be read gives nothing, never an error: the namespace's other secrets stand."""
    name = _CLASS_NAME.__get__(kind)
    module = _CLASS_DICT.__get__(kind).get("__module__") if name in ("DataFrame", "Series") else None
    if module not in _FRAME_MODULES and module not in _POLARS_MODULES:
        return None
    if (budget[0] <= 0 or budget[1] <= 0) and budget[2] <= 0 and min(budget[3:6]) <= 0:
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
    nested = _nested_cells(frame, series, labels, kinds, budget) + _keyed_values(frame, series, labels, kinds, budget)
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
        if (type(v) is str and not PLAIN_WORD.fullmatch(v) or type(v) is bytes) and v not in taken:
            taken[v] = None
            if len(taken) >= budget[1]:
                break
    budget[1] -= len(taken)
    return [(name, v) for v in taken]


_KEY_LABELS = frozenset(("key", "keys", "name", "setting", "settings", "option", "parameter", "param", "variable",
                         "var", "property", "field", "config", "item", "attribute", 0))
_VALUE_LABELS = frozenset(("value", "values", "val", 1))
"""A settings table's headers (``header=None`` gives 0 and 1): a two-column table under any others is
data about names (a glossary's ``en``/``de``, a schema's ``column``/``type``), whose second column is
no value of the first (review2 of atk17, MEDIUM 3)."""
_KEYED_END = re.compile(r"(?:pass(?:word|wd|phrase)|pwd|secret|key|token|credentials?|url|dsn|authorization)$", re.M)
"""How every :data:`KEYED_NAME` ends (lowercased), for one look at a frame's joined keys."""
KEYED_KEY_CHARS = 64
"""The longest key read: a longer text is no setting's name."""
_Read = Callable[[], "list[object]"]
"""Reads a settings shape's first keys (or values) when called: a column is read only when needed."""


def _keyed_values(frame: Any, series: bool, labels: list[object], kinds: list[object],
                  budget: list[int]) -> list[tuple[object, object]]:
    """``(name, value)`` where a credential's name (:data:`KEYED_NAME`) is data and its text value
    stands beside it: a Series' value under such a label, or a two-column table's under ``key``/``value``
    headers (:data:`_KEY_LABELS`) in the row whose key is such a name. A plain word is no value, as in a
    password column (a translation: ``Passwort``). Kept only when the dict rule takes the value (it
    will again, in the walk), within ``budget[3]`` frames read, ``budget[4]`` values and ``budget[5]``
    frames whose keys are looked at."""
    if min(budget[3:6]) <= 0:
        return []
    shape = _settings_shape(frame, series, labels, kinds)
    if shape is None:
        return []
    budget[5] -= 1  # its keys are read: counted whether or not they name a credential
    keys = shape[0]()
    # One look at the short keys for a name ending as a credential's does, before the values are read
    # and a rule is tried key by key (pandas' reads cost more than the rules).
    joined = _key_text(keys)
    if not any(word in joined for word in _CREDENTIAL_WORDS) or _KEYED_END.search(joined) is None:
        return []
    budget[3] -= 1  # read from here on: counted whether or not a value is taken
    pairs: dict[tuple[str, str], None] = {}
    for key, value in zip(keys, shape[1](), strict=False):
        if type(key) is str and len(key) <= KEYED_KEY_CHARS and type(value) is str and value != key \
                and KEYED_NAME.fullmatch(key.translate(SEPARATORS)) and not PLAIN_WORD.fullmatch(value) \
                and _secret_by_name(key, value):
            pairs[(key, value)] = None
    taken = list(pairs)[:budget[4]]
    budget[4] -= len(taken)
    return list(taken)


def _settings_shape(frame: Any, series: bool, labels: list[object], kinds: list[object]) -> tuple[_Read, _Read] | None:
    """How to read a settings shape's first keys and values (each only when needed): a two-column
    table's ``key``/``value`` columns (:func:`_pair_columns`), or the labels of a Series or of one
    ``value`` column (:func:`_labelled_column`); None for any other frame."""
    if series:
        return _labelled_column(frame, frame) if len(labels) == 1 and _text_kind(kinds[0]) else None
    if len(labels) == 2:
        return _pair_columns(frame, labels, kinds)
    if len(labels) == 1 and _header(labels[0]) in (*_VALUE_LABELS, 0) and _text_kind(kinds[0]):  # from_dict's 0
        return _labelled_column(frame, next(iter(frame.items()))[1])
    return None


def _pair_columns(frame: Any, labels: list[object], kinds: list[object]) -> tuple[_Read, _Read] | None:
    """A two-column settings table under key/value headers (:func:`_settings_headers`), both of text."""
    if not _settings_headers(labels) or not all(_text_kind(kind) for kind in kinds):
        return None
    key, value = (column for _, column in frame.items())  # by place (labels may repeat), cheaper than iloc
    return (lambda: _head(key)), (lambda: _head(value))


def _labelled_column(frame: Any, column: Any) -> tuple[_Read, _Read] | None:
    """A column of values under text labels whose index is unnamed or named as keys: a record (a row
    ``users.iloc[0]``, ``pd.Series(config)``, ``read_csv(…, index_col=0)``,
    ``DataFrame.from_dict(config, orient="index")``), not ``df.set_index("en")["de"]``, a translation."""
    index = frame.index
    index_name = _header(index.name)
    if not _text_kind(index.dtype) or index_name is not None and index_name not in _KEY_LABELS:
        return None
    return (lambda: (index if len(index) <= KEYED_ROWS else index[:KEYED_ROWS]).tolist()), (lambda: _head(column))


def _head(column: Any) -> list[object]:
    """A Series' first :data:`KEYED_ROWS` values (a slice of all of them costs more than none)."""
    return cast("list[object]", (column if len(column) <= KEYED_ROWS else column.iloc[:KEYED_ROWS]).tolist())


def _key_text(keys: list[object]) -> str:
    """The keys that may be a setting's name, joined and lowercased for one look."""
    try:  # one join in C where every key is a text (a str's join runs no user code)
        joined = "\n".join(cast("list[str]", keys))
        if len(joined) <= len(keys) * (KEYED_KEY_CHARS + 1):
            return joined.lower()
    except TypeError:  # a key that is no text (a number, a missing value)
        pass
    return "\n".join(key for key in keys if type(key) is str and len(key) <= KEYED_KEY_CHARS).lower()


def _header(label: object) -> object:
    """A label as the settings headers are compared: a text's lowercased words, an int as it is."""
    if label is None or type(label) is int:
        return label
    return label.strip().lower() if type(label) is str else ("",)


def _settings_headers(labels: list[object]) -> bool:
    """Whether two columns' labels are a settings table's key and value (``key``/``value``, ``0``/``1``)."""
    return _header(labels[0]) in _KEY_LABELS and _header(labels[1]) in _VALUE_LABELS


def _secret_by_name(key: str, value: str) -> bool:
    """Whether the dict rule takes ``value`` under ``key``, so that a pair it rejects spends nothing."""
    return named_secret(key, value) or AUTHORIZATION.fullmatch(key.translate(SEPARATORS)) is not None


def _text_kind(kind: object) -> bool:
    """Whether a dtype holds text and converts without a library's or a user's code: numpy's object,
    pandas' own ``StringDtype`` (pandas 3's default for text) and ``ArrowDtype``."""
    if _numpy_objects(kind):
        return True
    module, name = _CLASS_MODULE.__get__(type(kind)), _CLASS_NAME.__get__(type(kind))
    return type(module) is str and (module == "pandas" or module.startswith("pandas.")) \
        and name in ("StringDtype", "ArrowDtype") and getattr(kind, "kind", "") == "O"


__all__ = ["FRAME_BUDGETS", "FRAME_ROWS", "KEYED_FRAMES", "KEYED_LOOKS", "PLAIN_WORD", "KEYED_ROWS", "KEYED_VALUES",
           "MAX_FRAME_COLUMNS", "MAX_FRAME_VALUES", "MAX_NESTED_FRAMES", "frame_columns"]
