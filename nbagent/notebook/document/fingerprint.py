"""Content fingerprints: what a recorded answer depended on, in a form a replay can compare.

A fingerprint is a short digest (128 bits of SHA-256, hex) of a value's content, computed the same
way when the answer is recorded and when its cell replays. ``~`` in front marks a *bounded* one:
for a value or file too large to hash whole, the digest covers its shape and a sample (rows, bytes),
so a change outside the sample can go unseen; the docs say so.

- pandas objects: :func:`pandas.util.hash_pandas_object` of the rows (index included) plus the
  columns and dtypes; beyond :data:`MAX_ROWS` rows, the first, last and evenly spaced rows.
- numpy arrays: their bytes, dtype and shape; beyond :data:`MAX_BYTES`, an evenly strided sample.
- scalars, strings and bytes: their repr / bytes; small containers: their elements' fingerprints.
- functions: their code (bytecode, constants, names) and defaults.
- anything else: no fingerprint (``None``): the replay cannot check it and does not claim to.

Nothing here imports pandas or numpy: a value of theirs means they are imported already.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Collection

if TYPE_CHECKING:
    import pandas as pd

DIGEST_CHARS = 32
BOUNDED = "~"
MAX_ROWS = 200_000
"""Frames with more rows are fingerprinted from a sample of :data:`SAMPLE_ROWS` rows (×3)."""
SAMPLE_ROWS = 2_000
MAX_BYTES = 32 * 1024 * 1024
"""Arrays and files larger than this are fingerprinted from samples."""
SAMPLE_BLOCK = 1024 * 1024
SAMPLE_BLOCKS = 16
MAX_ITEMS = 10_000
"""Containers with more items are fingerprinted from their length and first and last items."""
MAX_DEPTH = 4
_SCALARS = (int, float, complex, bool, type(None))


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()[:DIGEST_CHARS]


def _root_module(value: object) -> str:
    return (type(value).__module__ or "").split(".")[0]


Secret = Callable[[str], bool]
"""Whether a text holds a secret (the session's sanitizer finds one in it)."""


def fingerprint(value: object, depth: int = 0, secret: Secret | None = None) -> str | None:
    """The content fingerprint of ``value`` (``~``-prefixed when bounded), or None when it has none.

    With ``secret``, a value that holds a text in which ``secret`` finds one has none either: a
    string, or one inside a list, dict, tuple or set, a DataFrame's cells, labels or name, a string
    array, a function's constants or defaults. The fingerprint is an unsalted digest saved in the
    notebook's record, and whoever receives it knows the rest of ``{"host": …, "password": …}``
    from the cell that made it: it would check guesses of the password offline."""
    try:
        return _fingerprint(value, depth, secret)
    except Exception:  # a value whose hashing fails is unknown, never an error of the agent cell
        return None


def _fingerprint(value: object, depth: int, secret: Secret | None = None) -> str | None:
    kind = type(value).__qualname__.encode()
    if isinstance(value, _SCALARS):
        return _digest(kind, repr(value).encode())
    if isinstance(value, str):
        return None if secret is not None and secret(value) else _digest(kind, value.encode("utf-8", "surrogatepass"))
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        return None if secret is not None and secret(raw.decode("utf-8", "replace")) else _digest(kind, raw)
    if isinstance(value, types.FunctionType):
        if secret is not None and secret("\n".join(_code_texts(value.__code__) + [repr(value.__defaults__)])):
            return None
        return _digest(kind, _code_bytes(value.__code__), repr(value.__defaults__).encode())
    # By isinstance, not module: a subclass from another library (a GeoDataFrame) is a frame too.
    pandas, numpy = sys.modules.get("pandas"), sys.modules.get("numpy")
    if pandas is not None and isinstance(value, (pandas.DataFrame, pandas.Series, pandas.Index)):
        return _pandas(value, secret)
    if numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic)):
        return _numpy(value, secret)
    if depth < MAX_DEPTH and isinstance(value, (list, tuple, dict, set, frozenset)):
        return _container(value, depth, secret)
    return None


