"""The demo brain's plot skill: the matplotlib code a person writes for the chart a prompt asks for.

The columns come from the kernel facts (or a look at ``.dtypes``), matched against the prompt's
words, so the code names them plainly. One pandas plotting call, then a title and axis labels, then
``plt.show()``: in a notebook the inline backend shows the figure once (in the tool card and the
agent's cell) and closes it. Without matplotlib the call fails with ModuleNotFoundError, and the
brain says it is an optional extra.
"""

from __future__ import annotations

import re

from .columns import Frame, column, literal, matches, named
from .messages import KernelView
from .step import Step

_PLOT_WORDS = re.compile(r"\b(plot|chart|graph|draw|visuali[sz]e|histogram|scatter|bar ?chart)\b", re.I)
# "Why is this plot empty?" asks about a figure; it does not ask for one.
# "why is the plot empty": the rest of the sentence, at most 300 characters (not "[^.?!]*": from each
# why/what/how of a long prompt without a sentence end it scanned to the end and back, quadratic)
ABOUT_A_PLOT = _ABOUT_A_PLOT = re.compile(
    r"\b(why|what|how)\b[^.?!]{0,300}?\b(this|that|the|my)\s+(plot|chart|graph|figure)\b", re.I)


class _AsksForAPlot:
    """``search(prompt)``: whether the prompt asks for a chart (not about one it already has)."""

    @staticmethod
    def search(prompt: str) -> bool:
        return bool(_PLOT_WORDS.search(prompt)) and not _ABOUT_A_PLOT.search(prompt)


ASKS_FOR_A_PLOT = _AsksForAPlot()
_HISTOGRAM = re.compile(r"\b(hist(?:ogram)?|distribution)\b", re.I)
_SCATTER = re.compile(r"\b(scatter|against|vs\.?|versus)\b", re.I)
_OVER = re.compile(r"\b(?:over|against)\s+(\w+)", re.I)  # "quantity over order_date", "revenue over time"
_BY = re.compile(r"\b(?:by|per|for each|across)\s+(\w+)", re.I)
NO_MATPLOTLIB = ("I cannot draw the plot: matplotlib is not installed in this kernel "
                 "(pip install matplotlib, or install nbagent with its notebooks extra)")


def _chart(frame: Frame, prompt: str) -> tuple[str, str, str, str] | None:
    """The plotting call, the title, the x and y labels; None when the columns are not known yet."""
    name, columns = frame.name, frame.columns
    said = named(prompt, columns)
    by = next((c for c in (named(w, columns) for w in _BY.findall(prompt)) if c), [None])[0]
    values = [c for c in said if c != by]
    if _HISTOGRAM.search(prompt) and values:
        return f"{column(name, values[0])}.plot.hist(bins=20)", f"Distribution of {values[0]}", values[0], "count"
    if by is not None and values:
        total = f"{name}.groupby({literal(by)})[{literal(values[0])}].sum().sort_values(ascending=False)"
        return f"{total}.plot.bar()", f"Total {values[0]} by {by}", by, f"total {values[0]}"
    if by is not None:
        return f"{column(name, by)}.value_counts().plot.bar()", f"Rows per {by}", by, "rows"
    if _SCATTER.search(prompt) and len(values) >= 2:
        x, y = values[:2]
        return f"{name}.plot.scatter(x={literal(x)}, y={literal(y)})", f"{y} against {x}", x, y
    over = _over(frame, prompt)
    if (over == "" or over and len([v for v in values if v != over]) > 1 and frame.dtypes is None) and not frame.looked:
        return None  # "over time": which column holds the dates; several ys: which are numbers; the next request knows
    ys = [v for v in values if v != over and (frame.dtypes is None or v in frame.numeric())]  # a text column is no y
    if over is not None and ys:
        y = literal(ys[0]) if len(ys) == 1 else f"[{', '.join(map(literal, ys))}]"
        return f"{name}.plot(x={literal(over)}, y={y})", f"{', '.join(ys)} over {over}", over, ", ".join(ys)
    if values:
        picked = column(name, values[0]) if len(values) == 1 else f"{name}[[{', '.join(map(literal, values))}]]"
        return f"{picked}.plot()", ", ".join(values), "row", ", ".join(values)
    if columns or frame.looked:
        if _HISTOGRAM.search(prompt):
            return f"{name}.plot.hist(bins=20, alpha=0.6)", "Distribution of the numeric columns", "value", "count"
        return f"{name}.plot()", "Numeric columns", "row", "value"
    return None


def _over(frame: Frame, prompt: str) -> str | None:
    """The x column of "<y> over <x>": the column named, or for "over time" the date column ("":
    over time, the dtypes not known yet)."""
    m = _OVER.search(prompt)
    if m is None:
        return None
    if m.group(1).lower() == "time":
        return next(iter(frame.dates()), None) if frame.dtypes is not None else ""
    return matches(m.group(1), frame.columns)


def why_empty(view: KernelView) -> list[str]:
    """The answer to "why is this plot empty?" from the kernel facts: the figures they call EMPTY and
    the DataFrames with no rows (nothing when the facts call no figure empty)."""
    figures = [f"`{n}` ({line})" for n, line in view.empty.items() if "EMPTY" in line]
    if not figures:
        return []
    frames = [f"`{n}`" for n, line in view.empty.items() if "EMPTY" not in line]
    said = (f"The kernel facts describe {', '.join(figures)}: the plot has axes but no data to draw. ")
    if frames:
        said += (f"{' and '.join(frames)} {'has' if len(frames) == 1 else 'have'} no rows, so the filter that made "
                 f"{'it' if len(frames) == 1 else 'them'} matched nothing: check its conditions against the data's "
                 "values (a date range, a spelling).")
    else:
        said += "The data it plots is empty: check the filter or the columns it selects."
    return [said]


def _drawn(title: str, name: str, output: str) -> str:
    return f"Drew \"{title}\" from `{name}`"


def _not_drawn(output: str) -> str | None:
    return NO_MATPLOTLIB if re.search(r"ModuleNotFoundError: .*\bmatplotlib\b", output) else None


def plot_steps(frame: Frame, prompt: str) -> list[Step]:
    """Draw what ``prompt`` asks of ``frame`` (after a look at its columns when they are unknown)."""
    chart = _chart(frame, prompt)
    if chart is None:
        return [frame.look(quiet=True)]
    draw, title, xlabel, ylabel = chart
    title = title[0].upper() + title[1:]
    code = "\n".join(("import matplotlib.pyplot as plt", "", draw, f"plt.title({literal(title)})",
                      f"plt.xlabel({literal(xlabel)})", f"plt.ylabel({literal(ylabel)})", "plt.show()"))
    return [Step("python", {"code": code}, f"plot {title[0].lower() + title[1:]} from `{frame.name}` with matplotlib",
                 reads=lambda out: _drawn(title, frame.name, out), on_error=_not_drawn)]


__all__ = ["ABOUT_A_PLOT", "ASKS_FOR_A_PLOT", "NO_MATPLOTLIB", "plot_steps", "why_empty"]
