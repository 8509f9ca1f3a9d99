"""The kernel context of a prompt: ranked, described, within a token budget.

The variables the prompt is about (:mod:`.rank`) are described in full first (a frame's schema,
an object's ``_repr_llm_``), then every other variable in one line, as long as the budget
(``SessionConfig.kernel_context_tokens``) lasts; what does not fit, or is not reached before the
build's deadline, is named in one "Left out" line so the model can ask the python tool for it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Iterator

from ...engine.api_facts.tokens import count_text_tokens
from ...engine.credentials.kernel_secrets import code_secrets, credential_variable_values
from ...engine.loop.facts import MAX_VARIABLES, FactsFocus, FactsSnapshot, NotebookState, VariableInfo
from . import figures
from .cells import recent_inputs, recent_outputs
from .guard import Deadline, DescribeFailed, bounded_call
from .prompted import prompted_secrets
from .protocol import described_with_content
from .rank import ranked

if TYPE_CHECKING:
    from collections.abc import Callable

    from IPython.core.interactiveshell import InteractiveShell
    from matplotlib.figure import Figure

    from ...engine.contracts.messages import ImageBlockParam, TextBlockParam

_HIDDEN_NAMES = {"In", "Out", "exit", "quit", "get_ipython", "open"}
_SKIPPED_TYPES = ("module", "function", "builtin_function_or_method", "type")
#: A full description may take at most this share of the budget (a huge schema is cut to it).
FULL_SHARE = 0.5
#: Names the "Left out" line lists (then a count).
LEFT_OUT_NAMES = 40
BUDGET_NOTE = "the kernel context's token budget"
#: How the model is told to get what was left out (a client of ``%agent serve`` has other tools).
ASK_MODEL = "ask the python tool"
#: Most names looked at in the namespace (a namespace of 100,000 names: the rest are counted).
MAX_NAMES = 20_000


@dataclass
class ContextRecord:
    """What one build told the model: names described in full, briefly, left out; images sent
    (labels) and left out (notes); its size in tokens and the seconds it took."""

    full: list[str] = field(default_factory=list)
    described: dict[str, str] = field(default_factory=dict)
    """Of ``full``, each value described by its own text (``_repr_llm_``, a figure's): that text, which a
    live turn fingerprints it by without describing it again."""
    outputs: list[int] = field(default_factory=list)
    """The execution counts whose ``Out[n]`` text the model was told (recent outputs)."""
    image_cells: dict[int, str] = field(default_factory=dict)
    """Cell number → digest of the images it displayed, for each cell whose image was sent."""
    brief: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tokens: int = 0
    seconds: float = 0.0
    interrupted: bool = False


_OUT_LINE = re.compile(r"Out\[(\d+)\]: ")
"""The head of a recent output's line (:func:`.cells.recent_outputs`)."""
_DISPLAYED = re.compile(r"Image displayed by In\[(\d+)\]")
"""The label of an image a cell displayed (:meth:`KernelContext._named_figures`)."""


def user_variables(shell: "InteractiveShell") -> Iterator[tuple[str, object]]:
    """The namespace's user variables, in its order (no modules, functions, classes, hidden names)."""
    ns = shell.user_ns
    hidden = getattr(shell, "user_ns_hidden", {})
    for name, value in list(ns.items())[:MAX_NAMES]:
        if name.startswith("_") or name in _HIDDEN_NAMES or name in hidden:
            continue
        if type(value).__name__ in _SKIPPED_TYPES:
            continue
        yield name, value


def _info(name: str, value: object, full: bool) -> tuple[VariableInfo, str | None]:
    """The variable's line (and detail), and its own text where it is described by it (see :attr:`ContextRecord.described`)."""
    d, text = described_with_content(value, full)
    detail = "\n".join("    " + line for line in d.detail)
    return VariableInfo(name, type(value).__name__, d.summary, detail), text


def _brief(info: VariableInfo) -> VariableInfo:
    """A full description reduced to its first line (what a variable the budget cannot hold in full gets)."""
    return VariableInfo(info.name, info.type, info.summary)


_TABLES = frozenset({"DataFrame", "Series"})
"""Types whose description's lines are columns and sample rows (pandas', polars')."""


def _cut_to(info: VariableInfo, tokens: int, ask: str = ASK_MODEL) -> VariableInfo:
    """``info`` with detail lines dropped from the end until it fits ``tokens`` (a note says so)."""
    lines = info.detail.split("\n")
    while lines and count_text_tokens("\n".join(lines)) > tokens:
        lines = lines[: max(len(lines) * 3 // 4, len(lines) - 50) - 1]
    cut = len(info.detail.split("\n")) - len(lines)
    # A table's lines are its columns and sample rows; an array's values, a _repr_llm_'s own text
    # were called "columns, sample rows" too (the model then asked an object for its columns).
    what = " (columns, sample rows)" if info.type in _TABLES else ""
    note = [f"    [... {cut} more lines of this description{what} left out for the budget: "
            f"{ask}]"] if cut else []
    return VariableInfo(info.name, info.type, info.summary, "\n".join([*lines, *note]))


class Builder:
    """One build: the running token count, and what was told and left out."""

    def __init__(self, budget: int, fixed_tokens: int, ask: str = ASK_MODEL) -> None:
        self.budget, self.used, self.ask = budget, fixed_tokens, ask
        self.told: list[VariableInfo] = []
        self.record = ContextRecord()
        self.deadline = Deadline()

    def add(self, info: VariableInfo, full: bool) -> bool:
        cost = count_text_tokens(info.detail) + count_text_tokens(info.summary) + 8
        if full and cost > self.budget * FULL_SHARE:
            info = _cut_to(info, int(self.budget * FULL_SHARE), self.ask)
            cost = count_text_tokens(info.detail) + count_text_tokens(info.summary) + 8
        if self.used + cost > self.budget or len(self.told) >= MAX_VARIABLES:
            self.over_budget()
            return False
        self.used += cost
        self.told.append(info)
        (self.record.full if full and info.detail else self.record.brief).append(info.name)
        return True

    def over_budget(self) -> None:
        if BUDGET_NOTE not in self.record.notes:
            self.record.notes.insert(0, BUDGET_NOTE)

    def drop_last(self) -> None:
        """Move the last variable told to the front of the left-out names."""
        self.over_budget()
        info = self.told.pop()
        for told in (self.record.full, self.record.brief):
            if info.name in told:
                told.remove(info.name)
        self.record.described.pop(info.name, None)
        self.record.left_out.insert(0, info.name)

    def describe_all(self, variables: dict[str, object], focus: list[str]) -> None:
        order = [*focus, *(n for n in variables if n not in set(focus))]
        focused = set(focus)
        for i, name in enumerate(order):
            if len(self.told) >= MAX_VARIABLES or self.budget - self.used < 12:  # full: the rest is named only
                self.record.left_out += order[i:]
                self.over_budget()
                return
            if self.deadline.passed():
                self.record.left_out += order[i:]
                self.record.notes.append(f"the build's {self.deadline.seconds:g} s deadline passed")
                return
            full = name in focused
            info, text = _info(name, variables[name], full)
            if self.add(info, full):
                if text is not None and name in self.record.full:
                    self.record.described[name] = text
            elif not (full and info.detail and self.add(_brief(info), False)):
                self.record.left_out.append(name)

    def left_out_line(self, more: int, listed: int = LEFT_OUT_NAMES) -> str:
        names = self.record.left_out
        if more:
            self.over_budget()
        if not names and not self.record.notes:
            return ""
        shown = ", ".join(names[:listed])
        rest = len(names) - listed + more
        why = "; ".join(self.record.notes)
        tail = f": {shown}" + (f" and {rest:,} more" if rest > 0 else "") if names or more else ""
        return f"Left out ({why}; {self.ask} for them){tail}"


class KernelContext:
    """A notebook session's ``kernel_facts``: called by the engine before each prompt with the
    prompt's :class:`~nbagent.engine.loop.facts.FactsFocus`; :attr:`last` is what it told."""

    def __init__(self, shell: "InteractiveShell", errors: object = None,
                 images: figures.DisplayedImages | None = None) -> None:
        # ``errors``: the shell's LastError watcher (its ``text``); not imported, session.py imports this module
        self.shell, self.errors, self.displayed = shell, errors, images
        self.last: ContextRecord | None = None
        self.on_built: Callable[[ContextRecord], None] | None = None
        """Called with each build's record (a live turn's watch of its inputs: :mod:`..document.cell_run`)."""

    def __call__(self) -> NotebookState:
        return self.focused(FactsFocus())

    def focused(self, focus: FactsFocus) -> NotebookState:
        return self._guarded(lambda: self._build(focus))

    def variables_only(self, focus: FactsFocus, ask: str) -> NotebookState:
        """The variables as :meth:`focused` describes them (recent cells still rank them), without the
        recent cells: the whole budget goes to variables, for a caller that gets only those (a
        client's ``list_variables``); ``ask`` says how that caller gets what was left out."""
        return self._guarded(lambda: self._build(focus, with_cells=False, ask=ask))

    def _guarded(self, build: "Callable[[], tuple[NotebookState, ContextRecord]]") -> NotebookState:
        from ..outcome import AgentInterrupted
        from ..user_code_interrupt import raise_on_sigint  # the executor's: one way for ■ to reach code on the main thread

        started = time.perf_counter()
        try:
            with raise_on_sigint():  # ■ reaches a slow description as it reaches the model's code
                state, record = build()
        except KeyboardInterrupt:  # outside the variables (a repr of Out, an image): nothing kept
            record = ContextRecord(notes=["interrupted"], interrupted=True)
        record.seconds = time.perf_counter() - started
        self.last = record
        if record.interrupted:  # the cell ends as an interrupted cell does, before anything is sent
            raise AgentInterrupted() from None
        if self.on_built is not None:
            self.on_built(record)
        return state

    def secrets(self) -> tuple[str, ...]:
        """The values of the namespace's variables named as credentials (``db_password = "…"``,
        ``_token``, ``config["db"]["password"]``): the engine redacts them from the run's requests
        (recent inputs, outputs, variables, tool results) as it does the environment's; and those the
        values of the kept recent outputs held when they were shown (:meth:`~.figures.DisplayedImages.secrets`);
        and the literals named as credentials in the last error's traceback, whose source lines
        quote your modules (``helpers.py``'s ``connect(password="…")``), as a cell's are."""
        found = credential_variable_values(list(islice(self.shell.user_ns.items(), MAX_NAMES)))
        found += prompted_secrets(self.shell.user_ns)  # ``getpass.getpass()`` left as a cell's value
        shown = self.displayed.secrets() if self.displayed is not None else ()
        error = getattr(self.errors, "text", None)
        quoted = code_secrets(error) if isinstance(error, str) else ()  # cached by the text: once per error
        return tuple(dict.fromkeys((*found, *shown, *quoted))) if shown or quoted else found

    def _cells(self, budget: int) -> tuple[list[str], str | None, list[str]]:
        """Recent inputs, the last error and recent outputs, taking at most half of ``budget``."""
        inputs, error = recent_inputs(self.shell), getattr(self.errors, "text", None)
        try:
            shown = self.displayed.shown if self.displayed is not None else None
            outputs = bounded_call(lambda: recent_outputs(self.shell.user_ns.get("Out", {}), shown))
        except DescribeFailed as exc:
            outputs = [f"(recent outputs left out: their repr {exc})"]
        while count_text_tokens(FactsSnapshot.of([], inputs, error, outputs).full_text()) > budget // 2 and (
                outputs or len(inputs) > 1):  # the oldest output goes first, then the oldest inputs
            outputs, inputs = (outputs[1:], inputs) if outputs else (outputs, inputs[1:])
        return inputs, error, outputs

    def _build(self, focus: FactsFocus, with_cells: bool = True,
               ask: str = ASK_MODEL) -> tuple[NotebookState, ContextRecord]:
        inputs, error, outputs = self._cells(focus.token_budget) if with_cells else ([], None, [])
        ranking = inputs if with_cells else recent_inputs(self.shell)  # what the last cells use comes first
        fixed = count_text_tokens(FactsSnapshot.of([], inputs, error, outputs).full_text())
        # Room kept for the "Left out" line: the trim below makes the rest fit exactly.
        builder = Builder(focus.token_budget - min(150, focus.token_budget // 10), fixed, ask)
        builder.record.outputs = [int(m.group(1)) for m in map(_OUT_LINE.match, outputs) if m]
        variables: dict[str, object] = {}
        try:
            variables = dict(user_variables(self.shell))
            builder.describe_all(variables, ranked(list(variables), focus.prompt, focus.agent_code, ranking))
        except KeyboardInterrupt:
            told = {v.name for v in builder.told}
            builder.record.left_out += [n for n in variables if n not in told and n not in builder.record.left_out]
            builder.record.notes.append("interrupted")
            builder.record.interrupted = True
        more = max(len(self.shell.user_ns) - MAX_NAMES, 0)
        images = [] if builder.record.interrupted or not with_cells else self._images(focus, builder.record)
        listed = LEFT_OUT_NAMES
        while True:  # the "Left out" line counts too: it names fewer, then the last told make room
            state = NotebookState(builder.told, inputs, error, outputs, builder.left_out_line(more, listed), images,
                                  tuple(builder.record.left_out))
            builder.record.tokens = count_text_tokens(FactsSnapshot.of(*state).full_text())
            if builder.record.tokens <= focus.token_budget or not builder.told:
                return state, builder.record
            if listed > 5:
                listed //= 2
            else:
                builder.drop_last()

    def _images(self, focus: FactsFocus, record: ContextRecord) -> "list[TextBlockParam | ImageBlockParam]":
        """Image blocks of what the prompt is about (see :mod:`.figures`): the cells it names
        (``Out[n]``/``In[n]``: their displayed images, or an ``Out[n]`` figure drawn), the figures
        it names by variable, else the newest cell's displayed images."""
        if not figures.about_images(focus.prompt):
            return []
        candidates = self._named_figures(focus.prompt)
        blocks: list[TextBlockParam | ImageBlockParam] = []
        for attempt, (label, png, named, texts) in enumerate(candidates):
            if len(record.images) >= figures.MAX_IMAGES or attempt >= 2 * figures.MAX_IMAGES:  # bounded time too
                record.notes.append(f"{label}: at most {figures.MAX_IMAGES} images per prompt")
                continue
            problem = figures.secret_problem(texts, focus.redact)  # pixels cannot be redacted
            if problem is not None:
                record.notes.append(f"{label} (left out: {problem})")
                continue
            try:
                fitted, why = bounded_call(lambda: figures.fitted_png(png), 2.0)  # noqa: B023 - called at once
            except DescribeFailed as exc:
                fitted, why = None, str(exc)
            if fitted is None:
                record.notes.append(f"{label} ({why})")
                continue
            image = figures.image_blocks(fitted, label)
            if hash(image[1]["source"]["data"]) in focus.images_seen and not named:
                continue  # the model still sees it in an earlier prompt
            blocks += image
            record.images.append(label)
            cell = _DISPLAYED.match(label)
            digest = self.displayed.digest_of(int(cell.group(1))) if cell and self.displayed is not None else None
            if cell and digest is not None:
                record.image_cells[int(cell.group(1))] = digest
        return blocks

    def _named_figures(self, prompt: str) -> list[tuple[str, bytes, bool, tuple[str, ...] | None]]:
        """(label, PNG, named explicitly, the texts it draws) for each image the prompt may be
        about, most specific first."""
        found: list[tuple[str, bytes, bool, tuple[str, ...] | None]] = []
        out = self.shell.user_ns.get("Out", {})
        for cell in figures.cell_refs(prompt)[: figures.MAX_IMAGES]:
            shown = self.displayed.of_cell(cell) if self.displayed is not None else []
            found += [(f"Image displayed by In[{cell}]", s.png, True, s.texts) for s in shown]
            value = out.get(cell) if isinstance(out, dict) else None
            if not shown and figures.is_figure(value):
                found += self._drawn(f"Out[{cell}] (a figure, drawn now)", value)
        named = [(n, v) for n in ranked(list(self.shell.user_ns)[:MAX_NAMES], prompt, (), ())
                 if figures.is_figure(v := self.shell.user_ns.get(n))]
        for name, fig in named[: figures.MAX_IMAGES]:  # each drawing takes time: no more than could be sent
            found += self._drawn(f"Figure `{name}` (drawn now)", fig)
        if not found and self.displayed is not None:
            found = [(f"Image displayed by In[{s.cell}]", s.png, False, s.texts) for s in self.displayed.of_cell(None)]
        return found

    @staticmethod
    def _drawn(label: str, fig: "Figure") -> list[tuple[str, bytes, bool, tuple[str, ...] | None]]:
        try:
            png = bounded_call(lambda: figures.figure_png(fig), 2.0)
        except DescribeFailed:
            return []
        return [(label, png, True, figures.drawn_texts(fig))]  # read once drawn: tick labels are made then


__all__ = ["ContextRecord", "KernelContext", "user_variables"]
