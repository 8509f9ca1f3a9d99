"""The notebook's agent session: one :class:`~nbagent.agent.Agent` plus what the magics show of it.

``nbagent.session()`` returns the active one: ``turns_df()``, ``truncation_df()``, ``messages_df()``,
``cost``, ``rollback(turn)``, ``events``, ``saw(turn)``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Sequence

from ..agent import Agent, AgentConfig
from ..engine.events import Event
from ..engine.prompt import VariableInfo
from ..engine.query import SentRequest

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


def _summary(value: Any) -> str:
    shape = getattr(value, "shape", None)
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
    """One conversation in a notebook (``%%agent`` cells continue it; ``--new`` starts another)."""

    def __init__(self, agent: Agent, *, executor: Any = None) -> None:
        self.agent = agent
        self.executor = executor
        self.last_prompt: str | None = None
        self.views: list[Any] = []

    # --- what users ask of a session -----------------------------------------------------------
    @property
    def engine(self) -> Any:
        return self.agent.engine

    @property
    def events(self) -> list[Event]:
        """Every non-delta event of the session, in order."""
        return self.agent.events

    @property
    def records(self) -> list[Any]:
        return self.agent.records

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

        return messages_df(self.agent.history, self.engine.deleted_range)

    def rollback(self, turn: int) -> None:
        """Return to the end of ``turn`` (history, range, records and what the model saw)."""
        self.agent.rollback(turn)

    def saw(self, turn: int | None = None) -> list[SentRequest]:
        """The exact requests sent during ``turn`` (default: the latest turn)."""
        sent = self.engine.sent
        if not sent:
            return []
        turn = sent[-1].turn if turn is None else turn
        return [s for s in sent if s.turn == turn]

    def save(self, path: str | Path) -> Path:
        """Write the session's task folder to ``path`` (atomically, file by file)."""
        from ..engine.session import SessionStore

        target = Path(path)
        eng = self.engine
        old_store = eng.store
        eng.store = SessionStore(target)
        try:
            eng.context_manager.save(target)
            eng._persist()
            eng._persist_events()
        finally:
            if old_store is not None and Path(old_store.task_dir) != target:
                eng.store = old_store
        return target

    def __repr__(self) -> str:
        t = self.agent.totals
        return (f"<nbagent session: {self.agent.config.model} via {self.agent.provider.name}, "
                f"{self.engine.turn} turns, {t.requests} requests, ${t.cost_usd:.4f}>")


def copy_task_dir(src: str | Path, dst: str | Path) -> None:
    """Copy a task folder (used by ``%agent load`` to leave the original untouched)."""
    shutil.copytree(src, dst, dirs_exist_ok=True)


def config_with(config: AgentConfig, **changes: Any) -> AgentConfig:
    """``config`` with the non-None ``changes`` applied."""
    import dataclasses

    return dataclasses.replace(config, **{k: v for k, v in changes.items() if v is not None})


def latest(items: Sequence[Any]) -> Any:
    return items[-1] if items else None
