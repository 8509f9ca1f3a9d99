"""The notebook's record as a live turn writes it: the index of each recorded session's prompts,
what each turn showed (signed, beside it), forks and rollbacks of the index, and the record an
agent cell carries in its own metadata.

:class:`RecordKeeper` is the writing half of :class:`~.link.DocumentLink` (which decides, for each
``%%agent`` cell, whether to replay or run live): it needs the notebook's folder and the name the
notebook records under, which the link knows.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from .allow_folder import recorded_here
from .bridge import executing_cell_id
from .earlier import Earlier, cut_short_spend, earlier, link_signature
from .embedded import make_record
from .inputs import TurnInputs
from .replay import RecordFolderError, ReplayIndex, load_index, save_index, sessions_dir
from .shown import Ended, copy_shown, save_shown

if TYPE_CHECKING:
    from ...agent import Agent
    from ...engine.contracts.json_types import JSONObject
    from ...engine.state.totals import Spent

__all__ = ["RecordKeeper", "session_name", "stopped", "turn_summary", "without_kernel_lines"]


def turn_summary(agent: Agent) -> JSONObject:
    """What ``%agent status`` says of a turn replayed from the notebook alone: its model, its
    requests and tokens, and what it cost (None when a request's price is unknown, never 0); and
    the window it ran with, which a replayed cell whose ``--window`` differs names."""
    records = [r for r in agent.records if r.turn == agent.turn]
    costs = [r.cost_usd for r in records]
    known = [c for c in costs if c is not None]
    return {"model": agent.config.model, "requests": len(records),
            "input_tokens": sum(r.usage.input_tokens for r in records),
            # The prompt's cached part: "input" alone read 0 for a turn that sent thousands of tokens.
            "cache_write_tokens": sum(r.usage.cache_creation_input_tokens for r in records),
            "cache_read_tokens": sum(r.usage.cache_read_input_tokens for r in records),
            "output_tokens": sum(r.usage.output_tokens for r in records),
            # As the live table's columns: a replayed turn without them read as one that never waited.
            "retries": sum(r.retries for r in records),
            "rate_limit_wait_s": round(sum(r.rate_limit_wait_s for r in records), 3),
            "cost_usd": None if len(known) < len(costs) else round(sum(known), 6),
            "context_window": int(agent.context_window)}


def without_kernel_lines(bundle: dict[str, str]) -> dict[str, str]:
    """The transcript as recorded: without the announcement that no key is set, which belongs to
    the kernel that ran live, not to the answer (a replay needs no key and must not repeat it)."""
    from ...display.html import esc
    from ...providers.anthropic import SIMULATED_NOTICE
    from ..view.render import STYLE

    plain, html = bundle.get("text/plain"), bundle.get("text/html")
    if not isinstance(plain, str) or not isinstance(html, str):
        return bundle
    line = f"ℹ {SIMULATED_NOTICE}"
    return {**bundle, "text/plain": "\n".join(ln for ln in plain.split("\n") if ln != line),
            "text/html": html.replace(f'<div style="{STYLE["muted"]}">{esc("ℹ")} {esc(SIMULATED_NOTICE)}</div>', "")}


def stopped(done: Ended | None) -> bool:
    """A turn stopped before it finished (■, Kernel > Interrupt or a restart while it ran, seen by
    the engine first: ``Done("aborted")``; Cancel during a retry wait too). It records nothing, as
    one whose interrupt reached the cell records nothing: Restart & Run All asks that cell again
    rather than replay the interruption and stop there."""
    return done is not None and done.reason == "aborted"


def session_name(agent: Agent) -> str | None:
    """The recorded session's name (its folder's), or None for a session kept in memory."""
    task_dir = agent.session.task_dir
    return Path(task_dir).name if task_dir is not None else None


class RecordKeeper:
    """Writes the record's index after live turns, forks and rollbacks (see the module docstring)."""

    forked_from: dict[str, str]
    """A fork's session name → the record it was copied from, in this kernel."""

    @property
    def root(self) -> Path:
        """The notebook's folder (the records are under its ``.nbagent/``)."""
        raise NotImplementedError

    def _recording_as(self) -> str | None:
        """The notebook's name as a new index records it (None: not known)."""
        raise NotImplementedError

    def recorded(self, agent: Agent, prompt: str, shown: dict[str, str] | None, done: Ended | None = None,
                 inputs: TurnInputs | None = None, options: JSONObject | None = None) -> JSONObject | None:
        """After a live turn: the turn's prompt goes into the record's index, and what it showed
        and depended on (signed) beside it, with the session options the cell's line gave
        (``options``). Returns the same record for the agent cell's metadata (:mod:`.embedded`; None
        where the front-end sends no cell id)."""
        name = session_name(agent)
        if name is None or not self._in_records(agent) or agent.turn < 1 or stopped(done):
            return None
        cell_id = executing_cell_id()
        index = load_index(self.root, name) or ReplayIndex(session=name, notebook=self._recording_as(),
                                                           provider=agent.provider.name)
        said = agent.engine.sanitizer().redact(prompt)  # a key typed into the cell is not saved again
        save_index(self.root, index.with_turn(agent.turn, prompt, cell_id, said=said))
        if shown is None:
            return None
        shown = without_kernel_lines(shown)
        options = recorded_here(self.root, options)  # its --allow holds in this folder only
        save_shown(self.root, name, agent.turn, prompt, shown, done, inputs, options or {})
        if cell_id is None:
            return None
        return make_record(session=name, turn=agent.turn, prompt=prompt, cell_id=cell_id, provider=index.provider,
                           bundle=shown, done=done, inputs=inputs, summary=turn_summary(agent), options=options)

    def linking(self, agent: Agent) -> None:
        """Before a live turn's first request: the session's index, naming this notebook and no turn
        yet, unless it has one. Written only at a turn's end, a session cut short by a restart (or a
        dead kernel) before any turn finished was this notebook's in no file, and the next kernel's
        ``%agent cost`` could not tell its spend from another notebook's (:func:`earlier_spend`).
        An index with no turn replays nothing. Not where the notebook cannot be named."""
        name = session_name(agent)
        notebook = self._recording_as() if name is not None and self._in_records(agent) else None
        if name is None or notebook is None or load_index(self.root, name) is not None:
            return
        with contextlib.suppress(RecordFolderError, OSError):  # the turn's end says why it records nothing
            save_index(self.root, ReplayIndex(session=name, notebook=notebook, provider=agent.provider.name,
                                              linked=link_signature(name, notebook)))

    def earlier_spend(self, agent: Agent | None) -> Spent | None:
        """What this notebook's sessions of earlier kernels that no turn finished in spent (None:
        none): a restart mid-prompt starts a new session, and money spent stays spent. ``agent``
        None: this kernel has no session yet (every such session is earlier)."""
        notebook = self._recording_as()
        current = session_name(agent) if agent is not None else None
        return cut_short_spend(self.root, notebook, current) if notebook is not None else None

    def earlier(self, agent: Agent | None) -> Earlier:
        """:meth:`earlier_spend`, how many such sessions are not added (their link not signed by this
        user's key: one written before nbagent signed it, a received folder's, or where the key cannot
        sign), and the replay indexes left out unread, from one reading of the folder's indexes.
        ``agent`` None: this kernel has no session yet."""
        notebook = self._recording_as()
        current = session_name(agent) if agent is not None else None
        return earlier(self.root, notebook, current) if notebook is not None else Earlier()

    def forked(self, old_name: str, new: Agent, turn: int) -> None:
        """A fork's index: the old record's turns up to ``turn``, under the new session's name and
        this notebook's. Headless, where the executing cell does not tell which notebook runs (a
        ``%agent context`` cell that several notebooks have), the copy names the notebook the
        replayed record names: a headless replay only follows a record of a notebook that has its cell."""
        new_name = session_name(new)
        if new_name is None:
            return
        self.forked_from[new_name] = old_name
        index = load_index(self.root, old_name)
        turns = tuple(t for t in index.turns if t.turn <= turn) if index is not None else ()
        notebook = self._recording_as() or (index.notebook if index is not None else None)
        save_index(self.root, ReplayIndex(session=new_name, notebook=notebook, turns=turns,
                                          provider=index.provider if index is not None else None))
        copy_shown(self.root, old_name, new_name, {t.turn: t.digest() for t in turns})

    def lineage(self, name: str) -> tuple[str, ...]:
        """``name`` and the records it was forked from in this kernel, nearest first: the agent
        cells of a copy carry the original's session name, and a rollback undoes them too."""
        names = [name]
        while names[-1] in self.forked_from and self.forked_from[names[-1]] not in names:
            names.append(self.forked_from[names[-1]])
        return tuple(names)

    def rolled_back(self, agent: Agent, turn: int) -> None:
        """``%agent rollback``: the record's index forgets the turns after ``turn``."""
        name = session_name(agent)
        index = load_index(self.root, name) if name is not None else None
        if index is not None:
            save_index(self.root, index.up_to(turn))

    def records(self, agent: Agent) -> bool:
        """Whether ``agent``'s turns are recorded for replay (its folder is under the records)."""
        return self._in_records(agent)

    def _in_records(self, agent: Agent) -> bool:
        task_dir = agent.session.task_dir
        return task_dir is not None and Path(task_dir).resolve().parent == sessions_dir(self.root).resolve()