def _code_texts(code: types.CodeType) -> list[str]:
    """The text constants of a function's code, nested code included."""
    texts: list[str] = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            texts += _code_texts(const)
        elif isinstance(const, (str, bytes)):
            texts.append(const if isinstance(const, str) else const.decode("utf-8", "replace"))
        elif isinstance(const, (tuple, frozenset)):
            texts.append(repr(const))
    return texts


def _code_bytes(code: types.CodeType) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode()]
    for const in code.co_consts:
        parts.append(_code_bytes(const) if isinstance(const, types.CodeType) else repr(const).encode())
    return b"\0".join(parts)


def _container(value: Collection[object], depth: int, secret: Secret | None = None) -> str | None:
    kind = type(value).__qualname__.encode()
    items: list[tuple[object, ...]] = list(value.items()) if isinstance(value, dict) else [(v,) for v in value]
    bounded = len(items) > MAX_ITEMS
    if bounded:
        items = items[:100] + items[-100:]
    prints = []
    for pair in items:  # (key, value) in a dict, (element,) elsewhere
        fps = [fingerprint(part, depth + 1, secret) for part in pair]
        if any(fp is None for fp in fps):
            return None  # one element we cannot check makes the whole unknown
        prints.append("=".join(fp for fp in fps if fp is not None))
    if isinstance(value, (set, frozenset)) or isinstance(value, dict) and not bounded:
        prints.sort()  # sets have no order; a dict's order is part of neither its equality nor its content
    digest = _digest(kind, str(len(value)).encode(), "\n".join(prints).encode())
    bounded = bounded or any(p.startswith(BOUNDED) for p in prints)
    return BOUNDED + digest if bounded else digest


def earlier_fingerprint(value: object, secret: Secret | None = None) -> str | None:
    """The fingerprint nbagent recorded of a frame, Series or Index before a categorical's levels and
    the index's names entered it, where that differs from :func:`fingerprint` (else None). A record
    made then still matches an unchanged frame: a groupby result (its index named) read ``changed``
    at every Run All after the upgrade, and ``--if-changed fail`` failed CI, until asked again live."""
    pandas = sys.modules.get("pandas")
    if pandas is None or not isinstance(value, (pandas.DataFrame, pandas.Series, pandas.Index)):
        return None
    index = value if isinstance(value, pandas.Index) else value.index
    if all(n is None for n in index.names) and not any(
            isinstance(d, pandas.CategoricalDtype) for d in _dtypes(value)):
        return None
    try:
        return _pandas(value, secret, earlier=True)
    except Exception:  # as fingerprint: unknown, never an error of the agent cell
        return None


def _pandas(value: object, secret: Secret | None = None, earlier: bool = False) -> str | None:
    import numpy as np
    import pandas as pd

    if not isinstance(value, (pd.DataFrame, pd.Series, pd.Index)):
        return None
    if secret is not None and _pandas_holds(value, secret):
        return None
    rows = len(value)
    bounded = rows > MAX_ROWS
    sample = value
    if bounded:
        picks = np.unique(np.concatenate([np.arange(SAMPLE_ROWS), np.linspace(0, rows - 1, SAMPLE_ROWS).astype(int),
                                          np.arange(rows - SAMPLE_ROWS, rows)]))
        sample = value[picks] if isinstance(value, pd.Index) else value.iloc[picks]
    try:
        hashed = pd.util.hash_pandas_object(sample, index=not isinstance(value, pd.Index))
    except TypeError:  # unhashable cells (lists, dicts): their text instead
        hashed = pd.util.hash_pandas_object(sample.astype(str), index=not isinstance(value, pd.Index))
    dtype_text = str if earlier else _dtype_text
    meta = repr((type(value).__name__, value.shape, getattr(value, "name", None),
                 list(getattr(value, "columns", [])), [dtype_text(d) for d in _dtypes(value)])).encode()
    names = list((value if isinstance(value, pd.Index) else value.index).names)
    if any(n is not None for n in names) and not earlier:  # an unnamed index's digest stays as before
        meta += repr(names).encode()
    digest = _digest(meta, np.ascontiguousarray(hashed.to_numpy()).tobytes())
    return BOUNDED + digest if bounded or _many_levels(value) and not earlier else digest


