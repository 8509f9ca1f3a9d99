"""The demo brain's plan: from the user's latest prompt (and the kernel facts), the tool calls to
make, in order. Each skill lives in its own module: fixing a failed cell (:mod:`.fixes`), loading a
table (:mod:`.loading`), DataFrame questions (:mod:`.frames`), plots (:mod:`.plots`); reading files,
inspecting named variables, statistics and arithmetic are here.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from . import frames
from .fixes import failure_in, fix_plan
from .loading import load_step, tables_to_load, variable_for
from .messages import KernelView
from .plots import ASKS_FOR_A_PLOT, plot_code
from .step import Plan, Step, argument

_FILE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:csv|tsv|txt|md|json|jsonl|py|log|ya?ml|toml|ini|xml|html))\b")
# Paths (a traceback's "/site-packages/pandas/core/frame.py") are not variable names.
_PATH = re.compile(r"\S*[/\\]\S*")
_BACKTICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`")
_COMMON_NAMES = re.compile(r"\b(df|data|dataset|frame|table|arr|array|result)\b")
# Numbers joined by at least one operator; `x`/`×` between numbers mean times, `^` means power.
# A minus needs spaces around it, so that dates and ranges (2024-01-05) are not taken for sums.
_ARITHMETIC = re.compile(r"[-(]*\d+(?:\.\d+)?\)*(?:(?:\s*(?:\*\*|[+*/%^x×])\s*|\s+-\s+)[-(]*\d+(?:\.\d+)?\)*)+")
_STATS = {"mean": "mean", "average": "mean", "sum": "sum", "total": "sum", "max": "max", "maximum": "max",
          "min": "min", "minimum": "min", "median": "median"}
_STAT_WHY = {"mean": "compute the mean of", "sum": "compute the sum of", "max": "find the maximum of",
             "min": "find the minimum of", "median": "compute the median of"}
_INTENT_WHY = {"shape": "find the shape of `{}`", "columns": "list the columns of `{}`",
               "describe": "describe `{}` with summary statistics",
               "largest_group": "find which group in `{}` has the largest total",
               "missing": "count the missing values in `{}`"}


def _inspect_code(name: str) -> str:
    return (f"print(type({name}).__name__, getattr({name}, 'shape', ''))\n"
            f"{name}.head() if hasattr({name}, 'head') else {name}")


def _stat_code(name: str, stat: str) -> str:
    if stat == "median":
        plain = f"__import__('statistics').median({name})"
    elif stat == "mean":
        plain = f"sum({name}) / len({name})"
    else:
        plain = f"{stat}({name})"
    return f"{name}.{stat}(numeric_only=True) if hasattr({name}, 'select_dtypes') else {plain}"


def _implicit_frame(words: str, view: KernelView, loaded: list[str]) -> list[str]:
    """The DataFrame a prompt means without naming it ("plot sales by region"): one it just
    loaded, else one whose name is a word of the prompt, else the newest one the facts list."""
    if loaded:
        return loaded[-1:]
    known = view.frames()
    said = [v.name for v in known if re.search(rf"\b{re.escape(v.name)}\b", words)]
    return said[:1] or [v.name for v in known[-1:]]


def _frame_steps(name: str, prompt: str, stats: list[str], view: KernelView, inspect: bool) -> list[Step]:
    """What the prompt asks about the variable ``name``."""
    steps = [Step("python", {"code": _inspect_code(name)}, f"inspect `{name}`")] if inspect else []
    for intent in frames.intents(prompt):
        steps.append(Step("python", {"code": frames.code(name, intent, prompt)}, _INTENT_WHY[intent].format(name)))
    if ASKS_FOR_A_PLOT.search(prompt):
        known = view.variables.get(name)
        code, what = plot_code(name, prompt, known.columns if known else ())
        steps.append(Step("python", {"code": code}, f"draw {what} from `{name}` with matplotlib"))
    for stat in dict.fromkeys(stats):
        steps.append(Step("python", {"code": _stat_code(name, stat)}, f"{_STAT_WHY[stat]} `{name}`"))
    return steps


def _python_steps(prompt: str, view: KernelView, loaded: list[str]) -> list[Step]:
    # File names are not variables: `data.csv` must not make `data` a name to inspect.
    words = _PATH.sub(" ", _FILE.sub(" ", prompt))
    names = _BACKTICKED.findall(words)
    names += [n for n in _COMMON_NAMES.findall(words) if n not in names]
    stats = [s for w, s in _STATS.items() if re.search(rf"\b{w}\b", prompt, re.I)]
    if "largest_group" in frames.intents(prompt):  # "the largest total" is the group's total, not the column's
        stats = [s for s in stats if s not in ("sum", "max")]
    inspect = True
    if not names and (frames.intents(prompt) or ASKS_FOR_A_PLOT.search(prompt)):
        names, inspect = _implicit_frame(words, view, loaded), False  # the facts already say what it is
    steps = [s for name in dict.fromkeys(names) for s in _frame_steps(name, prompt, stats, view, inspect)]
    for expr in _ARITHMETIC.findall(prompt):
        code = re.sub(r"(?<=[\d)\s])[x×](?=[\s\d(-])", "*", expr.strip()).replace("^", "**")
        code = re.sub(r"(?<![\d.])0+(?=\d)", "", code)  # Python rejects leading zeros (007)
        steps.append(Step("python", {"code": f"print({code})"}, f"compute {expr.strip()}"))
    return steps


def _named_for(tools: Mapping[str, Mapping[str, Any]], p: Plan) -> Plan:
    """The plan with each call's argument named as the offered tool's schema names it."""
    keys = {"python": ("code", argument(tools.get("python") or {}, "code")),
            "read_file": ("path", argument(tools.get("read_file") or {}, "path"))}
    steps = []
    for s in p.steps:
        ours, theirs = keys[s.tool]
        steps.append(Step(s.tool, {theirs if k == ours else k: v for k, v in s.input.items()}, s.why))
    return Plan(steps, p.lead, p.code)


def plan(prompt: str, tools: Mapping[str, Mapping[str, Any]], view: KernelView | None = None) -> Plan:
    """What the brain will do for ``prompt``, given the tools offered and the kernel facts."""
    view = view if view is not None else KernelView()
    if "python" in tools:
        failure = failure_in(prompt, view)
        if failure is not None:
            return _named_for(tools, fix_plan(failure, view))
    files = list(dict.fromkeys(_FILE.findall(prompt)))
    tables = tables_to_load(prompt, files) if "python" in tools else []
    steps = [Step("read_file", {"path": f}, f"read {f}") for f in files if f not in tables and "read_file" in tools]
    steps += [load_step(prompt, path, len(tables)) for path in tables]
    if "python" in tools:
        steps += _python_steps(prompt, view, [variable_for(prompt, path, len(tables)) for path in tables])
    return _named_for(tools, Plan(steps))


__all__ = ["plan"]
