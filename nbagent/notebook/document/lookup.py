"""The look for the record a fresh agent cell replays: the first half of the kernel's link to its
notebook (:class:`~.link.DocumentLink`), which decides the rest (the cells after it, live turns).

A fresh cell (no replay under way in this kernel) looks in the folder's records for one whose first
prompt is its own, of this notebook where the kernel knows which, and asked by this very cell where
the front-end sends ids; else its own metadata's record; or it says why it finds none.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

from .decisions import Replay, followed, latest_turn, retried_unrecorded, unfinished_rerun
from .embedded import NotebookRecord, executing_metadata, in_kernel, read_record
from .headless import executing_code, holds_cell, runs_again_in_place
from .recording import RecordKeeper
from .replay import ReplayCursor, ReplayIndex, choose_record, load_index

if TYPE_CHECKING:
    from ..session import NotebookSession


@dataclass(frozen=True)
class Lookup:
    """What a fresh agent cell's look for its record found: the replay, or why none (headless:
    several notebooks' records it cannot tell apart; a recorded answer a live kernel asks anew)."""

    replay: Replay | None = None
    ambiguous: tuple[str | None, ...] = ()
    shadowed: bool = False
    gone: tuple[str, ...] = ()
    unfinished: tuple[int, int] | None = None


class RecordLookup(RecordKeeper):
    """The look for a fresh agent cell's record (:meth:`_lookup`), and what a replay shown marks."""

    cursor: ReplayCursor | None
    went_live: bool
    live_by_command: bool
    loaded: NotebookSession | None
    _current: NotebookSession | None
    _session_at_replay: NotebookSession | None
    shown_cells: dict[str, tuple[str, int]]

    def notebook(self) -> str | None:
        """The notebook's file name, where the kernel knows it."""
        raise NotImplementedError

    def _shows(self, decision: Replay, cell_id: str | None) -> Replay:
        self._session_at_replay = self._current
        if cell_id is not None:
            self.shown_cells[cell_id] = (decision.session, decision.turn)
        return decision

    def _lookup(self, prompt: str, cell_id: str | None, carried: NotebookRecord | None) -> Lookup:
        """The record a fresh agent cell replays (its first prompt is this one), or why none does."""
        code = executing_code()
        holds = cache(lambda name: holds_cell(self.root, name, prompt, code))
        asked = self.went_live and not self.live_by_command
        found = choose_record(self.root, prompt, self.notebook(), cell_id, strict=asked, holds=holds)
        record, shadowed = found.index, None
        if record is None and asked and cell_id is None and in_kernel():
            # Headless, once a turn ran live here, a recorded prompt is a new question (rule 3):
            # asked, but not silently when the folder holds an answer this cell would have shown.
            shadowed = choose_record(self.root, prompt, self.notebook(), cell_id, strict=False, holds=holds).index
        if record is None and not asked and not found.ambiguous:
            record = self._cells_own_record(prompt, cell_id)
        if record is None:
            return Lookup(ambiguous=found.ambiguous, shadowed=shadowed is not None, gone=found.gone)
        if self.live_by_command:  # replaying again: the compacted session is left, as a loaded one is
            self.went_live = self.live_by_command = False
            self.loaded = self._current
        self.cursor = ReplayCursor(record)
        # The record's first turn, not 1: a turn stopped before it finished (■ at Allow) records
        # nothing, so a cell run again after it begins its record at turn 2.
        first = min(t.turn for t in record.turns)
        again = cell_id is None and runs_again_in_place(self.root, record.notebook, prompt)
        replay = Replay(record.session, latest_turn(carried, record, first, prompt, cell_id, one_prompt=again), prompt=prompt)
        mark = executing_metadata().get("nbagent")
        unfinished = unfinished_rerun(executing_metadata(), record, replay.turn, carried, cell_id)
        if unfinished is not None and not followed(record, replay.turn):  # asked again, as a cell whose only run was stopped is
            self.cursor = None
            return Lookup(unfinished=unfinished)
        if carried is None and (retried_unrecorded(mark, record, prompt, cell_id) or 0) > replay.turn:
            return Lookup()  # its stopped run was retried below: it says so (plan), never the replaced answer
        return Lookup(replay=self._shows(replace(replay, unfinished=unfinished and unfinished[0]), cell_id))

    def _cells_own_record(self, prompt: str, cell_id: str | None) -> ReplayIndex | None:
        """The record the executing cell's own metadata names (signed by this user), where this very
        cell asked ``prompt`` as its first turn. A cell whose code asks several prompts (notebook 02's
        loop) carries only its last prompt's record, so in a copy of the notebook (File > Duplicate:
        the record names the original, and only this notebook's records are looked up) its first
        prompt found nothing and every prompt asked the model, saying "its last run did not finish";
        a copy of a one-prompt cell replays through its metadata."""
        mark = read_record(executing_metadata(), None, cell_id)
        index = load_index(self.root, mark.session) if mark is not None and mark.mine else None
        if index is None or not index.turns:
            return None
        first = min(index.turns, key=lambda t: t.turn)
        return index if first.turn == 1 and first.asked_by(prompt, cell_id, strict=True) else None


__all__ = ["Lookup", "RecordLookup"]
