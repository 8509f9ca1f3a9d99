"""The ``%agent`` line commands. Each one reads the active session and displays something.

Every command declares its arguments with IPython's ``magic_arguments`` (argparse underneath), so
its ``--help``, ``%agent help`` and ``%agent?`` are generated from the same declarations
(:func:`overview`, :func:`help_text`) and a bad argument is one ``UsageError`` line that fails the
cell. The docstring of each command is its description in that help.
"""

from __future__ import annotations

from argparse import Namespace
from typing import TYPE_CHECKING, Callable

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments

from ..engine.contracts.config import PERMISSION_MODES
from ..engine.contracts.errors import NbAgentError
from .command_args import HELP_FLAGS, help_text, parse, parser_of, short_usage
from .mcp_command import mcp as mcp_command
from .options import cell_options, turn_number
from .serve import command as serve_command
from .spend_commands import cost, history
from .spend_commands import need_session as _need_session
from .status import status

if TYPE_CHECKING:
    from .magics_api import MagicsApi
    from .session import NotebookSession


def _display(obj: object) -> None:
    from IPython.display import display

    display(obj)


def _said_nothing_loaded(magics: "MagicsApi") -> bool:
    from .document.replayed import nothing_loaded

    said = nothing_loaded(magics)
    if said:
        print(said)
    return said is not None


@magic_arguments(name="agent context")
@argument("turn", nargs="?", type=turn_number, metavar="TURN", help="The turn (default: the last).")
def context(magics: "MagicsApi", args: Namespace) -> None:
    """What the turn's prompt told the model about the kernel (as sent), then every history
    message with its size and whether the model still sees it."""
    from .kernel_context.told import kernel_context_lines

    if _said_nothing_loaded(magics):
        return
    sess = _need_session(magics)
    _check_turn(sess, args.turn)
    turn, later = _replayed_turn(magics, sess, args.turn)
    print("\n".join(kernel_context_lines(sess, turn)))
    if later:
        print(f"\nThe history below is the whole record's, to the end of turn {sess.turn}: {later}")
    _display(sess.messages_df())
    line = _server_edits_line(sess)
    if line:
        print(line)


def _server_edits_line(sess: "NotebookSession") -> str:
    """What the API reported its context editing cleared in the last request ('' for nothing): the
    table marks those results ``cleared by server``, not ``kept``."""
    from ..display.tables import server_cleared_tool_uses

    records = sess.agent.records
    if not records:
        return ""
    last = records[-1]
    edits = [a for a in last.context_actions if a.layer == "server_edit"]
    if not edits:
        return ""
    tokens = sum(a.tokens_removed for a in edits)
    return (f"The API's context editing cleared {server_cleared_tool_uses(last)} tool result(s) "
            f"({tokens:,} input tokens) of request {last.request} ({'; '.join(a.detail for a in edits)}): the "
            "oldest it was sent, marked 'cleared by server' above; the model saw a placeholder for each.")


def _replayed_turn(magics: "MagicsApi", sess: "NotebookSession", turn: int | None) -> tuple[int | None, str]:
    """The turn an inspection command without ``TURN`` describes: the latest, except in a kernel
    that has replayed part of a longer record, where it is the last turn shown (the cell sits
    there; the record's last turn is below it, not replayed yet). Also what to say of the later
    turns, '' when there are none."""
    from .document.replayed import shown_turns

    shown = shown_turns(magics)
    if turn is not None or shown is None or shown >= sess.turn or shown < 1:
        return turn, ""
    later = f"turn {sess.turn} is" if shown + 1 == sess.turn else f"turns {shown + 1}-{sess.turn} are"
    return shown, f"{later} in it, not shown yet (the agent cells below replay what the record holds of them)."


def _check_turn(sess: "NotebookSession", turn: int | None) -> None:
    """Fail the cell (a ``UsageError``: Run All stops there) for a ``TURN`` the session has no
    request of because it is none of its turns: 0 (before the first prompt) or past the latest.
    A turn of the session that sent nothing (a refused prompt) is no error: it is said."""
    if turn is None or 0 < turn <= sess.turn:
        return
    raise UsageError(_no_such_turn(turn, sess.turn))


def _no_such_turn(turn: int, latest: int) -> str:
    """Why ``turn`` names no request: turn 0 is the start, before any prompt; or there is no such turn."""
    turns = f"turns 1-{latest}" if latest > 1 else ("turn 1" if latest == 1 else "no turns yet")
    if turn == 0:
        return f"turn 0 is the start of the conversation, before the first prompt: no request belongs to it ({turns})."
    return f"no turn {turn} in this session ({turns}): %agent history lists the requests of each turn."


