"""What an ``%%agent`` cell does with its notebook: replay or live, cells in, record out.

Called by :class:`~nbagent.notebook.magics.AgentMagics` (kept here so the magics stay about
parsing and rendering): :func:`plan` decides before anything runs, :func:`replay` shows a recorded
turn, :func:`materialiser` and :func:`after_run` put a live turn's code into cells.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from ..outcome import check_done
from .bridge import executing_cell_id
from .link import Replay, session_name
from .replay import new_session_dir, sessions_dir
from .shown import load_shown

if TYPE_CHECKING:
    from ...engine.contracts.events import Done
    from ..magics import AgentMagics
    from ..session import NotebookSession
    from .materialise import Materialiser


def plan(magics: "AgentMagics", prompt: str, args: Any) -> Replay | None:
    """A :class:`Replay` to show, or None to run live (continuing or forking the record first)."""
    link = magics.document
    link.connect()
    if not magics.record:
        return None
    decision = link.plan(prompt, live=bool(args.live), new=bool(args.new), current=magics.current)
    if isinstance(decision, Replay):
        return decision
    current = magics.current
    if decision.resume is not None and (current is None or session_name(current.agent) != decision.resume):
        magics.new_session(resume_from=sessions_dir(link.root) / decision.resume)
    if decision.fork_at is not None:
        fork(magics, decision.fork_at)
    return None


def fork(magics: "AgentMagics", turn: int) -> None:
    """Continue from a copy of the current record rolled back to ``turn``: the record of the
    notebook as it was stays whole, the edited notebook gets its own."""
    old = magics.current
    assert old is not None
    magics._session_count += 1
    target = new_session_dir(magics.document.root, magics._session_count)
    old.agent.save(target)
    magics.new_session(resume_from=target)
    new = magics.current
    assert new is not None
    new.rollback(turn)
    magics.document.forked(old.agent, new.agent, turn)


async def replay(magics: "AgentMagics", decision: Replay) -> None:
    """Show ``decision.turn`` of the record: no request, no key, and no session loaded (the
    signed transcript and how the run ended are enough; without them, rebuilt from the events).
    Only what this needs is imported: a replayed Run All does not load the engine or the SDK."""
    link = magics.document
    _show_replay_line(decision)
    shown = load_shown(link.root, decision.session, decision.turn)
    if shown is not None:
        from IPython.display import display

        display(shown.bundle, raw=True)
        link.replayed(decision.turn)
        check_done(shown)
        return
    done = _rebuild(magics, decision)  # not saved, or not signed by this user: rebuilt and sanitised
    link.replayed(decision.turn)
    check_done(done)


def _rebuild(magics: "AgentMagics", decision: Replay) -> "Done | None":
    """Show a recorded turn through the live view (text, cards, notices, table), from its events."""
    from ...engine.contracts.events import Done
    from .replay import turn_events

    link = magics.document
    current = magics.current
    if current is None or session_name(current.agent) != decision.session:
        cursor = link.cursor
        magics.new_session(resume_from=sessions_dir(link.root) / decision.session)
        link.cursor = cursor  # loading the record is part of replaying it
    sess = magics.current
    assert sess is not None
    events = turn_events(sess.agent.session, decision.turn)
    spent_before = sum((r.cost_usd or 0.0) for r in sess.agent.records if r.turn < decision.turn)
    cursor = link.cursor
    provider = cursor.index.provider if cursor is not None else None
    view = magics.new_view(sess, session_cost=spent_before, provider=provider)
    try:
        for event in events:
            view.handle(event)
    finally:
        view.finish()  # no live widgets first: a replay has nothing to wait for
    return next((e for e in reversed(events) if isinstance(e, Done)), None)


def _show_replay_line(decision: Replay) -> None:
    from IPython.display import display

    text = (f"⟲ replayed: session {decision.session}, turn {decision.turn} (no request sent). "
            "To ask the model again, add --live to the cell's first line.")
    display({"text/plain": text, "text/html": f'<div class="nbagent-replayed">{escape(text)}</div>'}, raw=True)


def materialiser(magics: "AgentMagics", sess: "NotebookSession", args: Any) -> "Materialiser":
    """The run's cell maker (inactive when cells are off: it then only notes nothing)."""
    from .materialise import Materialiser

    wanted = (magics.cells and not args.no_cells) or bool(args.insert_code) or magics.insert_code
    name = session_name(sess.agent) or "(in memory)"
    cells = Materialiser(magics.document.bridge, sess.executor if wanted else None, session=name,
                         turn=lambda: sess.agent.turn, agent_cell_id=executing_cell_id(),
                         redact=lambda outputs: sess.agent.engine.sanitizer().strings(outputs))
    if not wanted:
        cells.live = False
    return cells


async def after_run(magics: "AgentMagics", cells: "Materialiser", turn: int) -> None:
    """Tag the agent cell; without a bridge, the last code goes into one new cell."""
    await cells.mark_agent_cell(turn)
    notice = cells.fallback(magics.shell)
    link = magics.document
    if notice is not None and not link.told_no_bridge:
        link.told_no_bridge = True  # once per kernel: it says what the front-end cannot do
        print(notice)


def rolled_back(magics: "AgentMagics", sess: "NotebookSession", turn: int) -> int:
    """After ``%agent rollback``: the record's index and the document forget the later turns."""
    from .materialise import remove_turn_cells

    magics.document.rolled_back(sess.agent, turn)
    name = session_name(sess.agent)
    return remove_turn_cells(magics.document.bridge, name, turn) if name is not None else 0
