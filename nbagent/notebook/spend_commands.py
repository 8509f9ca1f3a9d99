"""``%agent history`` and ``%agent cost``: what the session's requests were and what they spent.

Split from :mod:`.commands` (which lists them with the others): the two must agree, on a replaying
kernel, after a rollback, and after a restart that cut an earlier session short, so they live together.
"""

from __future__ import annotations

from argparse import Namespace
from typing import TYPE_CHECKING

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments

from .serve import command as serve_command
from .status import earlier_line, earlier_only_line, replayed_so_far, spent_line

if TYPE_CHECKING:
    from .magics_api import MagicsApi
    from .session import NotebookSession


def _display(obj: object) -> None:
    from IPython.display import display

    display(obj)


def need_session(magics: "MagicsApi") -> "NotebookSession":
    """The session the commands read (after a replay, the replayed one); a one-line UsageError if none."""
    from .document.replayed import replayed_session

    sess = replayed_session(magics)  # after a replay: the replayed session
    if sess is None:
        raise UsageError("No agent session yet in this kernel: run a %%agent cell first (after a restart, Run All "
                         "replays the notebook's recorded agent cells without asking the model, and then this "
                         "command reads their session).")
    return sess


@magic_arguments(name="agent history")
@argument("--plot", action="store_true", help="Add the context and cost plot.")
def history(magics: "MagicsApi", args: Namespace) -> None:
    """The per-request table, then what external (MCP) clients did."""
    from ..display.tables import ReadableTable
    from .document.replayed import carried_only, notebook_history, replayed_session, shown_turns
    from .serve.record import frame

    external = serve_command.entries(magics)
    if carried_only(magics):
        _display(ReadableTable(notebook_history(magics)))  # replayed from the notebook's own records
    else:
        # Before the first %%agent cell there is no session yet: that is "no requests yet" (as the
        # README says), not an error that fails the cell and stops Run All.
        sess = replayed_session(magics)
        if sess is not None and sess.records:
            table = sess.turns_df()
            shown = shown_turns(magics)  # replayed: the turns shown, not the whole record
            # As the run's own table reads: no pandas index, no NaN, no column empty in every row.
            _display(ReadableTable(table if shown is None else table[table["turn"] <= shown]))
            said = earlier_line(magics.document.earlier_spend(sess.agent))
            if said:  # %agent cost adds it: say so, so the two agree
                print(said)
        elif not external:
            print("no requests yet")
            # After a restart mid-prompt, before any cell ran again: the cut-short session spent money.
            said = earlier_only_line(magics.document.earlier_spend(sess.agent if sess is not None else None))
            if said:
                print(said)
            return
    if external:
        print(f"External clients ({len(external)} call(s), %agent serve):")
        _display(ReadableTable(frame(external)))
    sess = replayed_session(magics)
    if args.plot and sess is not None:
        from ..display.charts import plot_context_and_cost

        shown = shown_turns(magics)  # the plot of the table's requests, not of turns still to replay
        _display(plot_context_and_cost([r for r in sess.records if shown is None or r.turn <= shown]))


def _earlier_only(magics: "MagicsApi") -> str | None:
    """``%agent cost`` before this kernel's first agent cell, where this notebook's earlier sessions
    that a restart cut short spent money (or were left out, unsigned): what ``%agent history`` says,
    counted as cost counts them once a session exists. None: nothing earlier to say."""
    from ..display.format import fmt_total_cost
    from ..engine.state.totals import RunningTotals

    e = magics.document.earlier(None)
    if (e.spent is None or not e.spent.requests) and not e.not_signed and not e.unreadable:
        return None
    line = spent_line(RunningTotals().of([], 0), 0.0, 0, e.spent, e.not_signed, e.unreadable)
    if e.spent is None:  # only left-out sessions: "spent $0.0000" read as if they had spent nothing
        line = "nothing counted here" + line.removeprefix(f"spent {fmt_total_cost(0.0, 0, 0)} in 0 request(s)")
    return "no requests yet in this kernel\n" + line


COST_RECENT = 20  # requests whose cache hit share %agent cost lists


@magic_arguments(name="agent cost")
def cost(magics: "MagicsApi", args: Namespace) -> None:
    """Session totals by token kind and USD."""
    from .document.replayed import carried_only, notebook_status, replayed_session, shown_turns

    if carried_only(magics) or replayed_session(magics) is None:
        # A replaying kernel with no session to load: a notebook received without its .nbagent/
        # folder (its turns replayed from the cells' own records), or one whose turns were all
        # undone. A `%agent cost` cell left in it must not fail and stop Run All there.
        carried = notebook_status(magics)
        if carried is not None:
            print("\n".join(line for line in carried if line.startswith(("replayed", "requests", "money"))))
            return
        if magics.document.undone_shown:
            print("no requests yet: the agent cells this kernel reached were undone with %agent rollback")
            return
        said = _earlier_only(magics)
        if said is not None:
            print(said)
            return
    sess = need_session(magics)
    t = sess.totals
    e = magics.document.earlier(sess.agent)  # one reading of the folder's replay indexes
    earlier = (e.spent, e.not_signed, e.unreadable)
    shown = shown_turns(magics)
    if shown is not None and shown < sess.turn and any(r.turn > shown for r in sess.records):
        # Mid-replay, where later turns spent: the turns shown, as %agent history lists them. (A
        # later turn that billed nothing, failed before its answer, leaves the totals as they were.)
        whole = spent_line(t, sess.recorded_spend, sess.agent.session.spent.unpriced_requests, *earlier)
        print("\n".join(replayed_so_far(sess.records, shown, whole, t.spent_requests - t.requests)))
        return
    u = t.usage
    cut = sum(r.unanswered_usage.total_tokens for r in sess.records if r.unanswered_usage is not None)
    print(f"requests {t.requests}  input {u.input_tokens:,}  output {u.output_tokens:,}  "
          f"cache write {u.cache_creation_input_tokens:,}  cache read {u.cache_read_input_tokens:,}"
          + (f"  cut-off tokens {cut:,}" if cut else ""))  # the turn table's column: in spent, not in the others
    print(spent_line(t, sess.recorded_spend, sess.agent.session.spent.unpriced_requests, *earlier))
    shares = [r.usage.cache_hit_share for r in sess.agent.records[-COST_RECENT:]]
    if shares:
        total = u.cache_hit_share
        print(f"cache hit {'n/a' if total is None else f'{total:.0%}'} of prompt tokens; "
              f"per request (last {len(shares)}): " + " ".join("-" if s is None else f"{s:.0%}" for s in shares))


__all__ = ["COST_RECENT", "cost", "history", "need_session"]
