"""Scalars of known libraries, by value: what a data notebook's computations return.

``df.price.sum()`` is a numpy ``float64``, ``df.day.max()`` a pandas ``Timestamp``; a cutoff is a
``datetime``, an amount a ``Decimal``, a file a ``Path``. Described by their type name alone, the
model had to run code to learn a value the user just computed. These types' ``str`` and ``repr``
are the library's own (bounded, no user code): only the exact types below are read, never a
subclass (whose methods may be the user's).
"""

from __future__ import annotations

import sys

#: Exact types (top-level package, qualified name) whose value is shown; numpy's scalar types
#: are recognised as numpy's own ``generic`` subclasses.
KNOWN_SCALARS = frozenset({
    "pandas.Timestamp", "pandas.Timedelta", "pandas.Period", "pandas.Interval", "pandas.NaTType",
    "pandas.NAType", "datetime.datetime", "datetime.date", "datetime.time", "datetime.timedelta",
    "datetime.timezone", "decimal.Decimal", "fractions.Fraction", "pathlib.PosixPath",
    "pathlib.PurePosixPath", "pathlib.WindowsPath", "pathlib.PureWindowsPath", "zoneinfo.ZoneInfo",
})
# Not a UUID (some services' API keys are UUIDs), nor numpy's text and bytes scalars: a credential
# read from a file or a frame's cell comes as ``np.str_``, and credentials are recognised among
# ``str`` values only (engine/credentials/kernel_secrets.py), so these stay type names.
#: Most characters of a scalar's value (a ``Fraction`` or a ``Path`` may be long).
MAX_SCALAR_CHARS = 200


def _key(cls: type) -> str:
    return f"{(getattr(cls, '__module__', None) or '').split('.')[0]}.{getattr(cls, '__qualname__', '?')}"


def _numpy_scalar(value: object) -> bool:
    numpy = sys.modules.get("numpy")
    kind = type(value)  # not isinstance: it reads __class__, a property that runs code on lazy proxies
    if numpy is None or kind.__module__ != "numpy":  # numpy's own scalar types, not a subclass of them
        return False
    return issubclass(kind, (numpy.number, numpy.bool_, numpy.datetime64, numpy.timedelta64))


def is_known_scalar(value: object) -> bool:
    """Whether ``value`` is exactly one of the scalar types whose value is shown."""
    return _key(type(value)) in KNOWN_SCALARS or _numpy_scalar(value)


def scalar_text(value: object, *, as_code: bool = False) -> str | None:
    """The value of a known scalar (``8.0``, ``2024-01-01 00:00:00+00:00``), cut to
    :data:`MAX_SCALAR_CHARS`; its repr with ``as_code`` (inside a container: ``Timestamp('…')``).
    None for any other value."""
    if not is_known_scalar(value):
        return None
    text = repr(value) if as_code else str(value)
    return text if len(text) <= MAX_SCALAR_CHARS else text[:MAX_SCALAR_CHARS] + "…"


__all__ = ["KNOWN_SCALARS", "is_known_scalar", "scalar_text"]