@magic_arguments(name="agent saw")
@argument("turn", nargs="?", type=turn_number, metavar="TURN", help="The turn (default: the last).")
def saw(magics: "MagicsApi", args: Namespace) -> None:
    """The exact request(s) of a turn: system prompt and messages after truncation."""
    from .saw import render_sent

    if _said_nothing_loaded(magics):
        return
    sess = _need_session(magics)
    turn, _ = _replayed_turn(magics, sess, args.turn)
    sent = sess.saw(turn)
    unsaved = sess.unsaved_requests(turn)
    if unsaved:  # made by an earlier version, which did not keep what they sent in the task folder
        print(f"nbagent: nothing to show for request(s) {', '.join(map(str, unsaved))}: the task folder was "
              "written by an earlier nbagent version, which did not save what they sent.")
    if not sent and not unsaved:
        _check_turn(sess, turn)
        raise UsageError("No request sent yet." if turn is None else f"No request recorded for turn {turn}.")
    if sent:
        _display(render_sent(sent))


@magic_arguments(name="agent reset")
def reset(magics: "MagicsApi", args: Namespace) -> None:
    """Start a new conversation."""
    magics.new_session()
    print("nbagent: new session started.")


@magic_arguments(name="agent rollback")
@argument("turn", type=turn_number, metavar="TURN", help="A turn number; 0 empties the conversation.")
def rollback(magics: "MagicsApi", args: Namespace) -> None:
    """Return the session to the end of a turn."""
    from ..engine.loop.rollback import rollback
    from .document.cell_run import rolled_back
    from .document.fork import mark_rollback_cell, replayed_rollback
    from .document.link import session_name

    note, more = replayed_rollback(magics, args.turn)  # in a replaying kernel (see the function)
    if note:
        print(note)
        return
    sess = _need_session(magics)
    rollback(sess.agent.engine, args.turn)
    removal = rolled_back(magics, sess, args.turn).describe()  # counted from what the notebook really lost
    cells = f"; {removal}" if removal else ""
    magics.document.went_live, magics.document.cursor = True, None  # the session is this kernel's: nothing replays
    mark_rollback_cell(magics, session_name(sess.agent), args.turn)
    print(f"nbagent: rolled back to the end of turn {args.turn}; {len(sess.agent.history)} messages "
          f"remain{cells}{more}.")


@magic_arguments(name="agent save")
@argument("path", metavar="PATH", help="The folder to write.")
def save(magics: "MagicsApi", args: Namespace) -> None:
    """Write the session's task folder."""
    sess = _need_session(magics)
    path = sess.save(args.path)
    print(f"nbagent: session saved to {path}/")


@magic_arguments(name="agent load")
@argument("path", metavar="PATH", help="A saved session's folder.")
def load(magics: "MagicsApi", args: Namespace) -> None:
    """Continue a saved session (its folder becomes the session's task folder)."""
    sess = magics.new_session(resume_from=args.path)
    print(f"nbagent: loaded {args.path}/ — {len(sess.agent.history)} messages, {sess.turn} turns, "
          f"model {sess.agent.config.model}.")


@magic_arguments(name="agent explore")
def explore(magics: "MagicsApi", args: Namespace) -> None:
    """Open the truncation explorer (on the live session's history when there is one; after a
    replay, on the replayed session's, as ``%agent history`` reads it)."""
    from ..explorer import explore as open_explorer
    from .document.replayed import carried_only, replayed_session

    # Was magics.current: after Restart & Run All (a replay loads no session) a lesson's
    # `%agent explore` showed a synthetic 60-request conversation in place of the lesson's.
    if carried_only(magics):
        print(f"nbagent: the {len(magics.document.from_notebook)} turn(s) replayed here came from the notebook's "
              "own records, and no .nbagent/ folder here holds their conversation: the explorer below shows a "
              "synthetic one.")
    _display(open_explorer(session=replayed_session(magics)))


@magic_arguments(name="agent config")
def config(magics: "MagicsApi", args: Namespace) -> None:
    """Each %config AgentMagics setting once, and where the running session differs."""
    from .settings import config_lines

    print("\n".join(config_lines(magics)))


@magic_arguments(name="agent mode")
@argument("mode", choices=("chat", "python"), metavar="chat|python",
          help="chat: plain cells are prompts; python: cells run as code.")
def mode(magics: "MagicsApi", args: Namespace) -> None:
    """Chat mode: plain cells are prompts (%%python runs code); python mode: back to normal."""
    magics.mode = args.mode
    print("nbagent: chat mode — plain cells are prompts; start a cell with %%python to run code."
          if args.mode == "chat" else "nbagent: python mode — cells run as code; %%agent sends a prompt.")


