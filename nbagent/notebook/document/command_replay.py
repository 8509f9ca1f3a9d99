"""Run All of a recorded notebook reaching an ``%agent retry``, ``%agent fix`` or ``%agent compact``
cell: what was recorded is shown, never asked again (:func:`replayed_retry`, :func:`replayed_compact`),
and a fix whose failed cell was corrected or deleted since passes with its recorded answer
(:func:`recorded_fix`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...engine.loop.compaction import COMPACT_KEEP, hidden_end
from .bridge import executing_cell_id
from .decisions import is_kept
from .embedded import executing_metadata, read_record
from .live_lines import show_line
from .replay import load_index
from .shown import as_displayed

if TYPE_CHECKING:
    from ..magics_api import MagicsApi
    from .link import DocumentLink


RETRY_SHOWN_LINE = ("ⓘ %agent retry: the retried turn (turn {turn}) is the one replayed above, as recorded: "
                    "no request sent.")


async def replayed_retry(magics: "MagicsApi") -> bool:
    """``%agent retry`` in a kernel replaying a record (no turn ran live here, so no session holds
    a prompt to retry): the retried turn is shown, never asked again. From the retry cell's own
    record where the front-end sends it (a retry cell whose metadata holds none retried nothing:
    it fails as it did); else the folder's turn, which the agent cell above has just replayed (a
    retry rewrites its turn in the folder), so one line says so. False: not replaying
    (a live session, or nothing shown yet): ``%agent retry`` works as it does live."""
    from IPython.core.error import UsageError

    link = magics.document
    last = link.last_replayed
    if link.went_live or last is None:
        return False
    if _retry_replays(link):
        from .replayed_options import LINE_IS_NOT_THE_CELLS

        token = LINE_IS_NOT_THE_CELLS.set(True)  # the retry cell gives no options of its own
        try:
            await magics.run_prompt("", last.prompt)  # replays that record, as its agent cell would
        finally:
            LINE_IS_NOT_THE_CELLS.reset(token)
        return True
    if last.failed:  # not a turn a retry redid: its cell failed, and nothing here can send it
        raise UsageError(f"Nothing to retry: turn {last.turn} was replayed as recorded, and no prompt has run "
                         "in this session. To ask the model again, run its cell with --live.")
    if executing_cell_id() is not None:
        # This front-end sends the cell's metadata, and this cell's holds no turn: it retried
        # nothing when it ran (the prompt above was answered), and says so again.
        raise UsageError(f"Nothing to retry: the last prompt was answered (turn {last.turn}, replayed above as "
                         "recorded); %agent retry re-sends a failed, cancelled or interrupted prompt.")
    show_line(RETRY_SHOWN_LINE.format(turn=last.turn), "nbagent-replayed")
    return True


def _retry_replays(link: "DocumentLink") -> bool:
    """Whether the ``%agent retry`` cell running in this replaying kernel carries the retried
    turn in its own metadata (the front-end sends it): the record of the prompt replayed last,
    asked by this cell, and not rolled back in the folder. It then replays as an agent cell
    with that prompt would, from that record."""
    last = link.last_replayed
    if link.went_live or last is None:
        return False
    carried = read_record(executing_metadata(), last.prompt, executing_cell_id())
    if carried is None:
        return False
    index = load_index(link.root, carried.session) if carried.mine else None
    return index is None or is_kept(carried, index, last.prompt, executing_cell_id())


NOTHING_TO_FIX_LINE = ("ⓘ nothing to fix: no cell has failed in this kernel (the cell this fix was asked about ran "
                       "without error, or was deleted, since). Below is the fix as recorded then (session {session}, "
                       "turn {turn}), not asked again: no request sent, and Run All goes on.")


def recorded_fix(magics: "MagicsApi") -> bool:
    """``%agent fix`` where no cell has failed in this kernel, in a cell that carries its own
    recorded fix: the user fixed or deleted the failed cell afterwards, so under Restart & Run All
    it does not fail now. The fix is shown as recorded under a line saying it is not current, and
    the cell passes (failing it stopped Run All, and the saved notebook lost the answer). False:
    the cell carries no such record (never ran, a copy, undone, a failed turn, or the answer to
    another prompt: a cell retyped into ``%agent fix``, or a record from before fixes were marked)."""
    from IPython.display import display

    record = read_record(executing_metadata(), None, executing_cell_id())
    if record is None or not record.fix or record.undone or record.error is not None or record.reason != "end_turn":
        return False  # not a fix's record: a cell retyped into %agent fix keeps the answer it had before
    show_line(NOTHING_TO_FIX_LINE.format(session=record.session, turn=record.turn), "nbagent-changed")
    if not record.mine:  # a received notebook's fix (or one forged in its metadata): said, as a replay says it
        from .replay_lines import RECEIVED_LINE

        show_line(RECEIVED_LINE, "nbagent-received")
    display(as_displayed(record.bundle), raw=True)  # not signed by this user: read_record kept its plain text only
    return True


COMPACT_RECORDED_LINE = ("ⓘ %agent compact: this compaction is in the record (after turn {turn}, replayed above; "
                         "its summary request cost {cost} when it ran): shown as recorded, no request sent.")
COMPACT_NOT_RECORDED_LINE = ("ⓘ %agent compact: nothing compacted: this kernel is replaying the record ({turn} turn(s) "
                             "shown, none asked here), and the record has no compaction after turn {turn}: compacting "
                             "now would send a summary request over turns Run All has not reached yet. After a live "
                             "prompt in this kernel, %agent compact compacts.")
COMPACT_LIVE_LINE = ("ⓘ %agent compact: the replay has shown the record's last turn (turn {turn}), and the record "
                     "has no compaction after it: compacting now (a summary request); the next Restart & Run All "
                     "shows this compaction as recorded.")
COMPACT_NOTHING_LINE = ("ⓘ %agent compact: nothing compacted: the replay has shown the record's last turn (turn "
                        "{turn}), and too little precedes it to summarise (too few messages since the task or the "
                        "last summary): no request sent.")
COMPACT_OTHER_PROVIDER_LINE = ("ⓘ %agent compact: nothing compacted: the record's turns were answered by {recorded}, "
                               "and a summary request here would go to {now}, whose summary would then stand in the "
                               "record for them: no request sent. After a live prompt in this kernel, %agent compact "
                               "compacts.")
COMPACT_NO_ENDPOINT_LINE = ("ⓘ %agent compact: nothing compacted: the record's session cannot go on here ({error}): "
                            "no request sent, and Run All goes on.")
COMPACT_NO_SESSION_LINE = ("ⓘ %agent compact: nothing compacted: this kernel replayed the notebook's own records, and "
                           "no .nbagent/ folder here holds their session: no request sent.")


def replayed_compact(magics: "MagicsApi") -> bool:
    """``%agent compact`` in a kernel replaying a record (Restart & Run All of a notebook with a
    compact cell): no request, but after your own record's last turn. The replayed session holds
    the whole record — the turns after this cell too, already compacted when they ran — so
    compacting it would send a summary request (on your key, for a received notebook) and rewrite
    turns Run All has not reached yet. One line says whether the record holds this compaction.
    False: it compacts, as live (not replaying, or at your record's end: :func:`_refusal`)."""
    from .replayed import replayed_session

    link = magics.document
    if link.went_live or link.last_replayed is None:
        return False
    shown = link.cursor.shown if link.cursor is not None else link.last_replayed.turn
    sess = replayed_session(magics)  # loading the folder sends nothing
    if sess is None:  # replayed from the cells' own records: their session is not here
        show_line(COMPACT_NO_SESSION_LINE, "nbagent-replayed")
        return True
    records = [r for r in sess.agent.records if r.turn == shown]
    if records and records[-1].keep == COMPACT_KEEP:
        cost = records[-1].cost_usd
        show_line(COMPACT_RECORDED_LINE.format(turn=shown, cost="unknown" if cost is None else f"${cost:.4f}"),
                  "nbagent-replayed")
    else:
        refused = _refusal(magics, shown)
        if refused is None:  # the tag of lines that say it asks
            show_line(COMPACT_LIVE_LINE.format(turn=shown), "nbagent-no-record")
            return False  # compacts, as live: the session is your record's, loaded with its cells' settings
        show_line(refused, "nbagent-replayed")
    return True


def _refusal(magics: "MagicsApi", shown: int) -> str | None:
    """None where the replay has shown the last turn of a record this notebook owns and you
    signed, so that compacting it summarises only turns shown above (a compact cell added after
    the notebook last ran live): the kernel then goes live in it, as a new prompt there would,
    loaded with the endpoint its cells named. Else what the cell says instead (a received
    record's compact cell never asks on your key)."""
    from ...providers.endpoint_trust import EndpointError
    from .replayed import resume_live

    link = magics.document
    cursor = link.cursor
    refused = COMPACT_NOT_RECORDED_LINE.format(turn=shown)
    if cursor is None or not link.owns(cursor.index) or not link.replayed_mine.get(cursor.index.session, False):
        return refused
    if shown < max((t.turn for t in cursor.index.turns), default=0):
        return refused
    try:
        resume_live(magics, cursor.index.session)
    except EndpointError as exc:  # its endpoint has no (trusted) profile here: showing needed none
        return COMPACT_NO_ENDPOINT_LINE.format(error=exc)
    now = magics.current.agent.provider.name if magics.current is not None else None
    if cursor.index.provider is not None and now != cursor.index.provider:
        # Run All without the key the record was made with: the offline simulated model's summary
        # would be written into your record, and shown as recorded at every Run All after.
        return COMPACT_OTHER_PROVIDER_LINE.format(recorded=cursor.index.provider, now=now)
    if magics.current is not None and hidden_end(magics.current.agent.history) is None:
        return COMPACT_NOTHING_LINE.format(turn=shown)  # said before "compacting now", which it would not
    link.went_live, link.live_by_command, link.cursor = True, True, None  # a compaction, not a turn (rule 3)
    return None


__all__ = ["COMPACT_LIVE_LINE", "COMPACT_NOTHING_LINE", "COMPACT_NOT_RECORDED_LINE", "COMPACT_NO_ENDPOINT_LINE",
           "COMPACT_NO_SESSION_LINE", "COMPACT_OTHER_PROVIDER_LINE", "COMPACT_RECORDED_LINE", "NOTHING_TO_FIX_LINE",
           "RETRY_SHOWN_LINE", "recorded_fix", "replayed_compact", "replayed_retry"]
