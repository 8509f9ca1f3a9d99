"""Schemas of tabular data as a data scientist would look at them: every column's dtype, its
missing values, the levels of categorical and low-cardinality columns, a numeric or date range,
a few sample rows, the index and the memory size.

Bounded whatever the frame: statistics are taken over at most ``STATS_CELLS`` cells (the rows
used are said), at most ``MAX_COLUMNS`` columns are detailed (the rest are counted), each value
is cut to ``VALUE_CHARS``. A column whose values cannot be hashed (lists, dicts) says so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import polars as pl
    from numpy.typing import NDArray

#: Columns named on a variable's first line (as before this module: the offline model reads them).
HEAD_COLUMNS = 12
#: Columns detailed one per line in a full description; more are counted, not listed.
MAX_COLUMNS = 100
#: A column with at most this many distinct values has them listed (its levels).
LEVELS = 10
#: Statistics read at most this many cells (rows x detailed columns).
STATS_CELLS = 2_000_000
SAMPLE_ROWS = 3
#: A MultiIndex's levels named (with their dtypes) on its index line.
MAX_LEVELS = 8
VALUE_CHARS = 40
LINE_CHARS = 240


@dataclass(frozen=True)
class Description:
    """What the model is told of one value: its summary (inside the parentheses of its line) and,
    for a full description, further lines (unindented here)."""

    summary: str
    detail: tuple[str, ...] = ()


def cut(line: str, limit: int = LINE_CHARS) -> str:
    """``line`` in at most ``limit`` characters, ending with ``…`` where it was cut. The lines of a
    description are joined before the secrets are redacted, so a key cut bare at the end of one is
    followed by the next line, not by the end of the text: only a marker tells the redaction that
    the head of a key ends there (a 30-character token among a column's levels sent 28 of them)."""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def short(value: object, limit: int = VALUE_CHARS) -> str:
    """A repr of at most ``limit`` characters (a long string or bytes is cut before its repr is made:
    the repr of a 200 MB ``blob = open("model.bin", "rb").read()`` took 600 MB and a second at every
    prompt, and a 1 GB one about 4 GB, before its first 40 characters were kept)."""
    if isinstance(value, (str, bytes, bytearray)) and len(value) > limit:
        value = value[:limit]
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain(value: object) -> str:
    """A value as a reader writes it: ``3.142`` not ``np.float64(3.14159…)``, dates as text."""
    item = getattr(value, "item", None)
    if type(value).__module__.split(".")[0] == "numpy" and callable(item):
        value = item()
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (int, bool)):
        return str(value)
    if type(value).__name__ in ("Timestamp", "Timedelta", "datetime", "date"):
        return str(value)[:VALUE_CHARS]
    if type(value) is tuple:  # a MultiIndex entry: ('a', 1), not ('a', np.int64(1))
        return cut("(" + ", ".join(short(v) if type(v) is tuple else plain(v) for v in value[:8]) + ")", VALUE_CHARS)
    return short(value)


def _name(label: object) -> str:
    return label if isinstance(label, str) and label.isidentifier() else short(label)


