"""The notebook's agent session: one :class:`~nbagent.agent.Agent` plus what the magics show of it.

``nbagent.session()`` returns the active one: ``turns_df()``, ``truncation_df()``, ``messages_df()``,
``cost``, ``rollback(turn)``, ``events``, ``saw(turn)``.
"""

from __future__ import annotations

import reprlib
import traceback
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    # Annotations only: the kernel builds LastError at start (``%load_ext``), before any prompt
    # needs the engine; its loop, state and pydantic models load with the first session.
    from ..agent import Agent
    from ..engine.contracts.events import Event, RequestRecord
    from ..engine.loop.facts import NotebookState
    from ..engine.state.session import SentRequest

_HIDDEN_NAMES = {"In", "Out", "exit", "quit", "get_ipython", "open"}


def kernel_facts_from(shell: Any, errors: "LastError | None" = None) -> Any:
    """A ``kernel_facts`` callable: user variables (name, type, shape), recent cell inputs, the last
    error (cell number, exception, last frames; from ``errors``, one watcher per shell) and the text
    outputs of the last few cells."""
    errors = errors if errors is not None else LastError(shell)

    def facts() -> NotebookState:
        from ..engine.loop.facts import NotebookState, VariableInfo

        ns = shell.user_ns
        hidden = getattr(shell, "user_ns_hidden", {})
        variables: list[VariableInfo] = []
        for name, value in list(ns.items()):
            if name.startswith("_") or name in _HIDDEN_NAMES or name in hidden:
                continue
            if type(value).__name__ in ("module", "function", "builtin_function_or_method", "type"):
                continue
            try:
                summary = _summary(value)
            except Exception:  # a variable whose .shape or len() raises must not break the agent
                summary = ""
            variables.append(VariableInfo(name, type(value).__name__, summary))
        return NotebookState(variables[:50], _recent_inputs(shell), errors.text, _recent_outputs(ns.get("Out", {})))

    return facts


def _recent_inputs(shell: Any) -> list[str]:
    """The last five cells as the user typed them. ``In`` holds them translated (``%agent help``
    becomes ``get_ipython().run_line_magic('agent', 'help')``), which the model would then read and
    echo; the history's raw list runs parallel to it. Agent cells are recognised in either form."""
    parsed = list(shell.user_ns.get("In", []))
    raw = list(getattr(getattr(shell, "history_manager", None), "input_hist_raw", None) or [])
    if len(raw) != len(parsed):  # not IPython's pair of lists: the translated form is all there is
        raw = parsed
    pairs = list(zip(parsed, raw, strict=True))[-6:]
    return [r for p, r in pairs if p and not (_is_agent_cell(p) or _is_agent_cell(r))][-5:]


# Libraries whose ``.shape`` / ``.columns`` are cheap and side-effect free.
_ARRAY_LIBRARIES = frozenset({"numpy", "pandas", "polars", "pyarrow", "scipy", "xarray", "torch", "jax",
                              "tensorflow", "dask"})


def _shape_of(value: Any) -> Any:
    """``value.shape`` without running the user's code: these facts are gathered before every
    prompt, outside anything the interrupt reaches, so a user property that loops or sleeps would
    hang the agent before it starts. Only a plain attribute or an array library's is read."""
    import inspect

    try:
        static = inspect.getattr_static(value, "shape")
    except AttributeError:
        return None
    if not hasattr(static, "__get__"):
        return static
    root = (type(value).__module__ or "").split(".")[0]
    return getattr(value, "shape", None) if root in _ARRAY_LIBRARIES else None


def _is_agent_cell(source: str) -> bool:
    return "%%agent" in source or "run_agent_cell" in source or "run_agent_command" in source


class LastError:
    """The last cell that raised, as the model is told about it (agent cells are not user errors).

    Registered once per shell as a ``post_run_cell`` hook."""

    def __init__(self, shell: Any) -> None:
        self.text: str | None = None
        self.cell: int | None = None
        events = getattr(shell, "events", None)
        if events is not None:
            events.register("post_run_cell", self._after_cell)

    def _after_cell(self, result: Any) -> None:
        error = getattr(result, "error_in_exec", None)
        source = str(getattr(getattr(result, "info", None), "raw_cell", "") or "")
        if error is None or _is_agent_cell(source) or isinstance(error, KeyboardInterrupt):
            return
        frames = "".join(traceback.format_exception(type(error), error, error.__traceback__, limit=-3))
        self.cell = getattr(result, "execution_count", None)
        self.text = f"In[{self.cell}] raised {type(error).__name__}: {error}\n{source.strip()[:1_000]}\n{frames}"


def _recent_outputs(out: Any) -> list[str]:
    """``Out[n]: repr`` of the last few cells that had a value (bounded; no images)."""
    from ..engine.loop.facts import MAX_OUTPUT_CHARS, MAX_OUTPUTS

    lines = []
    for n in sorted(out)[-MAX_OUTPUTS:] if isinstance(out, dict) else []:
        try:
            text = _safe_repr(out[n])
        except Exception as exc:  # a value whose repr raises is described, never fatal
            text = f"<{type(out[n]).__name__}: repr failed: {exc}>"
        lines.append(f"Out[{n}]: {text[:MAX_OUTPUT_CHARS]}")
    return lines


