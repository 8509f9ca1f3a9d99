"""The demo brain's plan: from the user's latest prompt, the kernel facts and the calls it already
made in this turn, the tool calls to make, in order. Each skill lives in its own module: fixing a
failed cell (:mod:`.fixes`), loading a table (:mod:`.loading`), DataFrame questions (:mod:`.frames`, with
:mod:`.groups`, :mod:`.selection`, :mod:`.statistics` and :mod:`.correlation`),
plots (:mod:`.plots`), the notebook tools (:mod:`.notebook`); reading files, looking at named
variables and arithmetic are here.

Every call is code a person would write: column names are resolved here, in Python, before the
code is written; when the facts do not name them, the first call looks (``sales.dtypes``) and the
plan made at the next request, knowing the answer, writes the code.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial
from typing import Mapping, Sequence

from ...engine.contracts.json_types import JSONValue
from . import frames, groups, notebook, statistics
from .columns import frame_of, view_with_looks, without_frame, words_joined
from .comparisons import compared
from .date_conditions import asks_a_change, date_condition, says_a_range, unread_time
from .fixes import Failure, failure_in, fix_plan, frames_to_look_at, quotes_a_failure
from .joins import JOIN, join_steps
from .loading import load_steps, loaded_names, tables_to_load, variable_for
from .messages import KernelView, Variable
from .plots import ABOUT_A_PLOT, ASKS_FOR_A_PLOT, plot_steps, why_empty
from .readers import result_of
from .selection import fill_stat, rows_condition
from .step import Call, Plan, Step, argument
from .summary import fenced

_FILE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:csv|tsv|txt|md|json|jsonl|py|log|ya?ml|toml|ini|xml|html))\b")
# Paths (a traceback's "/site-packages/pandas/core/frame.py") are not variable names.
_PATH = re.compile(r"\S*[/\\]\S*")
_BACKTICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`")
_COMMON_NAMES = re.compile(r"\b(df|data|dataset|frame|table|arr|array|result)\b")
_SHOW = re.compile(r"\b(what(?:'s| is) in|show|look at|inspect|preview|peek|head)\b", re.I)
# Numbers joined by at least one operator; `x`/`×` between numbers mean times, `^` means power.
# A minus needs spaces around it, so that dates and ranges (2024-01-05) are not taken for sums.
_ARITHMETIC = re.compile(r"[-(]*\d+(?:\.\d+)?\)*(?:(?:\s*(?:\*\*|[+*/%^x×])\s*|\s+-\s+)[-(]*\d+(?:\.\d+)?\)*)+")
_FRAME_TYPES = frozenset({"DataFrame"})
# Values the kernel context shows a preview of (a list's first items, a Series' first rows, a
# figure's axes): asked "what is `xs`?", their own repr is the answer, so they are still run; only
# another object's facts (its `_repr_llm_`) answer a question about it.
_VALUE_TYPES = frozenset({"dict", "list", "tuple", "set", "frozenset", "str", "bytes", "int", "float", "complex",
                          "bool", "range", "Series", "Index", "ndarray", "Figure", "Axes", "DataFrame"})
_RUN = re.compile(r"\b(?:print|run|call|execute|evaluate|use python)\b", re.I)
"""Words asking for the object to be run, not described."""
_SLASH_DATE = re.compile(r"\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})")
NO_NOTEBOOK_TOOLS = ("I cannot read the notebook here: the notebook tools (notebook_read, notebook_edit, notebook_run) "
                     "are offered only while JupyterLab or Notebook 7 with nbagent's extension is connected.")


def _implicit_frame(words: str, view: KernelView, loaded: list[str], earlier: Sequence[Call]) -> list[str]:
    """The DataFrame a prompt means without naming it ("plot sales by region"): one it just
    loaded, else one whose name is a word of the prompt, else the one the conversation's code
    used last, else the newest one the facts list."""
    if loaded:
        return loaded[-1:]
    known = view.frames()
    said = [v.name for v in known if re.search(rf"\b{re.escape(v.name)}\b", words)]
    for call in reversed(earlier):
        code = " ".join(str(v) for v in call.input.values())
        used = [v.name for v in known if re.search(rf"\b{re.escape(v.name)}\b", code)]
        if used:
            return said[:1] or used[:1]
    return said[:1] or [v.name for v in known[-1:]]


def _variable_steps(name: str, prompt: str, view: KernelView, calls: Sequence[Call], show: bool) -> tuple[list[Step], list[str]]:
    """What the prompt asks about the variable ``name``: the calls, and what could not be resolved."""
    known = view.variables.get(name)
    is_frame = known is None or bool(known.columns) or known.type in _FRAME_TYPES
    frame = frame_of(name, view, calls)
    # a column name of several words ("sales region") read as one, as the questions' patterns need
    prompt = words_joined(frames.rows_by_name(frame, prompt), frame.columns)
    about = without_frame(name, prompt, frame.columns)
    steps: list[Step] = []
    notes: list[str] = []
    asked = frames.intents(prompt)
    # ("describe `exp`" is a frame's intent, of no use to another object: its text describes it)
    if (known is not None and not is_frame and known.described and known.type not in _VALUE_TYPES
            and not (show or _stats(prompt) or ASKS_FOR_A_PLOT.search(prompt) or _RUN.search(prompt))):
        # An object the facts describe (its `_repr_llm_`): that text is the answer; running `exp`
        # would show its default repr, `<__main__.Experiment at 0x…>`, and the answer quoted that.
        return [], [described_note(known)]
    if (show and not frames.SHOWS_ROWS & set(asked)) or (not asked and not ASKS_FOR_A_PLOT.search(prompt)
                                                        and not _stats(prompt)):
        steps.append(Step("python", {"code": f"{name}.head()" if is_frame and known else name}, f"look at `{name}`"))
    for intent in asked if is_frame else ():
        made = frames.frame_steps(frame, intent, prompt)
        if isinstance(made, str):
            notes.append(made)
        else:
            steps += made
    if ASKS_FOR_A_PLOT.search(prompt) and is_frame:
        steps += plot_steps(frame, about)
    stats = _stats(prompt)
    # "the average price for quantity above 2": the statistic of those rows, quantity no value of it
    # "the total sales per region in March": of the rows in that range (which column holds dates is in the types)
    rows = (rows_condition(frame, prompt, _STAT_ASKED) or date_condition(frame, prompt)) if stats and is_frame else None
    about = rows.cut_from(about) if rows else about
    about = f"{about} per month" if rows and asks_a_change(prompt) else about  # each month's, side by side
    pair = compared(frame, about, calls) if stats and is_frame and rows is None else None
    if isinstance(pair, (Step, str)):  # "compare the average price of North and South": which column holds them
        return ([*steps, pair], notes) if isinstance(pair, Step) else (steps, [*notes, pair])
    rows, about = (pair.rows, pair.rows.cut_from(about)) if pair else (rows, about)
    if stats and is_frame and not frame.looked and (not frame.columns or says_a_range(about)
                                                    or statistics.stat_needs_dtypes(about, frame.columns)):
        # which column "revenue" is, whether it is a DataFrame, and which of two named columns are numbers
        return [*steps, frame.look(quiet=True)], notes
    if frame.looked and "columns" not in frames.intents(prompt):
        steps.insert(0, frame.look(quiet=True))  # made at an earlier request of this turn: read, not reported
    kind = "frame" if is_frame and not frame.look_failed else known.type if known else "plain"
    numeric = frame.numeric() if frame.dtypes is not None else None
    dates = frame.dates() if frame.dtypes is not None else []
    group = pair.by if pair else None  # the column holding the values compared, by its name whatever it is
    steps += [statistics.stat_step(name, stat, frame.columns, about, kind, numeric, rows, dates, group) for stat in stats]
    return steps, [*notes, *_not_narrowed(prompt if is_frame else "")]


def _not_narrowed(prompt: str) -> list[str]:
    """Why the answer is of every row when the prompt says "last month" (no date is read relative to today)."""
    said = unread_time(prompt)
    return [] if said is None else [f"I did not narrow the rows to \"{said}\": dates relative to today or week numbers "
                                    "are not read here; say the range, e.g. \"in March 2024\" or \"after 2024-03-01\"."]


def described_note(known: Variable) -> str:
    """The answer to a question about an object from what the kernel facts say of it: the object's
    own text, quoted in a fence (its lines kept, its Markdown or a "■ done" line not rendered as ours)."""
    # the blank line after it: notes are joined with a space, and "``` `b` (E), …" does not close a fence
    return f"`{known.name}` ({known.type}), as the kernel context describes it to me:\n\n{fenced(known.described)}\n\n"


_STAT_ASKED = re.compile(rf"\b(?:{'|'.join(statistics.STATS)})\b", re.I)
"""A statistic's word: a condition is of its rows only in the words that ask it."""