def _dtype_text(dtype: object) -> str:
    """A dtype as the digest reads it: a categorical's levels and order are part of it (the kernel
    context tells "ordered levels ['lo', 'hi']"; ``str`` says only "category", and the values hash
    the same after ``reorder_categories``, ``as_ordered`` or ``add_categories``)."""
    import pandas as pd

    if not isinstance(dtype, pd.CategoricalDtype):
        return str(dtype)
    # Levels are unique: no factorizing (it doubled the cost); and sampled as rows are.
    levels = pd.util.hash_pandas_object(_levels(dtype), index=False, categorize=False).to_numpy().tobytes()
    count = f"{len(dtype.categories)} levels, " if len(dtype.categories) > MAX_ROWS else ""
    return f"category(ordered={dtype.ordered}, {dtype.categories.dtype}, {count}{_digest(levels)})"


def _levels(dtype: pd.CategoricalDtype) -> pd.Index:
    """The levels of a categorical the digest reads (and :func:`_pandas_holds` scans): all of them, or
    a sample as of a frame's rows when there are more than :data:`MAX_ROWS` (10 million user ids made
    categorical: hashing them all took 10 s at each prompt that named the frame)."""
    levels = dtype.categories
    return levels if len(levels) <= MAX_ROWS else levels[_sample_picks(len(levels))]


