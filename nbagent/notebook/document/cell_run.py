"""What an ``%%agent`` cell does with its notebook: replay or live, cells in, record out.

Called by :class:`~nbagent.notebook.magics.AgentMagics` (kept here so the magics stay about
parsing and rendering): :func:`plan` decides before anything runs, :func:`replay` shows a recorded
turn, :func:`materialiser` and :func:`after_run` put a live turn's code into cells.
"""

from __future__ import annotations

from argparse import Namespace
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Iterator

from ..outcome import AgentCellError, check_done, fails
from . import replay_lines as said
from .bridge import executing_cell_id, executing_request
from .decisions import Live, Replay, Undone
from .fork import fork
from .link import session_name
from .live_lines import UNSAFE_RECORD_LINE, live_line, show_line
from .page import show_on_reloaded_page
from .replay import record_dir_problem, sessions_dir
from .replayed import fill_stand_in, keep_code_session, resume_live, take_options
from .replayed_options import grant_allow, session_settings
from .settings_changed import settings_changed
from .shown import Shown, as_displayed, load_shown, recorded_inputs

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...engine.contracts.events import Done
    from ...engine.contracts.json_types import JSONObject
    from ..executor import ExecutionRecord
    from ..magics_api import MagicsApi
    from ..outcome import Ending
    from ..session import NotebookSession
    from ..view import AgentView
    from .inputs import TurnWatch
    from .materialise import Materialiser
    from .removal import Removal


def plan(magics: "MagicsApi", prompt: str, args: Namespace) -> Replay | Undone | None:
    """A :class:`Replay` to show, an :class:`Undone` turn to say was undone, or None to run live
    (continuing or forking the record first)."""
    link = magics.document
    link.connect()
    if not magics.record:
        return None
    problem = record_dir_problem(link.root)
    if problem is not None:  # nothing replayed from it, nor written through it: a live turn, unrecorded
        show_line(UNSAFE_RECORD_LINE.format(problem=problem), "nbagent-no-record")
        return None
    decision = link.plan(prompt, live=bool(args.live), new=bool(args.new), current=magics.current)
    if isinstance(decision, Undone):
        return decision
    if isinstance(decision, Replay) and record_dir_problem(link.root, decision.session) is not None:
        # its folder (or its shown turns') points elsewhere: nothing is read through it, nor written
        show_line(UNSAFE_RECORD_LINE.format(problem=record_dir_problem(link.root, decision.session)),
                   "nbagent-no-record")
        return None
    if isinstance(decision, Replay):
        checked = _checked(magics, decision, args)
        if checked is not None:
            take_options(magics, args, prompt, checked)  # its --window etc., for a later live prompt, as live
            return checked
        decision = link.plan(prompt, live=True, new=bool(args.new), current=magics.current)
        decision = replace(decision, carried=None) if isinstance(decision, Live) else decision  # said why
    assert isinstance(decision, Live)  # a live plan never replays
    current = magics.current
    problem = record_dir_problem(link.root, decision.resume) if decision.resume is not None else None
    if problem is not None:  # the record's own folder points elsewhere: not continued, not written to
        show_line(UNSAFE_RECORD_LINE.format(problem=problem), "nbagent-no-record")
        return None
    if decision.fork_at is not None:  # from the record's folder, never loaded: see .fork
        fork(magics, decision.fork_at, decision.resume)
    elif decision.resume is not None:
        resume_live(magics, decision.resume)
    keep_code_session(magics, current)  # the code's session (02's window, its allow) goes on, as live
    if decision.resume is not None and magics.current is not None:
        grant_allow(link, decision.resume, magics.current.agent)  # the replayed cells' --allow, as live
    line = live_line(decision, session_name(current.agent) if current is not None else None,
                     cell_ids=executing_cell_id() is not None)
    if line is not None:  # before the session exists: no request has gone out
        show_line(*line)
    return None


class ReplayInputsChanged(AgentCellError):
    """A replayed agent cell whose inputs changed, under the ``fail`` policy (for CI)."""