def _stats(prompt: str) -> list[str]:
    found = [s for w, s in statistics.STATS.items() if re.search(rf"\b{w}\b", prompt, re.I)]
    asked = frames.intents(prompt)
    if {"largest_group", "paid_rows", "second"} & set(asked):  # "the largest total" is the group's total, not the column's
        found = [s for s in found if s not in ("sum", "max", groups.group_stat(prompt))]
    if "share" in asked:  # "the share of each region in total sales": the shares' own totals
        found = [s for s in found if s != "sum"]
    if "filled" in asked:  # "fill the missing prices with the median": what to fill with, not a question
        found = [s for s in found if s != fill_stat(prompt)]
    return list(dict.fromkeys(found))


def _names(words: str, view: KernelView) -> list[str]:
    columns = {c for v in view.frames() for c in v.columns}
    # "the total of `units` in `sales`": a column of a frame the facts list, not a variable (it ran
    # `units.dtypes` and `sum(units)`, two NameErrors, and quoted both under the right answer)
    names = [n for n in _BACKTICKED.findall(words) if n in view.variables or n in view.left_out or n not in columns]
    common = [n for n in _COMMON_NAMES.findall(words) if n in view.variables or not view.variables]
    return list(dict.fromkeys(names + common))


def _frame_of_columns(words: str, view: KernelView) -> list[str]:
    """The listed frame whose columns the prompt names in backticks, not naming it in backticks ("the
    mean of `units` in sales"): the one the words name, else the only one having them; none when
    two frames have them and the words name neither (not a guess)."""
    asked = [n for n in _BACKTICKED.findall(words) if n not in view.variables]
    having = [v.name for v in view.frames() if asked and all(c in v.columns for c in asked)]
    named = [n for n in having if re.search(rf"\b{re.escape(n)}\b", words)]
    return named[:1] or (having if len(having) == 1 else [])