@magic_arguments(name="agent permissions")
@argument("mode", nargs="?", choices=PERMISSION_MODES, metavar="|".join(PERMISSION_MODES),
          help="The mode to set (none: show the current one).")
def permissions(magics: "MagicsApi", args: Namespace) -> None:
    """Show or set the session's permission mode (bypass only when named here or in a cell)."""
    sess = magics.session()
    if args.mode:
        sess.agent.reconfigure(permission_mode=args.mode)
    mode_ = sess.agent.config.permission_mode
    warning = "  (every tool runs without asking)" if mode_ == "bypass" else ""
    print(f"nbagent: permission mode {mode_}{warning}")


@magic_arguments(name="agent compact")
@argument("instructions", nargs="*", metavar="INSTRUCTIONS", help="What the summary should keep.")
def compact(magics: "MagicsApi", args: Namespace) -> None:
    """Summarise the earlier conversation now."""
    from ..engine.contracts.events import Notice
    from .document.command_replay import replayed_compact

    if replayed_compact(magics):  # Run All of a recorded notebook: the record's compaction, no request
        return
    sess = _need_session(magics)
    for event in sess.agent.compact_sync(" ".join(args.instructions) or None):
        if isinstance(event, Notice):
            print(f"nbagent: {event.message}")


@magic_arguments(name="agent retry")
def retry(magics: "MagicsApi", args: Namespace) -> None:
    """Send a failed, cancelled or interrupted prompt again, from where its turn began."""
    # Normally the cell is rewritten to await retry_async: reaching the line magic means it was not.
    raise UsageError("%agent retry must be alone in its cell (it runs the agent).")


@cell_options(name="agent fix")
def fix(magics: "MagicsApi", args: Namespace) -> None:
    """Explain and fix the last failed cell (its traceback is sent); takes the %%agent options
    (--insert-code: the corrected cell goes below)."""
    # Normally the cell is rewritten to await fix_async: reaching the line magic means it was not.
    raise UsageError("%agent fix must be alone in its cell (it runs the agent).")


@magic_arguments(name="agent help")
@argument("command", nargs="?", metavar="COMMAND", help="A command to explain (none: all of them).")
def help(magics: "MagicsApi", args: Namespace) -> None:  # noqa: A001  (the command's name)
    """This help; %agent COMMAND --help explains one command."""
    print(help_text(COMMANDS[args.command]) if args.command in COMMANDS else overview(magics.agent_cell))


Command = Callable[["MagicsApi", Namespace], None]
"""A ``%agent`` command; ``magic_arguments`` gave it its ``parser``."""

COMMANDS: dict[str, Command] = {
    "status": status, "history": history, "cost": cost, "context": context, "saw": saw, "reset": reset,
    "rollback": rollback, "save": save, "load": load, "explore": explore, "config": config, "mode": mode,
    "retry": retry, "fix": fix, "permissions": permissions, "compact": compact, "serve": serve_command.serve,
    "mcp": mcp_command, "help": help,
}
"""Every ``%agent`` command (a function with the ``parser`` ``magic_arguments`` gave it), in the
order ``%agent help`` lists them."""

FOOTER = """Settings: %config AgentMagics.model = "claude-haiku-4-5" (also max_requests, max_budget, max_session_budget,
  allow, ...; %agent config lists them and what the running session uses)
Session object: nbagent.session() -> turns_df(), truncation_df(), messages_df(), cost, rollback(turn)"""


def overview(cell_magic: object) -> str:
    """``%agent help`` and ``%agent?``: the ``%%agent`` help, then each command's usage and description."""
    usages = {name: short_usage(c) for name, c in COMMANDS.items()}
    width = max(map(len, usages.values())) + 2
    rows = [f"  {usages[name]:<{width}}{' '.join((parser_of(c).description or '').split())}"
            for name, c in COMMANDS.items()]
    return "\n".join([help_text(cell_magic), "", "%agent COMMAND (%agent COMMAND --help explains one):",
                      *rows, "", FOOTER])


def run(magics: "MagicsApi", line: str) -> None:
    """Dispatch ``%agent COMMAND ARGS``; a wrong use fails the cell with a one-line message."""
    name, _, rest = line.strip().partition(" ")
    if name in ("", *HELP_FLAGS):
        name = "help"
    fn = COMMANDS.get(name)
    if fn is None:
        raise UsageError(f"Unknown %agent command {name!r}. Commands: {', '.join(sorted(COMMANDS))}. "
                         "See %agent help.")
    args = parse(fn, rest)
    if args is None:
        return
    try:
        fn(magics, args)
    except (OSError, ValueError, NbAgentError) as exc:
        # IPython shows a UsageError as one line, and the cell fails (Run All stops there).
        raise UsageError(f"nbagent: {exc}") from None