def _checked(magics: "MagicsApi", decision: Replay, args: Namespace) -> Replay | None:
    """The replay as it may go ahead (with the line naming what changed, under ``warn``), or None
    to ask the model again (``live``); raises :class:`ReplayInputsChanged` under ``fail``."""
    from .input_changes import changed_line, changes, secrets_at_hand

    root = magics.document.root
    carried = decision.notebook
    shown: Shown | None
    if carried is not None:
        shown = Shown(carried.bundle, carried.reason, carried.error, carried.inputs, carried.options if carried.mine else {})
        inputs = carried.inputs
    else:
        shown = load_shown(root, decision.session, decision.turn, decision.prompt)
        inputs = shown.inputs if shown is not None else recorded_inputs(root, decision.session, decision.turn)
    shell = magics.shell
    redact = secrets_at_hand(magics)
    changed = changes(inputs, shell, root, magics.cell_log, magics.displayed, redact=redact) \
        if inputs is not None and shell is not None else []
    changed += settings_changed(magics, decision)
    if inputs is not None and (inputs.made or inputs.read_outputs or inputs.read_sources):
        from .read_outputs import notebook_changes

        log = magics.cell_log
        changed += notebook_changes(magics.document.bridge, root, inputs, decision.session, decision.turn, redact,
                                    ran=log.latest if log is not None else {})
    if not changed:
        return replace(decision, shown=shown)
    line = changed_line(changed)
    policy = args.if_changed or magics.replay_if_changed
    if policy == "fail":
        raise ReplayInputsChanged(f"{line} (replay policy 'fail'): run the cell with --live to ask the model "
                                  "again")
    if policy == "live":
        show_line(f"⚠ {line}: asking the model again (replay policy 'live').", "nbagent-changed")
        return None
    return replace(decision, shown=shown, changed=f"⚠ {line}: add --live to ask again.")


@contextmanager
def watch_turn(magics: "MagicsApi", sess: "NotebookSession") -> "Iterator[TurnWatch | None]":
    """Record what a live turn's answer depends on (see :mod:`.inputs`); yields None when the
    session is not recorded for replay."""
    from .inputs import TurnWatch

    if not magics.document.records(sess.agent) or sess.executor is None or magics.shell is None:
        yield None
        return
    watch = TurnWatch(magics.shell, magics.document.root, magics.cell_log,
                      redact=sess.agent.engine.sanitizer().redact)
    sess.executor.before_execute = watch.before_code
    sess.executor.after_execute = watch.after_code
    # What the model is told of the kernel is built before the turn's first request, so before any
    # of its code: the variables described there in full, and the outputs quoted, are fingerprinted then.
    facts = getattr(getattr(sess.agent, "engine", None), "kernel_facts", None)
    if facts is not None and hasattr(facts, "on_built"):
        facts.on_built = lambda record: watch.told(record.full, record.outputs, record.image_cells, record.described)
    try:
        with watch:
            yield watch
    finally:
        sess.executor.before_execute = None
        sess.executor.after_execute = None
        if facts is not None and hasattr(facts, "on_built"):
            facts.on_built = None


async def replay(magics: "MagicsApi", decision: Replay | Undone) -> None:
    """Show ``decision.turn`` of the record: no request, no key, and no session loaded (the
    signed transcript and how the run ended are enough; without them, rebuilt from the events).
    Only what this needs is imported: a replayed Run All does not load the engine or the SDK,
    except once where the notebook's code made a session before its agent cells (it is given the
    replayed record: :func:`.replayed.fill_stand_in`). An :class:`Undone` turn shows one line."""
    if isinstance(decision, Undone) and decision.retried:
        show_line(said.RETRIED_UNFINISHED_LINE, "nbagent-retried")
        return
    if isinstance(decision, Undone):
        line = said.UNDONE_BY_MARK_LINE.format(before=decision.turn - 1) if decision.in_history else said.ROLLED_BACK_LINE
        show_line(line, "nbagent-no-record")
        from .removal import undone_turn_cells

        left = await undone_turn_cells(magics.document.bridge, executing_cell_id(), decision.turn)
        if left:  # Run All runs them: the turn is undone in the record, not in the kernel
            show_line(said.UNDONE_CELLS_LINE.format(count=left), "nbagent-no-record")
        return
    _show_replay_line(decision)
    if decision.unfinished is not None:
        show_line(said.UNFINISHED_SHOWN_LINE.format(turn=decision.unfinished), "nbagent-unfinished")
    if decision.notebook is not None and not decision.notebook.mine:
        show_line(said.RECEIVED_LINE, "nbagent-received")
    elif decision.notebook is None and decision.shown is None:  # the folder's transcript is missing or forged
        show_line(said.UNSIGNED_LINE, "nbagent-received")
    if decision.changed is not None:
        show_line(decision.changed, "nbagent-changed")
    shown = decision.shown
    if shown is not None:
        from IPython.display import display

        display(as_displayed(shown.bundle), raw=True)
        _ended(magics, decision, shown)
        return
    done = _rebuild(magics, decision)  # not saved, or not signed by this user: rebuilt and sanitised
    _ended(magics, decision, done)


