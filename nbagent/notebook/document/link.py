"""The kernel's link to its notebook: the bridge, replay decisions, and the record's index.

One per kernel (the magics own it). For each ``%%agent`` cell it answers one question before
anything runs: replay a recorded turn, or run live (and if live, whether the record must fork
first); after a live turn it writes the turn into the record's index (its writing half,
:class:`~.recording.RecordKeeper`). A fresh cell's look for its record is :class:`~.lookup.RecordLookup`.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from .bridge import HELLO_WAIT_S, Bridge, bridge, executing_cell_id, executing_client
from .decisions import (
    Live,
    Replay,
    ReplayedTurn,
    Undone,
    followed,
    is_kept,
    is_retried,
    latest_turn,
    retried_unrecorded,
    unfinished_rerun,
)
from .embedded import NotebookRecord, executing_metadata, in_kernel, not_this_cells, read_record, was_recorded
from .headless import executing_code, holds_cell, notebook_with_cell, runs_again_in_place
from .lookup import Lookup, RecordLookup
from .recording import session_name
from .replay import (
    ReplayCursor,
    ReplayIndex,
    has_records,
    load_index,
    recorded_turn,
    without_session,
)
from .unfinished import unfinished_session, unwritten_session

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject
    from ..session import NotebookSession


class DocumentLink(RecordLookup):
    """What a kernel knows of its notebook."""

    def __init__(self, root: Path | None = None, the_bridge: Bridge | None = None) -> None:
        self._root = root
        self.bridge = the_bridge if the_bridge is not None else bridge()
        self.cursor: ReplayCursor | None = None
        self._asked_hello = False
        self.told_no_bridge = False
        self.went_live = False
        """A turn ran live in this kernel: it is no longer re-running a recorded notebook, so a
        ``--new`` prompt is a new question, never someone else's record."""
        self.live_by_command = False
        """The kernel went live for a command only (``%agent compact`` at your record's end), no
        turn: rule 3 is about turns asked here, so a later ``--new`` cell still replays its record."""
        self.from_notebook: list[NotebookRecord] = []
        """Turns replayed from the agent cells' own metadata, in order (for ``%agent status``)."""
        self.last_replayed: ReplayedTurn | None = None
        """What ``%agent retry`` would retry in a kernel that is replaying (it has no session)."""
        self._asking = ""  # the prompt of the agent cell being planned, for last_replayed
        self.undone_shown = 0
        """Agent cells this replaying kernel said were undone (their turns are not in the record)."""
        self.loaded: NotebookSession | None = None
        """The session last loaded from the record a replay showed (``%agent status``, ``nbagent.session()``)."""
        self._current: NotebookSession | None = None  # the active session of the cell being planned
        self._session_at_replay: NotebookSession | None = None
        """The active session when this kernel last showed a replay (a session made after it is fresh)."""
        self.code_session: NotebookSession | None = None
        """The session the notebook's code made that a replay filled (:func:`.replayed.fill_stand_in`)."""
        self.shown_cells: dict[str, tuple[str, int]] = {}
        """Which recorded turn (session, turn) each agent cell showed in this replay, by cell id."""
        self.forked_from: dict[str, str] = {}
        """The record each session this kernel forked was copied from, by the fork's name."""
        self.replayed_allow: dict[str, tuple[str, ...]] = {}
        """The tools replayed cells allowed with ``--allow`` (for the rest of their session), by
        recorded session: a turn that goes on live from that session allows them again, as live."""
        self.copies_said: set[str] = set()
        """Cells (by id) that said they are a copy of another agent cell in this kernel: a copy asking
        several prompts (notebook 02's loop) reads the original's record before each one."""
        self.replayed_options: dict[str, dict[str, object]] = {}
        """The session settings replayed cells set (``--window``, ``--max-session-budget``, …), by
        recorded session (see :mod:`.replayed_options`)."""
        self.replayed_mine: dict[str, bool] = {}
        """Whether every cell replayed from a recorded session was your own record (signed with
        your key), by session: only such a record is continued by a command (``%agent compact``)."""
        self.replayed_line: dict[str, object] | None = None
        """The options line of the agent cell replayed last, as it reads: a replayed ``%agent retry``
        of it narrows the retried turn's signed options by it, as that cell's replay did."""

    def superseded(self, current: NotebookSession | None) -> bool:
        """Whether the replayed session, not ``current``, is the notebook's now: ``current`` was made
        in a cell (``magics.new_session()``) and asked nothing before this kernel replayed in its
        place, or was loaded for a replayed session the kernel has left since (a ``--new`` cell
        replayed another: a rollback must not undo the earlier one's turns)."""
        cursor = self.cursor
        if cursor is None or cursor.shown < 1 or current is None:
            return False
        if current.turn == 0 and current is self._session_at_replay:
            return True
        return current is self.loaded and session_name(current.agent) != cursor.index.session

    @property
    def session_at_replay(self) -> NotebookSession | None:
        """The active session when this kernel last showed a replay."""
        return self._session_at_replay

    @property
    def root(self) -> Path:
        """Where records live: the given folder, else the kernel's working directory (the notebook's)."""
        return self._root if self._root is not None else Path.cwd()

    def connect(self) -> bool:
        """Be connected if a front-end can answer. Only the first agent cell of each page whose
        front-end sends cell ids (JupyterLab, Notebook 7) waits, briefly, for the hello: a page
        reloaded, or the notebook closed and opened again, is a new page (a new client session)."""
        if executing_cell_id() is None:  # nbclient, a console: no front-end that holds cells
            return self.bridge.connected
        wait = 0.0 if self._asked_hello else HELLO_WAIT_S
        self._asked_hello = True
        return self.bridge.ensure(wait_s=wait, client=executing_client())

    def notebook(self) -> str | None:
        """The notebook's file name, from the front-end or Jupyter Server's ``JPY_SESSION_NAME``."""
        path = self.bridge.path if self.bridge.connected else None
        path = path or os.environ.get("JPY_SESSION_NAME")
        return Path(path).name if path else None

    def _recording_as(self) -> str | None:
        """The notebook name a live turn's record keeps: the front-end's, else (headless) the one
        notebook of the folder that has the executing cell, so a later headless run can tell this
        notebook's record from another's that starts with the same question."""
        return self.notebook() or notebook_with_cell(self.root, executing_code())

    # --- the decision --------------------------------------------------------------------------
    def plan(self, prompt: str, *, live: bool, new: bool, current: NotebookSession | None) -> Replay | Undone | Live:
        """Replay or live, for an agent cell with ``prompt`` (``current``: the active session).

        A replay needs no session: the record's index and signed transcripts are enough, so the
        Agent (and its SDK) loads only when a turn goes live, or when the notebook's code reads the
        session (:mod:`.replayed`). Replay belongs to re-running a
        recorded notebook: where the front-end sends cell ids, a turn replays only in the cell that
        asked it; once a turn ran live here, a ``--new`` prompt replays only in that cell (never
        without cell ids: a console or a script asking again is a new question)."""
        cursor, cell_id = self.cursor, executing_cell_id()
        self._current = current
        metadata = executing_metadata()
        self._asking = prompt
        carried = read_record(metadata, prompt, cell_id) if not live else None
        found = Lookup()
        if cursor is not None and not live and not new and cursor.next_matches(prompt, cell_id):
            found_next = self._next_turn(cursor, carried, metadata, prompt, cell_id)
            if not isinstance(found_next, Lookup):
                return found_next
            found = found_next
        # A session made in a cell (``magics.new_session()``) that asked nothing yet is as fresh as
        # none: Run All replays the record, or says it asks, as for the notebook that makes none.
        # So is one made after the last replay (notebook 05's hook session, after a replayed cell):
        # its cell starts from the records, or goes live in it, never in the replayed session.
        made_after = (cursor is not None and current is not None and current.turn == 0
                      and current is not self._session_at_replay)
        fresh = new or made_after or (cursor is None and (current is None or current.turn == 0))
        if not live and fresh:
            found = self._lookup(prompt, cell_id, carried)
            if found.replay is not None:
                return self._undone(carried, found.replay.session, found.replay.turn) or found.replay
        # Also a later cell (a replay above it): its first run stopped, redone below by %agent retry.
        if not live and carried is None and not new and not self.went_live and found.unfinished is None:
            retried = self._retried_below(metadata.get("nbagent"), prompt, cell_id)
            if retried is not None:
                return retried
        if not live and not new:
            decided = self._own_or_carried(carried, current, prompt, cell_id)
            if decided is not None:
                return decided
        # An undone turn stays undone (the user's rollback), however old its answer is.
        stale = carried.turn if carried is not None and not carried.undone and not live and not new \
            and self._stale(carried) else None
        if stale is not None:
            carried = None  # its answer predates one shown above it: asked again, below
        # A compaction at the record's end went live but asked no turn: a cell below it still shows
        # (or leaves undone) its own record, as it would without it, rather than ask it again.
        if carried is not None and not live and (new or not self.went_live or self.live_by_command):
            return self._carried(carried, prompt, cell_id)
        return self._live(prompt, metadata, cursor, carried, found, live=live, new=new, fresh=fresh,
                          made_after=made_after, stale=stale)

    def _next_turn(self, cursor: ReplayCursor, carried: NotebookRecord | None, metadata: JSONObject, prompt: str,
                   cell_id: str | None) -> Replay | Undone | Lookup:
        """The replay cursor's next turn, this cell's: replayed (saying so where its run again was
        stopped and later turns followed it), undone, or retried below; or, its run again stopped
        with nothing after it, a lookup saying why it asks instead."""
        turn = latest_turn(carried, cursor.index, cursor.shown + 1, prompt, cell_id,
                           one_prompt=cell_id is None and runs_again_in_place(self.root, cursor.index.notebook, prompt))
        undone = self._undone(carried, cursor.index.session, turn)
        mark = metadata.get("nbagent")
        retried = self._retried_below(mark, prompt, cell_id) if undone is None and carried is None \
            and (retried_unrecorded(mark, cursor.index, prompt, cell_id) or 0) > turn else None
        if retried is not None:  # run again, stopped, redone below by %agent retry: never the replaced answer
            return retried
        stopped = None if undone else unfinished_rerun(metadata, cursor.index, turn, carried, cell_id)
        if stopped is None or followed(cursor.index, turn):
            return undone or self._shows(Replay(cursor.index.session, turn, prompt=prompt,
                                                unfinished=stopped and stopped[0]), cell_id)
        return Lookup(unfinished=stopped)

    def _own_or_carried(self, carried: NotebookRecord | None, current: NotebookSession | None, prompt: str,
                        cell_id: str | None) -> Live | Undone | None:
        """The session the notebook's code made and asked with, continued live; or the cell's
        record of another notebook's turn that this notebook's own record left out (undone)."""
        cursor = self.cursor
        if (not self.went_live and current is not None and current.turn > 0 and current is not self.loaded
                and (cursor is None or session_name(current.agent) != cursor.index.session)):
            # Not a session this kernel loaded for a replay (``%agent status`` loads the replayed
            # one, which a later ``--new`` cell's replay leaves behind): the notebook's code made it
            # and asked the model with it, so the kernel is asking its own questions from here on.
            self.went_live, self.live_by_command, self.cursor = True, False, None
            return Live(own_session=current.turn)
        if carried is not None and self._outside_own_record(carried, prompt, cell_id):
            self.undone_shown += 1
            return Undone(carried.turn)
        return None

    def _carried(self, carried: NotebookRecord, prompt: str, cell_id: str | None) -> Replay | Undone:
        """The turn the cell's own metadata carries: replayed, or undone where the folder's record
        rolled it back (without the folder: where the cell's mark says a rollback undid it)."""
        index = load_index(self.root, carried.session) if carried.mine else None
        kept = index is None or is_kept(carried, index, prompt, cell_id)
        if not carried.undone and kept:
            return self._shows(self._from_notebook(carried, index, retried=is_retried(carried, index, prompt, cell_id)),
                               cell_id)
        # Undone by the user: not shown (stale), not asked (the rollback said so); the replay
        # goes on, so the cells after it find their turns (the cursor is left as it is). Where
        # only the unsigned mark says so and the folder still holds the turn, the line says the
        # answer may still be in the session's history (nothing is shown or asked either way).
        self.undone_shown += 1
        return Undone(carried.turn, in_history=carried.undone and not carried.undone_signed and index is not None
                      and kept)

    def _retried_below(self, mark: object, prompt: str, cell_id: str | None) -> Undone | None:
        """A cell whose run did not finish (interrupted) and that ``%agent retry`` redid below: its
        turn is the retry cell's to replay, so this one asks nothing, and the retry cell finds it."""
        session = mark.get("session") if isinstance(mark, dict) else None
        index = load_index(self.root, session) if isinstance(session, str) else None
        turn = retried_unrecorded(mark, index, prompt, cell_id)
        if index is None or turn is None:
            return None
        self.cursor = ReplayCursor(index, turn - 1)
        self.last_replayed = ReplayedTurn(prompt, turn, True)
        return Undone(turn, retried=True)

    def _undone(self, carried: NotebookRecord | None, session: str, turn: int) -> Undone | None:
        """Undone where the cell's mark says ``%agent rollback`` undid the very turn a record would
        replay: a rollback in a copy of a notebook forks, and the original's record, which a copy
        replays, still holds the turn (Restart & Run All of the copy showed the undone answer again)."""
        if carried is None or not carried.undone or (carried.session, carried.turn) != (session, turn):
            return None
        self.undone_shown += 1
        # The record this replay reads holds the turn: only a signed mark says a rollback took it out.
        return Undone(turn, in_history=carried.mine and not carried.undone_signed)

    def _live(self, prompt: str, metadata: JSONObject, cursor: ReplayCursor | None,
              carried: NotebookRecord | None, found: Lookup, *, live: bool, new: bool, fresh: bool,
              made_after: bool, stale: int | None) -> Live:
        """A live turn, with what its line needs to say why (never a silent live run)."""
        cell_id = executing_cell_id()
        self.cursor = None
        # Headless (a kernel sent no cell id: nbclient, papermill) or a cell marked as recorded; not
        # plain IPython in a terminal, which runs no notebook.
        headless = cell_id is None and in_kernel()
        no_record = not live and fresh and not (self.went_live and not self.live_by_command) \
            and (headless or was_recorded(metadata))
        replaying, self.went_live, self.live_by_command = not self.went_live, True, False
        # Why a recorded cell asks the model, for its line: its prompt was edited, it is a copy of
        # another agent cell, --live, or a turn above already went live (the conversation its
        # record followed is not this kernel's any more).
        other = not_this_cells(metadata, prompt, cell_id) if not live else None
        other, earlier = self._one_of_many(other, metadata, prompt, cell_id, cursor)
        if other is not None and other[0] == "copied" and cell_id is not None:
            # Said once: every prompt of one execution carries the same metadata (the original's record).
            other = None if cell_id in self.copies_said else other
            self.copies_said.add(cell_id)
        mine = carried if not live else read_record(metadata, prompt, cell_id)  # --live: not replayed
        own = (mine.session, mine.turn) if mine is not None else earlier
        if own is None and headless and not replaying and not live and not new:
            # No metadata headless: the folder's record of this cell, so its line says why it asks.
            code = executing_code()
            own = recorded_turn(self.root, prompt, cache(lambda name: holds_cell(self.root, name, prompt, code)))
        if cursor is None or new or made_after:
            alone = len({(c.session, c.turn) for c in self.from_notebook}) \
                if replaying and cursor is None and not (new or live or made_after) else 0
            return Live(no_record=no_record, ambiguous=found.ambiguous if no_record else (), other=other, carried=own,
                        unfinished=found.unfinished,
                        live=live, new_question=found.shadowed, notebook_only=alone,
                        records_here=no_record and headless and has_records(self.root),
                        without_session=no_record and headless and without_session(self.root, prompt),
                        unfinished_here=unfinished_session(self.root, prompt) if no_record and headless else None,
                        unwritten_here=unwritten_session(self.root) if no_record and headless else None,
                        gone=found.gone if no_record and headless else ())
        recorded = max((t.turn for t in cursor.index.turns), default=0)
        # Another notebook's record (this one is a copy) is never written: forked even at its end.
        fork = cursor.shown < recorded or not self.owns(cursor.index)
        return Live(resume=cursor.index.session, fork_at=cursor.shown if fork else None, other=other, carried=own,
                    live=live, stale=stale, past_record=headless and replaying and not live, unfinished=found.unfinished)

    def _one_of_many(self, other: tuple[str, int] | None, metadata: JSONObject, prompt: str, cell_id: str | None,
                     cursor: ReplayCursor | None) -> tuple[tuple[str, int] | None, tuple[str, int] | None]:
        """``(other, own)`` for a cell whose code asks several prompts (notebook 02's loop calls
        ``run_agent_cell`` twelve times): its metadata carries only its last prompt's record, so
        with one prompt edited, every prompt but the last said "edited since its recorded answer
        (turn 12)". A prompt the record's index has from this cell was not edited: its own turn
        (the line then says an earlier prompt asked the model); one it has not is the edited one,
        at the turn the replay was to show next (0: not known)."""
        code = executing_code()
        if other is None or other[0] != "edited" or code is None or code.lstrip().startswith("%%") \
                or code.strip() == prompt.strip():  # an agent cell, or chat mode's plain cell: one prompt
            return other, None
        mark = metadata.get("nbagent")
        record = mark.get("record") if isinstance(mark, dict) else None
        if isinstance(record, dict) and record.get("cell_id") != cell_id:  # a pasted copy of the loop cell
            return ("copied", other[1]), None
        session = record.get("session") if isinstance(record, dict) else None
        index = load_index(self.root, session) if isinstance(session, str) else None
        turns = [t.turn for t in index.turns if t.asked_by(prompt, cell_id, strict=True)] if index else []
        if index is not None and turns:
            return None, (index.session, max(turns))
        return ("edited", cursor.shown + 1 if cursor is not None else 0), None

    def _stale(self, carried: NotebookRecord) -> bool:
        """Whether the cell's own record is older than an answer this replay showed above it: a
        cell whose turn came before it in the carried turn's conversation showed another answer
        here (it was edited, or run again after this turn, and its new answer is the one shown),
        so this answer was computed from a conversation the notebook no longer holds."""
        if (self.went_live and not self.live_by_command) or not carried.mine:
            return False
        index = load_index(self.root, carried.session)
        if index is None:
            return False
        for before in index.turns:
            shown = self.shown_cells.get(before.cell_id) if before.cell_id is not None else None
            if before.turn < carried.turn and shown is not None and (
                    shown[0] != carried.session or shown[1] > carried.turn):
                return True
        return False

    def _outside_own_record(self, carried: NotebookRecord, prompt: str, cell_id: str | None) -> bool:
        """Whether the cell carries another notebook's turn that this notebook's own record, which
        the replay follows now, left out: a copy of a notebook that rolled that turn back (its
        record forked before it) — the original's answer is not the copy's any more."""
        cursor = self.cursor
        if cursor is None or carried.session == cursor.index.session or not self.owns(cursor.index):
            return False
        theirs = load_index(self.root, carried.session) if carried.mine else None
        if theirs is None or self.owns(theirs):
            return False  # this notebook's own other session (after %agent reset), or unknown
        return not any(t.asked_by(prompt, cell_id, strict=True) for t in cursor.index.turns)

    def owns(self, index: ReplayIndex) -> bool:
        """Whether the record is this notebook's own, which this kernel may continue and roll back:
        it names this notebook, and this kernel knows its notebook's name. A copy of a notebook
        (File > Duplicate) or a renamed one replays the original's record but never writes it; nor
        does a kernel that does not know which notebook it runs (nbclient, papermill: it cannot
        tell a copy from the original)."""
        name = self.notebook()
        return name is not None and index.notebook == name

    def _from_notebook(self, carried: NotebookRecord, index: ReplayIndex | None, *, retried: bool = False) -> Replay:
        """Replay a turn from the cell's own metadata; where its session is recorded in the folder
        too (a renamed notebook), the next cells follow that record."""
        cursor = self.cursor
        ahead = cursor is not None and index is not None and cursor.index.session == index.session \
            and cursor.shown >= carried.turn  # a later turn of this record was shown above: cells moved
        if not ahead:
            self.cursor = ReplayCursor(index, carried.turn - 1) if index is not None else None
        self.from_notebook.append(carried)
        return Replay(carried.session, carried.turn, notebook=carried, retried=retried)

    def replayed(self, turn: int, *, failed: bool = False) -> None:
        if self.cursor is not None:
            # Never back: a turn replayed below a later one (the user moved its cell down) leaves
            # the conversation where the later one ended, as both are shown above the next cell.
            self.cursor.shown = max(self.cursor.shown, turn)
        self.last_replayed = ReplayedTurn(self._asking, turn, failed)
