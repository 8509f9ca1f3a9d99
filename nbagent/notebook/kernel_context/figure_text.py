"""What the model is told of a matplotlib figure: its size, and per axes the title, labels, limits as
the ticks read them, and what is drawn (an axes with nothing drawn is said to be empty)."""

from __future__ import annotations

from collections.abc import Sized
from typing import TYPE_CHECKING

from .frames import LEVELS, Description, short

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure

MAX_AXES = 8


def figure_description(fig: "Figure", full: bool) -> Description:
    """A matplotlib Figure: size, and per axes its title, labels, limits and what is drawn (an
    axes with nothing drawn is said to be empty: the usual reason a plot shows nothing)."""
    w, h = fig.get_size_inches() * fig.dpi
    summary = f"{w:.0f}x{h:.0f} px, {len(fig.axes)} axes"
    if not full:
        return Description(summary)
    lines = [_axes_line(i, ax) for i, ax in enumerate(fig.axes[:MAX_AXES])]
    if len(fig.axes) > MAX_AXES:
        lines.append(f"... {len(fig.axes) - MAX_AXES} more axes")
    return Description(summary, tuple(lines))


def _points(data: object) -> int:
    return len(data) if isinstance(data, Sized) else 0  # an array or a list of x values


def _axes_line(i: int, ax: "Axes") -> str:
    drawn = {"lines": len(ax.lines), "collections": len(ax.collections), "patches": len(ax.patches),
             "images": len(ax.images)}
    what = ", ".join(f"{n} {k}" for k, n in drawn.items() if n) or "EMPTY: nothing drawn"
    if ax.lines:  # a line of no points draws nothing: the usual "empty plot" of a filter that matched no rows
        points = sum(_points(line.get_xdata()) for line in ax.lines[:50])
        what += f" ({points:,} points)" + (": EMPTY, the lines have no data" if points == 0 else "")
    legend = ax.get_legend()
    labels = [t.get_text() for t in legend.get_texts()][:6] if legend is not None else []
    return (f"axes {i}: title {short(ax.get_title())}, x {short(ax.get_xlabel())} {_span(ax.xaxis, ax.get_xlim())}, "
            f"y {short(ax.get_ylabel())} {_span(ax.yaxis, ax.get_ylim())}; {what}"
            + (f"; legend {labels!r}" if labels else ""))


def _span(axis: "Axis", limits: tuple[float, float]) -> str:
    """An axis's limits as its ticks read them: a date axis holds days since 1970 (or pandas'
    period ordinals), which as numbers said ``1.972e+04..1.972e+04`` of a plot of three days, and a
    categorical axis holds the categories' positions, not their names."""
    low, high = limits
    try:
        text = _as_ticks(axis, low, high)
    except (ValueError, OverflowError):  # limits no date can hold (set by hand, or infinite)
        text = None
    text = text or f"{low:.4g}..{high:.4g}"
    return text + (f" ({axis.get_scale()} scale)" if axis.get_scale() != "linear" else "")


def _as_ticks(axis: "Axis", low: float, high: float) -> str | None:
    fmt = axis.get_major_formatter()
    freq = getattr(fmt, "freq", None)  # pandas' time-series formatter: the values are period ordinals
    if freq is not None and type(fmt).__module__.startswith("pandas."):
        import pandas as pd

        return f"{pd.Period(ordinal=round(low), freq=freq)}..{pd.Period(ordinal=round(high), freq=freq)}"
    if type(fmt).__module__ == "matplotlib.dates":
        from matplotlib.dates import num2date

        return "..".join(num2date(v).strftime("%Y-%m-%d %H:%M") for v in (low, high))
    if type(fmt).__name__ == "StrCategoryFormatter":
        names = list(getattr(fmt, "_units", {}))
        more = f" +{len(names) - LEVELS} more" if len(names) > LEVELS else ""
        return f"categories [{', '.join(short(n) for n in names[:LEVELS])}]{more}"
    return None


__all__ = ["MAX_AXES", "figure_description"]