def size_text(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def _label(label: object) -> str:
    """A column label as the literal that selects it: a MultiIndex's ``('x', 'p')`` stays a tuple
    and a ``None`` label ``None``; made text (``"('x', 'p')"``, ``'None'``) they read as string
    labels, and ``df["('x', 'p')"]`` is a KeyError."""
    if type(label) is tuple:
        inner = ", ".join(_label(v) for v in label)
        return f"({inner},)" if len(label) == 1 else f"({inner})"
    if isinstance(label, str) or label is None or type(label) in (int, float, bool):
        return repr(label)
    # a numpy scalar as its value (``3``, not ``np.int64(3)``); a Timestamp as its repr, as the column lines say it
    return plain(label) if type(label).__module__.split(".")[0] == "numpy" else short(label)


def _head_columns(columns: "pd.Index | list[str]") -> str:
    return "columns [" + ", ".join(_label(c) for c in list(columns[:HEAD_COLUMNS])) + "]"


def _dtype_counts(dtypes: "pd.Series") -> str:
    counts = Counter(dtypes.tolist())  # hashes dtypes: str() of each is slow for 100,000 columns
    return ", ".join(f"{n} {d}" for d, n in counts.most_common(4)) + (", …" if len(counts) > 4 else "")


def _memory(df: "pd.DataFrame") -> str:
    """Shallow memory from the dtypes (``memory_usage`` builds a Series per column: seconds for a
    frame of 100,000 columns); object contents are not counted."""
    rows = len(df)
    by_dtype = Counter(df.dtypes.tolist())
    total = df.index.nbytes + sum(rows * getattr(d, "itemsize", 8) * n for d, n in by_dtype.items())
    return f"memory {size_text(total)} (without object contents)"


def dataframe_brief(df: "pd.DataFrame") -> Description:
    return Description(f"shape {df.shape}, dtypes {_dtype_counts(df.dtypes)}, "
                       f"{_head_columns(df.columns)}")


def dataframe_full(df: "pd.DataFrame") -> Description:
    """A pandas DataFrame's schema, column by column."""
    rows, ncols = df.shape
    shown = min(ncols, MAX_COLUMNS)
    sub = df.iloc[:, :shown]
    stat_rows = max(1, STATS_CELLS // max(shown, 1))
    part = sub.iloc[:stat_rows]
    missing = part.isna().sum()
    scope = "" if rows <= stat_rows else f"; missing and values of the first {stat_rows:,} rows"
    lines = [f"index: {_index_text(df.index)}; {_memory(df)}",
             f"columns (name: dtype, missing, values{scope}):"]
    for i, (label, col) in enumerate(part.items()):
        try:
            values = _values_text(col)
        except Exception as exc:  # noqa: BLE001 - an object cell's __repr__/__eq__ raised: its values only are left out
            values = f", values not shown ({type(exc).__name__} from a cell)"
        lines.append(cut(f"  {_name(label)}: {col.dtype}, {int(missing.iloc[i]):,} missing{values}"))
    if ncols > shown:
        lines.append(f"  ... {ncols - shown:,} more columns not listed (ask: df.columns[{shown}:])")
    lines += _sample_lines(sub, rows)
    summary = f"shape {df.shape}, {_missing_count(missing, len(part), df.shape)}, {_head_columns(df.columns)}"
    return Description(summary, tuple(lines))


def _missing_count(missing: "pd.Series", rows_read: int, shape: tuple[int, int]) -> str:
    """How many columns have missing values, said of the part that was read: a frame's first line
    is what the model quotes, and "0 columns with missing values" of a frame whose NaNs lie past
    the rows or columns read would be an unknown count shown as zero."""
    n = int((missing > 0).sum())
    scope = ([f"of the first {len(missing):,} columns"] if len(missing) < shape[1] else []) + \
        ([f"in the first {rows_read:,} rows"] if rows_read < shape[0] else [])
    return f"{n} column{'' if n == 1 else 's'} with missing values" + (f" ({', '.join(scope)})" if scope else "")


def _index_text(index: "pd.Index") -> str:
    kind = type(index).__name__
    if len(index) == 0:
        return f"{kind}, empty"
    first, last = plain(index[0]), plain(index[-1])
    name = f" named {short(index.name)}" if index.name is not None else ""
    # Uniqueness hashes every label: asked only of an index small enough (a RangeIndex knows at once).
    unique = index.is_unique if len(index) <= STATS_CELLS or kind == "RangeIndex" else True
    entries = f"{len(index):,} entries" if len(index) != 1 else "1 entry"
    return f"{kind}{name}, {entries}, {first} .. {last}" + ("" if unique else ", not unique") + _levels_text(index)


def _levels_text(index: "pd.Index") -> str:
    """A MultiIndex's level names and dtypes: its ``name`` is None, so it read "MultiIndex, 6
    entries" and the model had no name to ``groupby(level=...)``/``xs`` by (the sample rows' header,
    the only other place, is dropped first by the budget) nor a level's dtype (a tz-aware one)."""
    names = getattr(index, "names", None)
    levels = getattr(index, "levels", None)
    if type(index).__name__ != "MultiIndex" or names is None or levels is None:
        return ""
    told = [f"{short(n)} ({lv.dtype})" for n, lv in zip(list(names)[:MAX_LEVELS], list(levels)[:MAX_LEVELS], strict=True)]
    more = f", … {len(names) - MAX_LEVELS} more" if len(names) > MAX_LEVELS else ""
    return cut(f"; levels {', '.join(told)}{more}", LINE_CHARS // 2)


def _values_text(col: "pd.Series") -> str:
    """Levels, a range or a distinct count of one column (pandas Series)."""
    import pandas as pd

    kind = col.dtype
    if isinstance(kind, pd.CategoricalDtype):
        cats = list(kind.categories[:LEVELS])
        more = f" +{len(kind.categories) - LEVELS} more" if len(kind.categories) > LEVELS else ""
        # an ordered category sorts and compares by its levels' order (low < mid < high), not the text's
        return f", {'ordered levels' if kind.ordered else 'levels'} [{', '.join(short(c) for c in cats)}]{more}"
    if pd.api.types.is_bool_dtype(kind):
        return f", {int(col.sum()):,} true"
    if pd.api.types.is_numeric_dtype(kind) or pd.api.types.is_datetime64_any_dtype(kind):
        valid = col.dropna()
        if valid.empty:
            return ", all missing" if len(col) else ""
        low, high = valid.min(), valid.max()
        if pd.api.types.is_numeric_dtype(kind):
            distinct = valid.nunique()
            if distinct <= LEVELS:
                return f", {distinct} distinct: [{', '.join(plain(v) for v in sorted(valid.unique())[:LEVELS])}]"
        return f", {plain(low)} .. {plain(high)}"
    try:
        distinct = col.nunique()
    except TypeError:  # lists or dicts in the cells
        return ", unhashable values (lists/dicts)"
    if distinct <= LEVELS:
        return f", {distinct} distinct: [{', '.join(short(v) for v in col.dropna().unique()[:LEVELS])}]"
    return f", {distinct:,} distinct"


def _sample_lines(sub: "pd.DataFrame", rows: int) -> list[str]:
    if rows == 0:
        return ["(no rows)"]
    try:  # pandas' repr calls an object cell's __repr__: one that raises costs the sample, not the schema
        text = sub.head(SAMPLE_ROWS).to_string(max_cols=HEAD_COLUMNS, max_colwidth=VALUE_CHARS, show_dimensions=False)
    except Exception as exc:  # noqa: BLE001 - the user's __repr__; the time limit (TimeUp) is no Exception
        return [f"first rows: not shown (a cell's repr raised {type(exc).__name__})"]
    return [_first_rows(rows), *("  " + cut(line) for line in text.splitlines())]


def series_brief(s: "pd.Series") -> Description:
    return Description(f"shape {s.shape}, dtype {s.dtype}")


def series_full(s: "pd.Series") -> Description:
    n = len(s)
    part = s.iloc[:STATS_CELLS]
    scope = "" if n <= STATS_CELLS else f" (missing and values of the first {STATS_CELLS:,})"
    name = f", name {short(s.name)}" if s.name is not None else ""
    lines = [f"index: {_index_text(s.index)}; memory {size_text(s.memory_usage(deep=False))}",
             cut(f"values: {int(part.isna().sum()):,} missing{scope}{_values_text(part)}")]
    if n:
        head = s.head(SAMPLE_ROWS * 2).to_string(max_rows=SAMPLE_ROWS * 2)
        lines += [f"first {min(n, SAMPLE_ROWS * 2)}:", *("  " + cut(line) for line in head.splitlines())]
    return Description(f"shape {s.shape}, dtype {s.dtype}{name}", tuple(lines))


def ndarray_brief(a: "NDArray[np.generic]") -> Description:
    return Description(f"shape {a.shape}, dtype {a.dtype}")


def ndarray_full(a: "NDArray[np.generic]") -> Description:
    """A numpy array: dtype, size, NaN count and range of numbers, the first values."""
    import numpy as np

    lines = [f"memory {size_text(a.nbytes)}"]
    # The first rows, not reshape(-1) of the whole: that copies a non-contiguous array in full.
    rows = a if a.ndim == 0 or a.size <= STATS_CELLS else a[: max(1, STATS_CELLS // max(1, a.size // len(a)))]
    flat = rows.reshape(-1)
    scope = "" if a.size <= STATS_CELLS else f" (of the first {flat.size:,} values)"
    if a.size and np.issubdtype(a.dtype, np.number) and not np.issubdtype(a.dtype, np.complexfloating):
        nans = int(np.isnan(flat).sum()) if np.issubdtype(a.dtype, np.floating) else 0
        valid = flat[~np.isnan(flat)] if nans else flat
        rng = f", {plain(valid.min())} .. {plain(valid.max())}, mean {valid.mean():.4g}" \
            if valid.size else ", all NaN"
        lines.append(f"values: {nans:,} NaN{scope}{rng}")
    text = np.array2string(a, threshold=12, edgeitems=3, max_line_width=LINE_CHARS)
    # numpy summarises an array of more than 12 values as its first and last three: "first values"
    # read the last three as the 4th to 6th
    lines += ["values:" if a.ndim > 1 or a.size <= 12 else "first and last values:",
              *("  " + cut(line) for line in text.splitlines()[:8])]
    return Description(f"shape {a.shape}, dtype {a.dtype}", tuple(lines))


def polars_brief(df: "pl.DataFrame") -> Description:
    return Description(f"shape {df.shape}, {_head_columns(df.columns)}")


def polars_full(df: "pl.DataFrame") -> Description:
    """A polars DataFrame: its schema with null counts, levels of low-cardinality columns, sample rows."""
    rows, ncols = df.shape
    shown = min(ncols, MAX_COLUMNS)
    sub = df.select(df.columns[:shown])
    part = sub.head(max(1, STATS_CELLS // max(shown, 1)))
    nulls = part.null_count().row(0)
    lines = [f"memory {size_text(df.estimated_size())}", "columns (name: dtype, nulls, values):"]
    for i, (name, dtype) in enumerate(sub.schema.items()):
        col = part.get_column(name)
        try:
            distinct = col.n_unique()
            values = cut(f", {distinct} distinct: {col.unique().head(LEVELS).to_list()!r}") \
                if distinct <= LEVELS else f", {distinct:,} distinct"
        except Exception:  # noqa: BLE001 - nested types polars cannot hash
            values = ""
        lines.append(cut(f"  {_name(name)}: {dtype}, {nulls[i]:,} null{values}"))
    if ncols > shown:
        lines.append(f"  ... {ncols - shown:,} more columns not listed")
    text = str(sub.head(SAMPLE_ROWS))
    lines += [_first_rows(rows), *("  " + cut(line) for line in text.splitlines())]
    return Description(f"shape {df.shape}, {_head_columns(df.columns)}", tuple(lines))


def _first_rows(rows: int) -> str:
    """The heading of a frame's sample rows: "first 5 rows:", or "first row:" for one."""
    return "first row:" if rows == 1 else f"first {min(rows, SAMPLE_ROWS)} rows:"


__all__ = ["Description", "dataframe_brief", "dataframe_full", "ndarray_brief", "ndarray_full", "polars_brief",
           "polars_full", "series_brief", "series_full", "short", "size_text"]
