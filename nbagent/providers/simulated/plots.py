"""The demo brain's plot skill: matplotlib code that draws the chart a prompt asks for.

The columns come from the kernel facts (a DataFrame's columns are listed there), matched against the
prompt's words, so the code names them plainly, as a user would write it. The figure is saved as a
PNG and displayed: the python tool shows displays in its card whatever matplotlib backend is active,
and the figure is closed so it is not drawn a second time under the cell. Without matplotlib the
code says so (it is an optional extra) instead of failing with an ImportError.
"""

from __future__ import annotations

import re

from .frames import ANSWER

ASKS_FOR_A_PLOT = re.compile(r"\b(plot|chart|graph|draw|visuali[sz]e|histogram|scatter|bar ?chart)\b", re.I)
_HISTOGRAM = re.compile(r"\b(hist(?:ogram)?|distribution)\b", re.I)
_SCATTER = re.compile(r"\b(scatter|against|vs\.?|versus)\b", re.I)
_BY = re.compile(r"\b(?:by|per|for each|across)\s+(\w+)", re.I)
NO_MATPLOTLIB = ("I cannot draw the plot: matplotlib is not installed in this kernel "
                 "(pip install matplotlib, or install nbagent with its notebooks extra)")


def _matches(word: str, columns: tuple[str, ...]) -> str | None:
    """The column ``word`` names: the same, or its singular/plural, ignoring case."""
    w = word.lower()
    for c in columns:
        if c.lower() in (w, w.rstrip("s"), w + "s"):
            return c
    return None


def _named_columns(prompt: str, columns: tuple[str, ...]) -> list[str]:
    named = (_matches(w, columns) for w in re.findall(r"\w+", prompt))
    return list(dict.fromkeys(c for c in named if c is not None))


def _draw(name: str, prompt: str, columns: tuple[str, ...]) -> tuple[str, str, str]:
    """The line that draws on ``ax``, the words that describe the chart, and its title."""
    named = _named_columns(prompt, columns)
    by = next((c for c in (_matches(w, columns) for w in _BY.findall(prompt)) if c), None)
    values = [c for c in named if c != by]
    if _HISTOGRAM.search(prompt):
        if values:
            return f"{name}[{values[0]!r}].plot.hist(ax=ax, bins=20)", f"a histogram of {values[0]}", f"{values[0]}"
        return (f"{name}.select_dtypes('number').plot.hist(ax=ax, bins=20, alpha=0.6)",
                "a histogram of each numeric column", "numeric columns")
    if by is not None:
        if values:
            return (f"{name}.groupby({by!r})[{values[0]!r}].sum().sort_values(ascending=False).plot.bar(ax=ax, "
                    f"ylabel='total {values[0]}')", f"a bar chart of the total {values[0]} by {by}",
                    f"total {values[0]} by {by}")
        return (f"{name}[{by!r}].value_counts().plot.bar(ax=ax, ylabel='rows')", f"a bar chart of the rows per {by}",
                f"rows per {by}")
    if _SCATTER.search(prompt) and len(values) >= 2:
        return (f"{name}.plot.scatter(x={values[0]!r}, y={values[1]!r}, ax=ax)",
                f"a scatter plot of {values[1]} against {values[0]}", f"{values[1]} against {values[0]}")
    if values:
        return f"{name}[{values!r}].plot(ax=ax)", f"a line plot of {', '.join(values)}", ", ".join(values)
    return f"{name}.select_dtypes('number').plot(ax=ax)", "a line plot of the numeric columns", "numeric columns"


def plot_code(name: str, prompt: str, columns: tuple[str, ...] = ()) -> tuple[str, str]:
    """Python drawing what ``prompt`` asks of the DataFrame ``name``, and a description of it."""
    draw, what, title = _draw(name, prompt, columns)
    body = (
        "import matplotlib.pyplot as plt",
        "from io import BytesIO",
        "from IPython.display import Image, display",
        "fig, ax = plt.subplots(figsize=(7, 4))",
        draw,
        f"ax.set_title({title[0].upper() + title[1:] + f' ({name})'!r})",
        "fig.tight_layout()",
        "_nb_png = BytesIO()",
        "fig.savefig(_nb_png, format='png')",
        "plt.close(fig)  # shown once, in the tool card: an open figure would be drawn again under the cell",
        "display(Image(_nb_png.getvalue()))",
        "del _nb_png",
        f"print({ANSWER + ' Drew ' + what + ' from `' + name + '` (the figure is in the tool card)'!r})",
    )
    code = ("import importlib.util\n"
            "if importlib.util.find_spec('matplotlib') is None:\n"
            f"    print({ANSWER + ' ' + NO_MATPLOTLIB!r})\n"
            "else:\n" + "\n".join("    " + line for line in body))
    return code, what


__all__ = ["ASKS_FOR_A_PLOT", "NO_MATPLOTLIB", "plot_code"]
