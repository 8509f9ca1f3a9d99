"""The values a data notebook computes are scalars of numpy, pandas or the standard library
(``df.price.sum()`` is a numpy ``float64``, ``df.day.max()`` a ``Timestamp``): the model is told
their value, as it is of a Python ``float``, not only their type (or a ``shape ()``)."""

from __future__ import annotations

import datetime as dt
import decimal
import pathlib

import numpy as np
import pandas as pd

from tests.notebook.kernel_context.support import context_text, shell_with


def test_a_scalar_of_numpy_pandas_or_the_stdlib_is_described_by_its_value() -> None:
    df = pd.DataFrame({"price": [1.5, 2.5, 4.0], "day": pd.date_range("2024-01-01", periods=3)})
    ns = {"total": df.price.sum(), "count": np.int64(3), "last_day": df.day.max(),
          "start": pd.Timestamp("2024-01-01", tz="UTC"), "cutoff": dt.datetime(2024, 5, 1, 12, 0),
          "day": dt.date(2024, 5, 1), "gap": pd.Timedelta("3D"), "amount": decimal.Decimal("12.30"),
          "path": pathlib.PurePosixPath("/data/sales.csv")}
    text, _ = context_text(shell_with(**ns), "what are " + ", ".join(f"`{k}`" for k in ns) + "?")
    for line in ("total: float64 (8.0)", "count: int64 (3)", "last_day: Timestamp (2024-01-03 00:00:00)",
                 "start: Timestamp (2024-01-01 00:00:00+00:00)", "cutoff: datetime (2024-05-01 12:00:00)",
                 "day: date (2024-05-01)", "gap: Timedelta (3 days 00:00:00)", "amount: Decimal (12.30)",
                 "path: PurePosixPath (/data/sales.csv)"):
        assert f"  - {line}\n" in text, (line, text)
    assert "shape ()" not in text


def test_a_datetime_inside_a_container_is_its_value_not_an_object() -> None:
    window = {"start": dt.datetime(2024, 1, 1), "end": dt.date(2024, 2, 1)}
    text, _ = context_text(shell_with(window=window), "what is `window`?")
    assert "{'end': datetime.date(2024, 2, 1), 'start': datetime.datetime(2024, 1, 1, 0, 0)}" in text, text


def test_a_subclass_of_a_known_scalar_runs_none_of_its_code() -> None:
    class Loud(dt.datetime):
        def __str__(self) -> str:
            raise AssertionError("the user's __str__ ran")
        __repr__ = __str__

    text, _ = context_text(shell_with(when=Loud(2024, 1, 1), items=[Loud(2024, 1, 1)]), "what are `when`, `items`?")
    assert "  - when: Loud\n" in text and "Loud object>]" in text, text


def test_a_text_scalar_or_a_uuid_is_never_told_by_its_value() -> None:
    # A password read from a frame's cell is a numpy str_, and credentials are known among str values
    # only; some services' keys are UUIDs: these two stay type names (the review of power pass 2).
    import uuid

    secret, key = np.str_("Tr0ub4dor-x9-" + "pw9" * 4), uuid.UUID("12345678-1234-5678-1234-567812345678")
    text, _ = context_text(shell_with(db_password=secret, api_key=key), "what are `db_password`, `api_key`?")
    assert str(secret) not in text and str(key) not in text, text
    assert "  - db_password: str_ (shape ())\n" in text and "  - api_key: UUID\n" in text, text
