"""Reading the output of the demo brain's own code: the brain writes plain pandas (``sales.shape``,
``sales.isna().sum()``) and reads the printed result back, as a person reads a cell's output.

The python tool returns stdout, then ``[result]`` and the repr of the last expression. Each reader
takes that text and returns what it says (None when it is not what the code would print).
"""

from __future__ import annotations

import ast
import re

_RESULT = "[result]\n"
_NUMBER = re.compile(r"^(?:np\.(?:float|int|uint)\d*\()?(-?[\d.e+-]+|nan|inf)\)?$")
# A period index adds "Freq: M, " ("Freq: M, Name: quantity, dtype: int64")
_FOOTER = re.compile(r"^(?:Length: \d+, )?(?:Freq: [\w-]+, )?(?:Name: .*|dtype: \w+)$")
_FRAME_FOOTER = re.compile(r"^\[([\d,]+) rows? x [\d,]+ columns?\]$")


def result_of(output: str) -> str:
    """The repr of the last expression in a python tool's output ("" when there is none)."""
    at = output.rfind(_RESULT)
    if at < 0:
        return ""
    end = output.find("\n[error]\n", at)
    return output[at + len(_RESULT):end if end >= 0 else None].strip("\n")


def number(output: str) -> float | None:
    """A scalar result (``391``, ``np.float64(99.875)``)."""
    text = number_text(output)
    return None if text is None else float(text)


def number_text(output: str) -> str | None:
    """A scalar result as printed (``391``, ``99.875`` of ``np.float64(99.875)``): a whole number's
    repr has no decimal point, a float's has one."""
    m = _NUMBER.match(result_of(output).strip())
    if not m:
        return None
    try:
        float(m.group(1))
    except ValueError:
        return None
    return m.group(1)


def shape(output: str) -> tuple[int, ...] | None:
    """A ``.shape`` result: ``(8, 3)``."""
    try:
        value = ast.literal_eval(result_of(output).strip())
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, tuple) and all(isinstance(n, int) for n in value):
        return value
    return None


def series_rows(output: str) -> tuple[list[tuple[str, str]], bool] | None:
    """The (label, value) rows of a Series' repr, and whether pandas cut rows out ("...")."""
    lines = [ln for ln in result_of(output).splitlines() if ln.strip()]
    if not lines or not _FOOTER.match(lines[-1].strip()):
        return None
    rows: list[tuple[str, str]] = []
    cut = False
    for line in lines[:-1]:
        parts = line.rsplit(None, 1)
        if line.strip() == "...":
            cut = True
        elif len(parts) == 2:
            rows.append((parts[0].strip(), parts[1]))
        elif not rows:
            continue  # the index's name, on a line of its own
        else:
            return None
    return rows, cut


def frame_rows(output: str) -> int | None:
    """How many rows a DataFrame's repr holds: its ``[N rows x M columns]`` footer when pandas cut
    it, else its data lines (an index label and values: not the header, nor the index's name on a
    line of its own); None when the result is not a DataFrame's repr."""
    text = result_of(output)
    if text.startswith("Empty DataFrame"):
        return 0
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    cut = _FRAME_FOOTER.match(lines[-1].strip())
    if cut:
        return int(cut.group(1).replace(",", ""))
    if not lines[0].startswith(" ") or _FOOTER.match(lines[-1].strip()):  # a frame's header is indented; a Series has a footer
        return None
    # A frame wider than the display is printed in blocks of columns, each with every row: count the first.
    block = [ln for ln in text.split("\n\n", 1)[0].splitlines()[1:] if ln.strip()]
    return sum(1 for ln in block if not ln.startswith(" ") and len(ln.split()) > 1)


def is_empty_series(output: str) -> bool:
    """Whether the result is an empty Series' repr ("Series([], Name: revenue, dtype: float64)")."""
    return result_of(output).strip().startswith("Series([]")


def dtypes(output: str) -> dict[str, str] | None:
    """A DataFrame's ``.dtypes``: column -> dtype name (None if the output is not one)."""
    found = series_rows(output)
    if found is None or found[1]:
        return None
    return dict(_dtype_row(label, value) for label, value in found[0])


def dtypes_shown(output: str) -> dict[str, str] | None:
    """The dtypes a wide frame's ``.dtypes`` shows: pandas cuts a Series of more than 60 rows to its
    first and last 30 ("..." between); None if the output is no ``.dtypes`` at all."""
    found = series_rows(output)
    return None if found is None else dict(_dtype_row(label, value) for label, value in found[0])


def _dtype_row(label: str, value: str) -> tuple[str, str]:
    """A row whose dtype has a space in it (a time zone: "ts    datetime64[ns, UTC]") is cut at
    that space by :func:`series_rows`; join the dtype back together."""
    if value.endswith("]") and "[" not in value and "[" in label and len(label.split()) > 1:
        name, head = label.rsplit(None, 1)
        return name.strip(), f"{head} {value}"
    return label, value


def is_numeric(dtype: str) -> bool:
    return dtype.lower().startswith(("int", "uint", "float", "complex"))


def is_date(dtype: str) -> bool:
    return dtype.lower().startswith(("datetime", "timedelta", "period"))


def money(value: float) -> str:
    return f"{value:,.2f}"


__all__ = ["dtypes", "dtypes_shown", "frame_rows",
           "is_date", "is_empty_series", "is_numeric", "money", "number", "number_text", "result_of",
           "series_rows", "shape"]