def _sample_picks(count: int) -> list[int]:
    """The positions of the rows (or levels) a bounded digest reads: the first, last and evenly spaced."""
    return sorted({*range(SAMPLE_ROWS), *range(count - SAMPLE_ROWS, count),
                   *(i * (count - 1) // (SAMPLE_ROWS - 1) for i in range(SAMPLE_ROWS))})


def _many_levels(value: pd.DataFrame | pd.Series | pd.Index) -> bool:
    """Whether a categorical of ``value`` has more levels than its digest reads."""
    return any(len(getattr(d, "categories", ())) > MAX_ROWS for d in _dtypes(value))


def _pandas_holds(value: pd.DataFrame | pd.Series | pd.Index, secret: Secret) -> bool:
    """Whether a frame's text cells (of the rows its fingerprint covers), its labels or its name
    hold a secret: one scan of their joined text per column."""
    import pandas as pd

    rows = value if len(value) <= MAX_ROWS else None
    if rows is None:  # only the sampled rows go into the digest (see _pandas): only they can be guessed at
        picks = _sample_picks(len(value))
        rows = value[picks] if isinstance(value, pd.Index) else value.iloc[picks]
    columns = [rows[c] for c in rows.columns] if isinstance(rows, pd.DataFrame) else [rows]
    labels: list[object] = [getattr(value, "name", None), *getattr(value, "columns", [])]
    if not isinstance(value, pd.Index):
        labels += list(rows.index) if rows.index.dtype.kind in "OSU" else []
    texts = ["\n".join(map(str, labels))]
    texts += ["\n".join(map(str, column.tolist())) for column in columns if column.dtype.kind not in "biufcmM"]
    texts += ["\n".join(map(str, _levels(column.dtype).tolist())) for column in columns  # unused levels too
              if isinstance(column.dtype, pd.CategoricalDtype)]
    return any(secret(text) for text in texts)


def _dtypes(value: pd.DataFrame | pd.Series | pd.Index) -> list[object]:
    dtypes = getattr(value, "dtypes", None)
    return list(dtypes) if dtypes is not None and hasattr(dtypes, "__iter__") else [value.dtype]


def _numpy(value: object, secret: Secret | None = None) -> str | None:
    import numpy as np

    if isinstance(value, np.generic):
        item = value.item()
        if secret is not None and isinstance(item, (str, bytes)) and _fingerprint(item, 0, secret) is None:
            return None
        return _digest(type(value).__name__.encode(), repr(item).encode())
    if not isinstance(value, np.ndarray):
        return None
    meta = repr((value.dtype.str, value.shape)).encode()
    if value.dtype.hasobject:
        items = value.ravel().tolist()
        return _container(items, 1, secret)
    if secret is not None and value.dtype.kind in "SU":  # text arrays: '<U', '|S'
        flat = value.reshape(-1)
        shown = flat if value.nbytes <= MAX_BYTES else flat[::max(1, flat.size // (MAX_BYTES // max(1, value.itemsize)))]
        if secret("\n".join(str(v) for v in shown.tolist())):
            return None
    if value.nbytes <= MAX_BYTES:
        return _digest(meta, np.ascontiguousarray(value).tobytes())
    flat = value.reshape(-1)
    step = max(1, flat.size // (MAX_BYTES // max(1, value.itemsize)))
    return BOUNDED + _digest(meta, np.ascontiguousarray(flat[::step]).tobytes())


# --- what the model was shown of a variable -----------------------------------------------------------

_ARRAY_LIBRARIES = frozenset({"numpy", "pandas", "polars", "pyarrow", "scipy", "xarray", "torch", "jax",
                              "tensorflow", "dask"})


def shown_fingerprint(value: object) -> str:
    """A fingerprint of what the model is told of a variable it did not read: its type, its shape
    (array libraries) or length (builtins), and the value of a scalar. Reads no user property."""
    parts = [type(value).__module__ or "", type(value).__qualname__]
    if _root_module(value) in _ARRAY_LIBRARIES:
        try:
            parts.append(repr(getattr(value, "shape", None)))
            parts.append(repr(list(getattr(value, "columns", []))[:50]))
        except Exception:
            pass
    elif isinstance(value, (list, tuple, dict, set, frozenset, str, bytes)):
        parts.append(str(len(value)))
    elif isinstance(value, _SCALARS):
        parts.append(repr(value))
    return _digest("\0".join(parts).encode())


# --- files ---------------------------------------------------------------------------------------------


def file_fingerprint(path: Path, secret: Secret | None = None) -> str | None:
    """``size:digest`` of a regular file's bytes (``~`` in front: bounded, sampled blocks beyond
    :data:`MAX_BYTES`); None when it is missing or not a regular file, or (with ``secret``) when
    the bytes hashed hold a secret (a config file's password: its template is often known)."""
    # A path may come from a received record: opened without blocking and without following a last
    # symlink, and only a regular file is read (a FIFO would block, /dev/zero never end), at most its size.
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        with open(fd, "rb", closefd=True) as f:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            size = info.st_size
            if size <= MAX_BYTES:
                data = f.read(size)
                if secret is not None and secret(data.decode("utf-8", "replace")):
                    return None
                return f"{size}:{_digest(data)}"
            blocks = []
            for i in range(SAMPLE_BLOCKS):
                f.seek((size - SAMPLE_BLOCK) * i // (SAMPLE_BLOCKS - 1))
                blocks.append(f.read(SAMPLE_BLOCK))
            if secret is not None and any(secret(b.decode("utf-8", "replace")) for b in blocks):
                return None
            return f"{BOUNDED}{size}:{_digest(*blocks)}"
    except (OSError, ValueError):
        return None


def library_paths() -> tuple[str, ...]:
    """Where installed code lives: opening a file there is importing, not reading data."""
    return tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})


_DEFAULT_REPR = re.compile(r"<(?:[^<>\n]|<[\w.-]*>)*>")
"""A default repr's ``<…>`` (``<__main__.Model object at 0x7f…>``), with the ``<lambda>``,
``<genexpr>``, ``<locals>`` a function's or generator's name holds."""
_AT_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def without_addresses(text: str) -> str:
    """``text`` with each memory address inside a default repr's ``<…>`` dropped (new every run, not
    a change of what a cell showed or a value was described as); one outside (a crash report's
    ``SIGSEGV at 0x7ffe1000``) is kept. ``<function <lambda> at 0x…>``, ``<generator object <genexpr>
    at 0x…>``, ``<weakref at 0x…; to 'A' at 0x…>`` are default reprs too (review of atk23: their
    addresses were kept, each run's output replayed as changed)."""
    if " at 0x" not in text:
        return text
    return _DEFAULT_REPR.sub(lambda m: _AT_ADDRESS.sub(" at 0x", m.group()), text)


__all__ = ["BOUNDED", "file_fingerprint", "fingerprint", "library_paths", "shown_fingerprint",
           "without_addresses"]
