"""Which ``notebook_edit`` calls ask each time, even where notebook_edit is allowed (the ``allow``
list, "Allow always", ``--allow``), as a write to a protected file does; with no one to ask they
are refused. ``bypass`` runs them (see ``PermissionGate.protected_reason``)."""

from __future__ import annotations

from typing import Mapping

from .fetches import fetched_hosts


def asks_each_time(tool_input: Mapping[str, object], made: Mapping[str, bool]) -> str | None:
    """Why this edit asks each time (None: the allowance covers it). ``made``: cell id → whether
    the cell, as the model last read it, is one the agent made in this kernel.

    - A replace or move of a cell the agent did not make (yours, or a received notebook's): the
      notebook is yours, and an allowance given for the agent's own cells (or for one fix) must not
      let text the model read rewrite or reorder your cells unasked.
    - A Markdown cell that loads from the web when it renders: the agent view shows the model's
      images as links so that no reply makes the page send data in a URL; a cell JupyterLab renders
      would, on the next open too."""
    action, cell_id = tool_input.get("action"), tool_input.get("cell_id")
    if action in ("replace", "move") and isinstance(cell_id, str) and cell_id in made and not made[cell_id]:
        verb = "rewrites" if action == "replace" else "moves"
        return f"it {verb} a cell the agent did not make in this session (yours), so it asks each time"
    source, kind = tool_input.get("source"), tool_input.get("cell_type")
    if action not in ("insert", "replace") or kind != "markdown" or not isinstance(source, str):
        return None
    hosts = fetched_hosts(source)
    if not hosts:
        return None
    return (f"the Markdown cell loads from {', '.join(ascii(h)[1:-1] for h in hosts[:3])} when it renders "
            "(an image's URL can carry data out), so it asks each time")


__all__ = ["asks_each_time"]
