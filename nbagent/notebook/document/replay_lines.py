"""What a replayed agent cell says, in one line, beside (or instead of) its recorded answer: the turn
was undone, retried below, recorded by someone else, or not signed with your key."""

from __future__ import annotations

ROLLED_BACK_LINE = ("ⓘ this cell's recorded turn was undone with %agent rollback: it is neither shown nor asked "
                    "again (no request sent), as you left it. To ask the model again, add --live to the cell's "
                    "first line.")
UNDONE_BY_MARK_LINE = ("ⓘ this cell's mark says its turn was undone with %agent rollback, but the mark is not signed "
                       "(an older nbagent's rollback, or an edit) and the session's record still holds the turn: "
                       "it is neither shown nor asked again here, yet its answer may still be in the session's "
                       "history, which the next live prompt sends to the model. To take it out, run %agent rollback "
                       "{before}; to ask again, add --live to the cell's first line.")
UNDONE_CELLS_LINE = ("ⓘ {count} cell(s) of this undone turn's code are still in the notebook (brought back by "
                     "Undo after the rollback, or kept by it): Run All runs them, so the kernel gets what they do. "
                     "Delete them to leave the turn undone.")
RECEIVED_LINE = ("ⓘ recorded by someone else (not signed with your key): its answer is shown as plain text, "
                 "and nothing of it runs.")
RETRIED_BELOW_LINE = ("ⓘ this turn failed here and was retried below with %agent retry (its answer is replayed "
                      "there): the cell does not fail again, so Run All goes on.")
RETRIED_UNFINISHED_LINE = ("ⓘ this cell's run did not finish (interrupted) and was retried below with %agent retry "
                           "(its answer is replayed there): nothing is asked here, and Run All goes on.")
UNFINISHED_SHOWN_LINE = ("ⓘ this cell's last run (turn {turn}) did not finish (■, Kernel > Interrupt, or a restart while "
                         "it ran) and recorded nothing: shown is the answer it was run again after, which later turns "
                         "of the conversation followed (that run may have removed its code cells).")
UNSIGNED_LINE = ("ⓘ not signed with your key (recorded by someone else, changed since, or by an older nbagent): "
                 "rebuilt from the folder's events as plain text, and nothing of it runs.")


__all__ = ["RECEIVED_LINE", "RETRIED_BELOW_LINE", "RETRIED_UNFINISHED_LINE", "ROLLED_BACK_LINE", "UNDONE_BY_MARK_LINE",
           "UNDONE_CELLS_LINE", "UNFINISHED_SHOWN_LINE", "UNSIGNED_LINE"]