@lru_cache(maxsize=1)
def _bounded_repr() -> reprlib.Repr:
    # Built on first use: its bound is the engine's, which is not imported at kernel start.
    from ..engine.loop.facts import MAX_OUTPUT_CHARS

    bounded = reprlib.Repr()  # keyword arguments need Python 3.12
    bounded.maxstring = bounded.maxother = MAX_OUTPUT_CHARS
    bounded.maxlist = bounded.maxdict = bounded.maxset = 50
    return bounded


def _safe_repr(value: Any) -> str:
    """A bounded repr that runs no user code: builtins through ``reprlib``, an array library's own
    (bounded by the library), anything else by its type (the model can ask the python tool)."""
    root = (type(value).__module__ or "").split(".")[0]
    if root == "builtins":
        return _bounded_repr().repr(value)
    if root in _ARRAY_LIBRARIES:
        return repr(value)
    return f"<{type(value).__module__}.{type(value).__qualname__} object>"


def _summary(value: Any) -> str:
    shape = _shape_of(value)
    if isinstance(shape, tuple):
        cols = getattr(value, "columns", None)
        col_text = f", columns {list(cols)[:12]}" if cols is not None else ""
        return f"shape {shape}{col_text}"
    if isinstance(value, (list, tuple, dict, set, str)):
        return f"len {len(value)}"
    if isinstance(value, (int, float, bool)):
        return repr(value)
    return ""


class NotebookSession:
    """One conversation in a notebook (``%%agent`` cells continue it; ``--new`` starts another).

    A thin reader over its :class:`~nbagent.agent.Agent`: everything it shows comes from the
    Agent's public API.
    """

    def __init__(self, agent: Agent, *, executor: Any = None) -> None:
        self.agent = agent
        self.executor = executor
        self.last_prompt: str | None = None
        self.last_outcome: str | None = None
        """How the last prompt's run ended: its ``Done.reason``, or ``interrupted`` (no Done)."""
        self.view: Any = None
        """The view of the latest prompt (earlier ones are static output by then)."""

    # --- what users ask of a session -----------------------------------------------------------
    @property
    def events(self) -> Sequence[Event]:
        """Every non-delta event of the session, in order."""
        return self.agent.events

    @property
    def records(self) -> Sequence[RequestRecord]:
        return self.agent.records

    @property
    def turn(self) -> int:
        return self.agent.turn

    @property
    def cost(self) -> float:
        """What the session has spent in USD: every request billed, rolled-back ones included
        (``totals.cost_usd`` is what the requests of the current history cost)."""
        return self.agent.totals.spent_usd

    @property
    def totals(self) -> Any:
        return self.agent.totals

    def turns_df(self) -> Any:
        """One row per API request: tokens, cost, context size, deleted range, retries."""
        from ..display.tables import turns_df

        return turns_df(self.agent.records)

    def truncation_df(self) -> Any:
        """The requests where the context manager changed what the model sees."""
        from ..display.tables import truncation_df

        return truncation_df(self.agent.records)

    def messages_df(self) -> Any:
        """One row per history message: role, size, and whether the model still sees it."""
        from ..display.tables import messages_df

        return messages_df(self.agent.history, self.agent.deleted_range)

    def stop(self) -> None:
        """Stop the run in progress, as ■ would (thread-safe): abort it, and interrupt the model's
        code if it runs on the kernel's main thread now (it blocks the loop that would see the abort)."""
        from .executor import interrupt_user_code

        self.agent.abort()
        if self.executor is not None:
            interrupt_user_code()

    def rollback(self, turn: int) -> None:
        """Return to the end of ``turn`` (history, range, records and what the model saw): the
        Agent's rollback, which is :meth:`QueryEngine.rollback`."""
        self.agent.rollback(turn)

    def saw(self, turn: int | None = None) -> list[SentRequest]:
        """The exact requests sent during ``turn`` (default: the latest turn)."""
        sent = self.agent.sent
        if not sent:
            return []
        turn = sent[-1].turn if turn is None else turn
        return [s for s in sent if s.turn == turn]

    def unsaved_requests(self, turn: int | None = None) -> list[int]:
        """Requests of ``turn`` (default: the latest turn that made one) whose content :meth:`saw`
        cannot show: made by an earlier nbagent version, which did not save it in the task folder.
        (The summary requests of a compaction are not the agent's: they are not counted.)"""
        from ..engine.loop.compaction import COMPACT_KEEP

        records = [r for r in self.agent.records if r.keep != COMPACT_KEEP]
        if not records:
            return []
        turn = records[-1].turn if turn is None else turn
        shown = {s.request for s in self.agent.sent}
        return [r.request for r in records if r.turn == turn and r.request not in shown]

    def save(self, path: str | Path) -> Path:
        """Write a copy of the session's task folder to ``path`` (atomically, file by file)."""
        return self.agent.save(path)

    def __repr__(self) -> str:
        t = self.agent.totals
        return (f"<nbagent session: {self.agent.config.model} via {self.agent.provider.name}, "
                f"{self.agent.turn} turns, {t.requests} requests, ${t.spent_usd:.4f} spent>")