def replayed_output(magics: "MagicsApi", decision: Replay | Undone, *, structured: bool) -> object:
    """What ``--out`` bound live (:attr:`Agent.last_output`), from the replayed turn's task folder:
    the structured answer (``Done.output``, JSON data) or the text of the turn's last answer; None
    where there is none (an undone turn, no folder or an unreadable one, a turn that did not end)."""
    if isinstance(decision, Undone):
        return None
    from ...engine.contracts.errors import CorruptFileError
    from ...engine.contracts.events import Done
    from ...engine.contracts.messages import text_of
    from ...engine.state.folder_load import load_folder
    from .replay_events import assistant_messages, last_run_events

    folder = sessions_dir(magics.document.root) / decision.session
    if not folder.is_dir():
        return None
    try:
        snapshot = load_folder(folder)
    except (CorruptFileError, OSError, ValueError):
        return None
    done = next((e for e in reversed(last_run_events(snapshot.events, decision.turn)) if isinstance(e, Done)), None)
    if done is None or structured:
        return done.output if done is not None else None
    answers = assistant_messages(snapshot, decision.turn)
    return text_of(answers[-1]) if answers else None


def bind_replayed(magics: "MagicsApi", name: str, decision: Replay | Undone, output: object) -> None:
    """``--out NAME`` of a replayed cell: the recorded answer (structured, validated again by the
    cell's ``--schema`` ``output``; else its text), so Run All's next cells read ``NAME`` as they
    did live; nothing recorded (a turn undone by rollback, an unreadable folder) leaves ``NAME`` as
    it was and says so."""
    data = replayed_output(magics, decision, structured=output is not None)
    if data is None:
        print(f"nbagent: {name} is not set by a replay (no answer recorded for this turn); "
              "add --live to ask again.")
        return
    from ...engine.loop.structured import OutputSpec

    assert magics.shell is not None
    magics.shell.user_ns[name] = OutputSpec.of(output).parse(data) if output is not None else data


def _ended(magics: "MagicsApi", decision: Replay, ending: "Ending | None") -> None:
    """A replayed turn that failed fails its cell again, so Run All stops where it stopped; but not
    one that ``%agent retry`` redid below: Run All goes on to the retry, as the user did."""
    failed = fails(ending)
    from ...engine.contracts.errors import NbAgentError

    magics.document.replayed(decision.turn, failed=failed)
    try:
        fill_stand_in(magics)  # the session the notebook's code made and holds reads the replayed one
    except (NbAgentError, OSError, ValueError) as exc:  # shown already: a record that cannot load fails no cell
        show_line(STAND_IN_LINE.format(error=f"{type(exc).__name__}: {exc}"), "nbagent-no-record")
    if failed and decision.retried:
        show_line(said.RETRIED_BELOW_LINE, "nbagent-retried")
        return
    check_done(ending)


def _rebuild(magics: "MagicsApi", decision: Replay) -> "Done | None":
    """Show a recorded turn through the live view (text, cards, notices, table), from its events."""
    from ...engine.contracts.events import Done
    from .replay_events import turn_events

    link = magics.document
    current = magics.current
    if (current is None or session_name(current.agent) != decision.session) and not fill_stand_in(magics):
        cursor = link.cursor
        magics.new_session(resume_from=sessions_dir(link.root) / decision.session,
                           **session_settings(link, decision.session))
        link.cursor = cursor  # loading the record is part of replaying it
    sess = magics.current
    assert sess is not None
    grant_allow(link, decision.session, sess.agent)
    events = turn_events(sess.agent.session, decision.turn)
    before = [r for r in sess.agent.records if r.turn < decision.turn]
    spent_before = sum((r.cost_usd or 0.0) for r in before)
    cursor = link.cursor
    provider = cursor.index.provider if cursor is not None else None
    view = magics.new_view(sess, session_cost=spent_before, provider=provider,
                           session_unpriced=sum(1 for r in before if r.cost_usd is None))  # unknown, never $0
    from ...providers.anthropic import SIMULATED_NOTICE

    try:
        for event in events:
            if getattr(event, "message", None) == SIMULATED_NOTICE:
                continue  # the live kernel's announcement, not part of the answer
            view.handle(event)
    finally:
        view.finish()  # no live widgets first: a replay has nothing to wait for
    return next((e for e in reversed(events) if isinstance(e, Done)), None)


