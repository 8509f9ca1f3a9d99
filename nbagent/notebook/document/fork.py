"""Forking a record: this kernel goes on in a copy of a recorded session, never in the record.

A record is written only by the notebook that made it (:meth:`DocumentLink.owns`). An edited
prompt or ``--live`` before the record's end forks it (the record of the notebook as it was stays
whole, the edited notebook gets its own); so does anything that would write another notebook's
record: a copy of the notebook (File > Duplicate) going live, rolling back, or loading the session
for ``%agent status``. The copy is made from the files on disk, without loading the record: loading
takes its writer's lock, which would keep the notebook that owns it (its kernel may be running)
from going live, and a rollback there would cut that notebook's turns.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...engine.disk.persist import atomic_write_bytes
from ...engine.disk.safe_open import read_regular
from ...engine.state.task_files import TASK_FILES
from .bridge import BridgeError, BridgeUnavailable, executing_cell_id
from .cells import MARK, ORIGIN
from .embedded import executing_metadata
from .link import session_name
from .replay import ReplayCursor, load_index, new_session_dir, sessions_dir
from .replayed_options import follow_fork, off_its_endpoint, session_settings

if TYPE_CHECKING:
    from ..magics_api import MagicsApi


def copy_session(folder: Path, target: Path) -> None:
    """Copy a task folder's files into ``target`` without taking its lock (another kernel may hold
    it). Files are read as a load reads them: regular files only, never through a symlink."""
    for name in TASK_FILES:
        data = read_regular(folder / name)
        if data is not None:
            atomic_write_bytes(target / name, data)


def fork(magics: "MagicsApi", turn: int, source: str | None = None, *, for_prompt: bool = True) -> None:
    """Continue from a copy of the record ``source`` (default: the current session's) rolled back
    to ``turn``; the copy's index names this notebook. The current session, when it is that
    record, is copied from memory; any other record from its folder, unloaded."""
    from ...engine.loop.rollback import rollback

    old, root = magics.current, magics.document.root
    name = source or (session_name(old.agent) if old is not None else None)
    assert name is not None
    magics._session_count += 1
    target = new_session_dir(root, magics._session_count)
    # The session in memory, unless it runs elsewhere than the record's cells named (loaded only to
    # show it, or filled into the code's session) and a prompt now needs that endpoint: then, as for
    # any record, from its folder with their settings.
    mine = old is not None and session_name(old.agent) == name and not (
        for_prompt and off_its_endpoint(magics.document, old, name))
    if old is not None and mine:
        old.agent.save(target)
    else:
        copy_session(sessions_dir(root) / name, target)
    # The copy goes on as the session it copies, with its settings and hooks (not the AgentMagics defaults).
    # Another record's copy takes the options its replayed cells set (the current one has them).
    replayed = {} if mine else session_settings(magics.document, name, live=for_prompt)
    magics.new_session(resume_from=target, for_prompt=for_prompt, keep_settings=mine, **replayed)
    new = magics.current
    assert new is not None
    rollback(new.agent.engine, turn)
    magics.document.forked(name, new.agent, turn)
    follow_fork(magics.document, name, session_name(new.agent) or name)


def adopt(magics: "MagicsApi") -> None:
    """A replaying kernel about to load another notebook's record (``%agent status``, ``history``):
    load a whole copy of it instead, as this notebook's own record, and replay on from the copy."""
    link = magics.document
    cursor = link.cursor
    assert cursor is not None
    fork(magics, max((t.turn for t in cursor.index.turns), default=0), cursor.index.session, for_prompt=False)
    current = magics.current
    name = session_name(current.agent) if current is not None else None
    index = load_index(link.root, name) if name is not None else None
    link.cursor = ReplayCursor(index, cursor.shown) if index is not None else None


def replayed_rollback(magics: "MagicsApi", turn: int) -> tuple[str, str]:
    """``%agent rollback`` in a kernel that is replaying (no turn ran live in it): what it says
    instead of rolling back, or "" to roll back, and what the rollback's line adds (a copy was
    rolled back; the undone turns' cells, made by an earlier kernel, stay).

    A kernel that replayed only from the cells' own metadata (no folder), or whose agent cells were
    all undone (the rollback cell's own earlier run undid them), has nothing to roll back: it says so
    rather than fail the cell and stop Run All.

    A rollback to a turn this kernel has not replayed past is already in the record: Run All
    reached a ``%agent rollback`` cell after the turns it kept, and a turn recorded after it is the
    answer of an agent cell Run All has not reached yet, which it must not cut. An earlier turn is rolled back in this
    notebook's own record, or in a copy of another notebook's (forked here first)."""
    link = magics.document
    cursor = link.cursor
    # A session made in a cell that asked nothing (notebook 04's first cell) has nothing to undo either.
    asked_nothing = magics.current is None or magics.current.turn == 0
    if not link.went_live and cursor is None and asked_nothing and link.from_notebook:
        # Replayed from the agent cells' own metadata only (a notebook received without its folder):
        # no conversation is here to roll back, and the cell must not stop Run All.
        return (f"nbagent: nothing rolled back: this kernel replayed {len(link.from_notebook)} turn(s) from the "
                "notebook's own records, and with no .nbagent/ folder here the conversation they belong to is "
                "not in this kernel (the answers stay as recorded; a new prompt starts a new session)."), ""
    if not link.went_live and cursor is None and asked_nothing and link.undone_shown:
        # Every agent cell above was undone (this rollback cell, run before, undid them): the record
        # holds nothing this kernel showed, so there is nothing to roll back and Run All goes on.
        return (f"nbagent: nothing rolled back: this kernel is replaying the record, and the {link.undone_shown} "
                "agent cell(s) it reached were undone already (each said so), so nothing is here to undo."), ""
    compacted = session_name(magics.current.agent) if link.live_by_command and magics.current is not None else None
    if compacted is not None and _ran_before(compacted, turn):
        # Live only by a compaction at the record's end in this Run All: this cell's rollback is in
        # the record from before it, and run again it undid that compaction (sent again next Run All).
        return (f"nbagent: nothing rolled back: this cell rolled the record back to turn {turn} when it ran, "
                "before the compaction above: the record keeps both. To undo the compaction, run "
                f"%agent rollback {turn} in a new cell."), ""
    if link.went_live or cursor is None:
        # A live turn after a replay goes on in the record: the turns it rolls back may include
        # replayed ones, whose cells an earlier kernel made and which stay (Run All runs them).
        current = magics.current
        name = session_name(current.agent) if link.went_live and current is not None else None
        return "", _left_line(_earlier_cells(magics, name, turn) if name is not None else 0)
    if turn >= cursor.shown:
        later = any(t.turn > cursor.shown for t in cursor.index.turns)  # said only where it holds one
        why = ("a later turn it holds is the answer of an agent cell Run All has not reached yet" if later
               else f"it holds no turn after turn {cursor.shown}")
        return (f"nbagent: nothing rolled back: this kernel is replaying the record and has shown {cursor.shown} "
                f"turn(s), so nothing after turn {turn} is here to undo (the record is unchanged: {why})."), ""
    if _ran_before(cursor.index.session, turn):
        return (f"nbagent: nothing rolled back: this cell rolled the record back to turn {turn} when it ran, and "
                f"the turn(s) after turn {turn} shown above were asked after that (an agent cell above was run "
                "again since): the record keeps them. To undo them now, run %agent rollback "
                f"{turn} in a new cell."), ""
    left = _left_line(_earlier_cells(magics, cursor.index.session, turn))
    if link.owns(cursor.index):
        return "", left
    fork(magics, cursor.shown, cursor.index.session, for_prompt=False)
    return "", copy_note(cursor.index.notebook) + left


def copy_note(name: str | None) -> str:
    """What a rollback in a copy of another notebook's record says of it. The name is the record's
    (a received index's, any text): shown as one marked line, as a record's model name is, so a
    newline in it draws no line of its own in the rollback cell's output."""
    from ..view.render import marked_line

    return f" (in a copy: the record of {marked_line(name) if name else 'the notebook that made it'} stays whole)"


def mark_rollback_cell(magics: "MagicsApi", session: str | None, turn: int) -> None:
    """After a live ``%agent rollback``: its cell says which record it rolled back to which turn
    (JupyterLab and Notebook 7 send the mark back with the cell). Under Restart & Run All the cell
    then knows its rollback is already in the record: the turns after it that a replay shows were
    asked after it ran (the user ran the undone agent cell again), and are not cut again."""
    cell_id, bridge = executing_cell_id(), magics.document.bridge
    if cell_id is None or session is None or not bridge.connected:
        return
    mark = {"origin": ORIGIN, "session": session, "turn": turn, "kind": "rollback"}
    try:
        bridge.request_sync("replace", cell_id=cell_id, metadata={MARK: mark})
    except (BridgeUnavailable, BridgeError):
        pass


def _ran_before(session: str, turn: int) -> bool:
    """Whether the running rollback cell already rolled ``session`` back to ``turn`` (its mark)."""
    mark = executing_metadata().get(MARK)
    return isinstance(mark, dict) and mark.get("kind") == "rollback" and mark.get("session") == session \
        and mark.get("turn") == turn


def _left_line(earlier: int) -> str:
    """What a rollback's line adds for the undone turns' cells an earlier kernel made (they stay)."""
    return f"; {earlier} agent cell(s) of the undone turns, made before this kernel started, left in place" \
        if earlier else ""


def _earlier_cells(magics: "MagicsApi", session: str, after_turn: int) -> int:
    """How many cells ``session`` made in turns after ``after_turn`` in an earlier kernel: a rollback
    never removes those (only cells made in this kernel: see .removal), so its line says they stay."""
    from .removal import MADE_KINDS, Expect, mark_of, matches

    bridge = magics.document.bridge
    if not bridge.connected:
        return 0
    try:
        cells = bridge.request_sync("read", lean=True).get("cells", [])  # marks only: no outputs needed
    except (BridgeUnavailable, BridgeError):
        return 0
    expect: Expect = {"session": session, "after_turn": after_turn, "kinds": list(MADE_KINDS)}
    return sum(1 for c in cells if matches(c, expect) and (mark_of(c) or {}).get("origin") != ORIGIN)


__all__ = ["adopt", "copy_session", "fork", "mark_rollback_cell", "replayed_rollback"]
