"""Removing nbagent's own cells from the live notebook: the front-end decides, the kernel asks.

The rule (docs/notebook-bridge.md): nbagent never deletes a cell it did not make in this kernel.
Every cell nbagent makes carries ``metadata.nbagent.origin`` = :data:`ORIGIN`, a random token of this
kernel process, so a received notebook's marks, or marks from before a restart, are never ours.
The kernel picks the cells it believes are its own and sends them with what it expects of each
(origin, session, turn, agent cell, kind); the front-end checks each cell at the moment it removes
it and keeps any that is not the agent's any more: a copy the user pasted or duplicated, a cell
edited or run again by the user, running or queued, a markdown cell, the cell running the command
(bridge protocol 2, docs/bridge-protocol.md).
What comes back is what really went, and what stayed and why: messages count from that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Collection, Iterable

from .bridge import Bridge, BridgeError, BridgeUnavailable
from .bridge_types import BridgeResult, CellJSON, Expect, RequestArgs
from .cells import MARK, ORIGIN
from .undone import undone_record

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject

__all__ = ["Expect", "MADE_KINDS", "ORIGIN", "REASONS", "Removal", "SAFE_DELETE_VERSION", "mark_of",
           "matches", "remove", "remove_sync", "turn_cells_after", "undone_turn_cells"]

SAFE_DELETE_VERSION = 2
"""The first bridge protocol whose front-end checks a removal itself; an older one is never asked."""
MADE_KINDS = ("code", "new")
"""Kinds of cells nbagent made itself: materialised code, and cells the model inserted with
notebook_edit. An agent cell ("agent") and a user's cell the model changed ("edit") are the user's."""

REASONS = {
    "edited": "edited by you", "copied": "copied by you", "re-run": "run again by you", "running": "running or queued",
    "protected": "the cell running this command", "not-code": "not a code cell", "missing": "already gone",
    "old-frontend": "the notebook's nbagent extension is older than the kernel's: update nbagent where "
                    "JupyterLab runs",
}
"""The front-end's reason codes in words; any other code means "not this turn's cell"."""


@dataclass
class Removal:
    """What a removal really did."""

    removed: list[str] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)
    """(cell id, reason code) of cells asked for that stayed."""
    changed: list[str] = field(default_factory=list)
    """Ids of the user's cells the model changed (``notebook_edit``) in the undone turns: they stay
    as the model left them (nbagent never rewrites a user's cell back), and the message says so."""
    changed_where: list[str] = field(default_factory=list)
    """Each of ``changed`` as the line names it: its place after the removal (0-based, as
    ``notebook_read`` numbers cells) and its first line, so the user can find it."""

    @property
    def count(self) -> int:
        return len(self.removed)

    def kept_reasons(self) -> list[str]:
        """Why cells stayed, in words, each once (a cell already gone is not worth a word)."""
        words: list[str] = []
        for _id, reason in self.kept:
            text = REASONS.get(reason, "not the agent's")
            if reason != "missing" and text not in words:
                words.append(text)
        return words

    def describe(self) -> str:
        """``2 agent cell(s) removed from the notebook; 1 kept (edited by you)``, or ``""``."""
        kept = [k for k in self.kept if k[1] != "missing"]
        parts = [f"{self.count} agent cell(s) removed from the notebook"] if self.count else []
        if kept:
            parts.append(f"{len(kept)} kept ({', '.join(self.kept_reasons())})")
        if self.changed:
            where = f": {', '.join(self.changed_where)}" if self.changed_where else ""
            parts.append(f"{len(self.changed)} of your cell(s) the agent changed in the undone turn(s) keep(s) "
                         f"its change{where} (nbagent never rewrites your cells: Undo in the notebook, or edit it back)")
        return "; ".join(parts)


def mark_of(cell: CellJSON) -> JSONObject | None:
    """nbagent's mark in a cell's metadata, where it holds one (a claim: check its origin)."""
    metadata = cell.get("metadata")  # a received file's cell may hold anything here
    mark = metadata.get(MARK) if isinstance(metadata, dict) else None
    return mark if isinstance(mark, dict) else None


def matches(cell: CellJSON, expect: Expect) -> bool:
    """Whether a cell as read carries what ``expect`` asks (the kernel's pre-selection; the
    front-end checks again, with the cell's state, when it removes it). A made cell the user turned
    into markdown is asked for too: the front-end keeps it ("not-code"), and the message says so."""
    mark = mark_of(cell)
    if mark is None:
        return False
    for key in ("origin", "session", "agent_cell"):
        if key in expect and mark.get(key) != expect.get(key):
            return False
    turn = mark.get("turn")
    if "turns" in expect and turn not in expect["turns"]:
        return False
    if "after_turn" in expect and not (isinstance(turn, int) and turn > expect["after_turn"]):
        return False
    return mark.get("kind") in expect.get("kinds", ["code"])


def _args(ids: Iterable[str], expect: Expect, protect: Iterable[str | None]) -> RequestArgs:
    return {"ids": list(ids), "expect": {"origin": ORIGIN, **expect}, "protect": [p for p in protect if p]}


def _result(reply: BridgeResult, ids: list[str]) -> Removal:
    removed = [str(i) for i in reply.get("removed") or []]
    kept = [(str(k.get("id")), str(k.get("reason"))) for k in reply.get("kept") or [] if isinstance(k, dict)]
    return Removal(removed=[i for i in removed if i in ids], kept=kept)


def _refused(bridge: Bridge, ids: list[str]) -> Removal | None:
    """Nothing is asked of a front-end that would not check (protocol 1 deleted whatever it was sent)."""
    if bridge.version < SAFE_DELETE_VERSION:
        return Removal(kept=[(i, "old-frontend") for i in ids])
    return None


