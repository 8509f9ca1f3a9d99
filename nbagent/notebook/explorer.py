"""Transitional: the explorer is :mod:`nbagent.explorer`. Delete this module once ``commands.py``
imports ``from ..explorer import explore`` and ``Agent`` has ``sent`` and ``context_window``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ..explorer import Explorer
from ..explorer import explore as _explore


def explore(session: Any = None, **kwargs: Any) -> Explorer:
    """:func:`nbagent.explorer.explore`, bridging an ``Agent`` that lacks the public surface yet."""
    agent = getattr(session, "agent", session)
    if agent is not None and not (hasattr(agent, "sent") and hasattr(agent, "context_window")):
        engine = agent.engine  # only until the Agent exposes these itself
        session = SimpleNamespace(history=agent.history, records=agent.records, sent=engine.sent,
                                  context_window=engine.context_window, provider=agent.provider)
    return _explore(session, **kwargs)


__all__ = ["explore"]