def _python_steps(prompt: str, view: KernelView, calls: Sequence[Call], loaded: list[str],
                  earlier: Sequence[Call]) -> tuple[list[Step], list[str]]:
    # File names are not variables: `data.csv` must not make `data` a name to inspect.
    words = _PATH.sub(" ", _FILE.sub(" ", prompt))
    names, show = _names(words, view), bool(_SHOW.search(words))
    by_column = [] if names else _frame_of_columns(words, view)
    if by_column:
        names, show = by_column, False
    elif not names and (frames.intents(prompt) or ASKS_FOR_A_PLOT.search(prompt)):
        names, show = _implicit_frame(words, view, loaded, earlier), False  # the facts already say what it is
    steps: list[Step] = []
    notes: list[str] = []
    frames_named = [n for n in names if (v := view.variables.get(n)) is not None and (v.columns or v.type in _FRAME_TYPES)]
    if JOIN.search(words) and len(frames_named) >= 2:  # "join `orders` with `customers`": one call, the two frames
        joined = join_steps(frame_of(frames_named[0], view, calls), frame_of(frames_named[1], view, calls), words)
        return ([], [joined]) if isinstance(joined, str) else (joined, [])
    for name in names:
        more, why_not = _variable_steps(name, prompt, view, calls, show)
        steps += more
        notes += why_not
    for expr in _ARITHMETIC.findall(prompt):
        if _SLASH_DATE.fullmatch(expr.strip()):  # "after 01/02/2024": a date, not 1 ÷ 2 ÷ 2024
            notes.append(f"I did not read {expr.strip()} as a date: with slashes it may be month first or day "
                         "first; write it as 2024-01-02 or Jan 2, 2024.")
            continue
        code = re.sub(r"(?<=[\d)\s])[x×](?=[\s\d(-])", "*", expr.strip()).replace("^", "**")
        code = re.sub(r"(?<![\d.])0+(?=\d)", "", code)  # Python rejects leading zeros (007)
        steps.append(Step("python", {"code": code}, f"compute {expr.strip()}", reads=partial(_computed, expr.strip())))
    return steps, notes