async def remove(bridge: Bridge, ids: list[str], expect: Expect, protect: Iterable[str | None] = ()) -> Removal:
    """Ask the front-end to remove ``ids`` where each still is what ``expect`` says."""
    if not ids:
        return Removal()
    refused = _refused(bridge, ids)
    if refused is not None:
        return refused
    return _result(await bridge.request("delete", **_args(ids, expect, protect)), ids)


def remove_sync(bridge: Bridge, ids: list[str], expect: Expect, protect: Iterable[str | None] = ()) -> Removal:
    """The same from a line magic (synchronous, on the kernel's main thread)."""
    if not ids:
        return Removal()
    refused = _refused(bridge, ids)
    if refused is not None:
        return refused
    return _result(bridge.request_sync("delete", **_args(ids, expect, protect)), ids)


def turn_cells_after(bridge: Bridge, session: str, after_turn: int, protect: str | None,
                     undone_in: Collection[str] = (), redact: Callable[[str], str] = str) -> Removal:
    """``%agent rollback``: remove the cells ``session`` made in this kernel in turns after
    ``after_turn``; nothing (an empty :class:`Removal`) where no front-end answers.

    ``undone_in``: the sessions whose agent cells of those turns say they were undone (see
    :func:`_mark_undone`); the notebook is read once for both. ``redact``: the session's secrets,
    for the first lines of the user's cells the message names (the user may have typed a key there
    since the model changed the cell, and the message is the rollback cell's saved output)."""
    if not bridge.connected:
        return Removal()
    expect: Expect = {"origin": ORIGIN, "session": session, "after_turn": after_turn, "kinds": list(MADE_KINDS)}
    try:
        cells = bridge.request_sync("read").get("cells", [])
        _mark_undone(bridge, cells, undone_in, after_turn)
        ids = [str(c.get("id")) for c in cells if matches(c, expect)]
        removal = remove_sync(bridge, ids, expect, protect=[protect])
    except (BridgeUnavailable, BridgeError):
        return Removal()
    gone = set(removal.removed)
    left = [c for c in cells if str(c.get("id")) not in gone]
    for index, cell in enumerate(left):
        if _changed_after(mark_of(cell), session, after_turn):
            removal.changed.append(str(cell.get("id")))
            removal.changed_where.append(_named(index, cell, redact))
    return removal


def _mark_undone(bridge: Bridge, cells: list[CellJSON], sessions: Collection[str], after_turn: int) -> None:
    """Say in the agent cells of the undone turns that they were undone (``undone`` in nbagent's
    own mark, beside the signed record), so that a notebook sent without its ``.nbagent/``
    folder, whose record says so, does not replay an answer its author rolled back. The cells'
    text and outputs stay as they are; a cell run again writes a new mark. ``sessions``: the
    session rolled back and the records it was copied from (a rollback in a copy of a notebook
    undoes the turns its cells carry under the original's name)."""
    for cell in cells:
        mark = mark_of(cell)
        turn = mark.get("turn") if mark is not None else None
        if mark is None or mark.get("kind") != "agent" or mark.get("session") not in sessions \
                or not isinstance(turn, int) or turn <= after_turn or mark.get("undone") is True:
            continue
        try:
            # Signed into the record too (the mark alone could be taken out: see undone.undone_record)
            record = undone_record(mark.get("record"))
            signed = {"record": record} if record is not None else {}
            bridge.request_sync("replace", cell_id=str(cell.get("id")), metadata={MARK: {**mark, "undone": True, **signed}})
        except BridgeError:  # that cell is gone (a collaborator deleted it): the others, and the removal, go on
            continue
        except BridgeUnavailable:  # no answer: marking stops, the removal still tries (as before one read served both)
            return


async def undone_turn_cells(bridge: Bridge, agent_cell_id: str | None, turn: int) -> int:
    """How many code cells made for the agent cell ``agent_cell_id`` in its undone ``turn`` are in
    the notebook: an Undo after ``%agent rollback`` brings them back (a rollback keeps them too where
    an earlier kernel made them, or the user edited them), and Run All runs them although the agent
    cell replays nothing. 0 where no front-end holds the cells."""
    if agent_cell_id is None or not bridge.connected:
        return 0
    try:
        cells = (await bridge.request("read")).get("cells", [])
    except (BridgeUnavailable, BridgeError):
        return 0
    return sum(1 for c in cells if c.get("cell_type", "code") == "code" and (mark := mark_of(c)) is not None
               and mark.get("kind") == "code" and mark.get("agent_cell") == agent_cell_id
               and mark.get("turn") == turn)


def _named(index: int, cell: CellJSON, redact: Callable[[str], str] = str) -> str:
    """``cell [3] "df['price'].sum()"``: a cell's place and first non-empty line (at most 40
    characters, hidden characters shown as codes, secrets redacted before the cut), for a line the
    user reads."""
    from ..view.render import reveal_hidden

    source = cell.get("source", "")
    text = redact("".join(source) if isinstance(source, list) else str(source))
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    first = first if len(first) <= 40 else first[:39] + "…"
    return f'cell [{index}] "{reveal_hidden(first)[0]}"' if first else f"cell [{index}] (empty)"


def _changed_after(mark: JSONObject | None, session: str, after_turn: int) -> bool:
    """Whether a cell's mark says the model changed this user's cell (code or markdown) in this
    kernel's ``session`` after ``after_turn``."""
    if mark is None or mark.get("kind") != "edit" or mark.get("origin") != ORIGIN or mark.get("session") != session:
        return False
    turn = mark.get("turn")
    return isinstance(turn, int) and turn > after_turn
