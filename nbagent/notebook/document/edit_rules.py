"""Which ``notebook_edit`` calls ask each time, even where notebook_edit is allowed (the ``allow``
list, "Allow always", ``--allow``), as a write to a protected file does; with no one to ask they
are refused. ``bypass`` runs them (see ``PermissionGate.protected_reason``)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Mapping

from .bridge_types import CellJSON
from .fetches import fetched_hosts
from .removal import MADE_KINDS, ORIGIN, mark_of

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject

IN_MEMORY_SESSION = "(in memory)"
"""What a session kept in memory (not recorded) names itself in its cells' marks: the same in every
kernel, so a mark naming it says nothing of who made the cell."""


def made_here(cell: CellJSON, session: str, known: bool = False) -> bool:
    """Whether ``cell`` as read is one the agent made in this session and nobody changed since: its
    mark names this session (a received notebook's claims another, or none), and the front-end's
    stamp (``made``, written when the cell was inserted) still matches the cell's id and text. The
    mark alone says "new" after the user typed their own code into the cell, and anyone can write
    a mark into a file: either alone let the allowance rewrite the user's cells unasked. ``known``:
    this tool made the cell itself (inserted it), the only proof for a session kept in memory."""
    mark = mark_of(cell)
    stamp = mark.get("made") if mark is not None else None
    if mark is None or not isinstance(stamp, dict) or mark.get("origin") != ORIGIN:
        return False
    if mark.get("session") != session or (session == IN_MEMORY_SESSION and not known):
        return False
    if mark.get("kind") == "edit":
        # Rewritten by the agent: its own only where the front-end stamped it whole at its insert
        # (the stamp names the cell's id; a user's cell the agent rewrote gets a text hash only).
        stamped_id = stamp.get("cell_id")
    elif mark.get("kind") in MADE_KINDS:
        stamped_id = stamp.get("cell_id", cell.get("id"))  # an older front-end's stamp has no id
    else:
        return False
    source = cell.get("source", "")
    text = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else str(source)
    return stamped_id == cell.get("id") and stamp.get("source_sha256") == hashlib.sha256(text.encode()).hexdigest()


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
    reasons = []
    # Not known as the agent's (``made`` lacks it): the user's. An unread cell is refused anyway, and
    # a read through another instance (an MCP client's reads share only the read hashes) is no pass.
    if action in ("replace", "move") and isinstance(cell_id, str) and not made.get(cell_id, False):
        verb = "rewrites" if action == "replace" else "moves"
        reasons.append(f"it {verb} a cell the agent did not make in this session (yours)")
    source, kind = tool_input.get("source"), tool_input.get("cell_type")
    hosts = fetched_hosts(source) if action in ("insert", "replace") and kind == "markdown" \
        and isinstance(source, str) else []
    if hosts:  # said too where the cell is yours: the card's one warning that the text can carry data out
        reasons.append(f"the Markdown cell loads from {', '.join(ascii(h)[1:-1] for h in hosts[:3])} when it "
                       "renders (an image's URL can carry data out)")
    return "; ".join(reasons) + ", so it asks each time" if reasons else None


def replaced_mark(cell: CellJSON, edit: JSONObject, own: bool) -> JSONObject:
    """The mark a ``notebook_edit`` replace writes on ``cell``: ``edit`` (``"kind": "edit"``, the user's
    cell the agent changed, which nbagent never removes) unless the cell is one the agent made here
    (``own``: :func:`made_here` as the model read it), which keeps the mark it was made with (its
    kind, turn, agent cell): a cell the model inserted, then rewrote, was marked "edit", so
    ``%agent rollback`` kept it and called it yours, and re-running its agent cell no longer
    replaced it (attacker pass 30)."""
    mark = mark_of(cell)
    if not own or mark is None or mark.get("origin") != ORIGIN or mark.get("kind") not in MADE_KINDS:
        return edit
    # ``made`` is the front-end's (it keeps its own). The call that wrote the text now is this one: a
    # replay compares a materialised cell with the code of the call named here, which it no longer holds.
    return {**{k: v for k, v in mark.items() if k != "made"}, "tool_use_id": edit.get("tool_use_id")}


__all__ = ["IN_MEMORY_SESSION", "asks_each_time", "made_here", "replaced_mark"]