def _computed(expr: str, output: str) -> str | None:
    value = result_of(output)
    return f"{expr} = {value}" if value and "\n" not in value else None


def _named_for(tools: Mapping[str, Mapping[str, JSONValue]], p: Plan) -> Plan:
    """The plan with each call's argument named as the offered tool's schema names it."""
    keys = {"python": ("code", argument(tools.get("python") or {}, "code")),
            "read_file": ("path", argument(tools.get("read_file") or {}, "path"))}
    steps = []
    for s in p.steps:
        ours, theirs = keys.get(s.tool, ("", ""))
        steps.append(replace(s, input={theirs if k == ours else k: v for k, v in s.input.items()}))
    return Plan(steps, p.lead, p.code)


def _unique(steps: list[Step]) -> list[Step]:
    """Each call once (a load's shape and a shape asked for are one call)."""
    seen: set[str] = set()
    return [s for s in steps if not (s.key in seen or seen.add(s.key))]  # type: ignore[func-returns-value]


def _fix_with_looks(failure: Failure, view: KernelView, calls: Sequence[Call]) -> Plan:
    """``%agent fix``, after a look at the DataFrames whose columns the facts do not list."""
    looks = [frame_of(n, view, calls).look() for n in frames_to_look_at(failure, view)]
    if any(not frame_of(n, view, calls).looked for n in frames_to_look_at(failure, view)):
        return Plan(looks)
    fixed = fix_plan(failure, view_with_looks(view, calls))
    return Plan([*looks, *fixed.steps], fixed.lead, fixed.code)


def plan(prompt: str, tools: Mapping[str, Mapping[str, JSONValue]], view: KernelView | None = None,
         calls: Sequence[Call] = (), earlier: Sequence[Call] = ()) -> Plan:
    """What the brain will do for ``prompt``, given the tools offered, the kernel facts, the calls
    already made in this turn and those of the earlier turns."""
    view = view if view is not None else KernelView()
    if not quotes_a_failure(prompt) and "notebook_read" in tools:
        if notebook.ASKS_TO_FIX_A_CELL.search(prompt):
            return _named_for(tools, notebook.fix_cell_plan(prompt, calls, view, tools))
        if notebook.ASKS_TO_READ.search(prompt):
            return _named_for(tools, notebook.read_plan(calls))
    if "python" in tools:
        failure = failure_in(prompt, view)
        if failure is not None:
            return _named_for(tools, _fix_with_looks(failure, view, calls))
    files = list(dict.fromkeys(_FILE.findall(prompt)))
    tables = tables_to_load(prompt, files) if "python" in tools else []
    steps = [Step("read_file", {"path": f}, f"read {f}") for f in files if f not in tables and "read_file" in tools]
    # the user's variables a load must not replace: not those this session's loads made (a reload)
    taken = (set(view.variables) | view.left_out) - loaded_names([*earlier, *calls])
    for path in tables:
        steps += load_steps(prompt, path, len(tables), taken)
    notes: list[str] = []
    if "python" in tools:
        loaded = [variable_for(prompt, path, len(tables), taken) for path in tables]
        more, notes = _python_steps(prompt, view, calls, loaded, earlier)
        steps += more
    if not steps and notebook.ASKS_TO_READ.search(prompt):
        notes.append(NO_NOTEBOOK_TOOLS)
    if not steps and not notes and ABOUT_A_PLOT.search(prompt):
        notes += why_empty(view)
    return _named_for(tools, Plan(_unique(steps), " ".join(notes).strip()))


__all__ = ["plan"]