def _show_replay_line(decision: Replay) -> None:
    show_line(f"⟲ replayed: session {decision.session}, turn {decision.turn} (no request sent). "
               f"To ask the model again, {_live_hint()}.", "nbagent-replayed")


def _live_hint() -> str:
    """How to ask again: a chat-mode prompt (a plain cell) has no first line of options, and a
    "--live" typed there would be sent to the model as part of the question."""
    content = executing_request().get("content")
    code = content.get("code") if isinstance(content, dict) else None
    if isinstance(code, str) and code.strip() and not code.lstrip().startswith("%"):
        return "make %%agent --live the cell's first line (a chat-mode prompt has no options line)"
    return "add --live to the cell's first line"


STAND_IN_LINE = ("ⓘ the session your code made could not be given the replayed record ({error}): it stays as "
                 "it was, and the replay goes on.")


def execution_shown(view: "AgentView", sess: "NotebookSession") -> "Callable[[ExecutionRecord], None]":
    """The executor's ``on_execute`` hook: what the python tool's code displayed (a table, a
    plot's text, a value's HTML), redacted with the session's secrets as they are once it ran,
    into its card; the card is the run's transcript, saved in the notebook and its record."""

    def show(record: "ExecutionRecord") -> None:
        # Read after the code ran: a credential variable it made (`cfg = dotenv_values(".env")`) is a secret here.
        strings = sess.agent.engine.sanitizer_after_code().strings
        rich = record.result.rich
        view.show_execution(replace(
            record, displays=tuple(strings(list(record.displays))),
            result=replace(record.result, rich=strings(dict(rich))) if rich else record.result))

    return show


def materialiser(magics: "MagicsApi", sess: "NotebookSession", args: Namespace) -> "Materialiser":
    """The run's cell maker (inactive when cells are off: it then only notes nothing)."""
    from .edit_rules import IN_MEMORY_SESSION
    from .materialise import Materialiser

    wanted = (magics.cells and not args.no_cells) or bool(args.insert_code) or magics.insert_code
    name = session_name(sess.agent) or IN_MEMORY_SESSION
    cells = Materialiser(magics.document.bridge, sess.executor if wanted else None, session=name,
                         turn=lambda: sess.agent.turn, agent_cell_id=executing_cell_id(),
                         redact=lambda outputs: sess.agent.engine.sanitizer_after_code().strings(outputs))
    if not wanted:
        cells.live = False
    return cells


async def after_run(magics: "MagicsApi", cells: "Materialiser", turn: int,
                    record: JSONObject | None = None, shown: "dict[str, str] | None" = None) -> None:
    """Tag the agent cell (with the turn's signed record, which travels with the notebook); write
    what the turn showed into it where its page was reloaded meanwhile; say which earlier cells
    stayed; without a bridge, the last code goes into one new cell."""
    await cells.mark_agent_cell(turn, record)
    if shown is not None:
        await show_on_reloaded_page(magics.document.bridge, shown)
    kept = cells.notice()
    if kept is not None:
        print(kept)
    notice = cells.fallback(magics.shell)
    link = magics.document
    if notice is not None and not link.told_no_bridge:
        link.told_no_bridge = True  # once per kernel: it says what the front-end cannot do
        print(notice)


def rolled_back(magics: "MagicsApi", sess: "NotebookSession", turn: int, *, undone: bool = True) -> "Removal":
    """After ``%agent rollback``: the record's index and the document forget the later turns
    (never the cell running the rollback), and their agent cells say they were undone (not for
    ``%agent retry``, ``undone=False``: its cell below answers the failed turn again)."""
    from .materialise import remove_turn_cells
    from .removal import Removal

    magics.document.rolled_back(sess.agent, turn)
    name = session_name(sess.agent)
    if name is None:
        return Removal()
    undone_in = magics.document.lineage(name) if undone else ()
    return remove_turn_cells(magics.document.bridge, name, turn, protect=executing_cell_id(), undone_in=undone_in,
                             redact=sess.agent.engine.sanitizer().redact)
