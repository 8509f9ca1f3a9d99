"""The notebook's agent session: one :class:`~nbagent.agent.Agent` plus what the magics show of it.

``nbagent.session()`` returns the active one: ``turns_df()``, ``truncation_df()``, ``messages_df()``,
``cost``, ``rollback(turn)``, ``events``, ``saw(turn)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..agent import Agent
from ..engine.events import Event
from ..engine.prompt import VariableInfo
from ..engine.session import SentRequest

_HIDDEN_NAMES = {"In", "Out", "exit", "quit", "get_ipython", "open"}


def kernel_facts_from(shell: Any) -> Any:
    """A ``kernel_facts`` callable: user variables (name, type, shape) and recent cell inputs."""

    def facts() -> tuple[list[VariableInfo], list[str]]:
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
        inputs = [s for s in list(ns.get("In", []))[-6:] if s and "%%agent" not in s and "run_agent_cell" not in s]
        return variables[:50], inputs[-5:]

    return facts


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
        self.view: Any = None
        """The view of the latest prompt (earlier ones are static output by then)."""

    # --- what users ask of a session -----------------------------------------------------------
    @property
    def events(self) -> list[Event]:
        """Every non-delta event of the session, in order."""
        return self.agent.events

    @property
    def records(self) -> list[Any]:
        return self.agent.records

    @property
    def turn(self) -> int:
        return self.agent.turn

    @property
    def cost(self) -> float:
        """Session cost in USD so far (sum of per-request costs)."""
        return self.agent.totals.cost_usd

    @property
    def totals(self) -> Any:
        return self.agent.totals

    def turns_df(self) -> Any:
        """One row per API request: tokens, cost, context size, deleted range, retries."""
        from .tables import turns_df

        return turns_df(self.agent.records)

    def truncation_df(self) -> Any:
        """The requests where the context manager changed what the model sees."""
        from .tables import truncation_df

        return truncation_df(self.agent.records)

    def messages_df(self) -> Any:
        """One row per history message: role, size, and whether the model still sees it."""
        from .tables import messages_df

        return messages_df(self.agent.history, self.agent.deleted_range)

    def rollback(self, turn: int) -> None:
        """Return to the end of ``turn`` (history, range, records and what the model saw)."""
        self.agent.rollback(turn)

    def saw(self, turn: int | None = None) -> list[SentRequest]:
        """The exact requests sent during ``turn`` (default: the latest turn)."""
        sent = self.agent.sent
        if not sent:
            return []
        turn = sent[-1].turn if turn is None else turn
        return [s for s in sent if s.turn == turn]

    def save(self, path: str | Path) -> Path:
        """Write a copy of the session's task folder to ``path`` (atomically, file by file)."""
        return self.agent.save(path)

    def __repr__(self) -> str:
        t = self.agent.totals
        return (f"<nbagent session: {self.agent.config.model} via {self.agent.provider.name}, "
                f"{self.agent.turn} turns, {t.requests} requests, ${t.cost_usd:.4f}>")
