"""Why an agent cell that could have replayed asks the model instead: one line, said before the
request (never a silent live run). :func:`live_line` picks it from a :class:`~.decisions.Live` plan."""

from __future__ import annotations

from html import escape
from typing import Mapping, Sequence

from ...display.html import NO_TEX
from .decisions import Live


def live_line(decision: Live, going_on: str | None, *, cell_ids: bool) -> tuple[str, str] | None:
    """The line (and its output's tag) a cell that could have replayed says before it asks the
    model (never a silent live run): its prompt was edited, it is a copy of another agent cell (wherever it
    runs first: below replayed cells, or after a turn that went live, as well as first in a fresh
    kernel), no record is reachable here, a
    headless new question, the notebook's own session, an out-of-date answer, the record's end, or
    a turn above went live (the session ``going_on`` is not the one its record followed).
    ``cell_ids``: the front-end sends cell ids and metadata (JupyterLab, Notebook 7)."""
    why, turn = decision.other or ("", 0)
    tag = "nbagent-no-record"
    if why == "edited":
        return (EDITED_LINE.format(turn=turn) if turn else EDITED_PROMPT_LINE), tag
    if why == "copied":  # its first run anywhere: then the copy's answer is its own record
        return COPIED_LINE, tag
    if decision.unfinished is not None:
        return UNFINISHED_RERUN_LINE.format(turn=decision.unfinished[0], before=decision.unfinished[1]), tag
    if decision.no_record:
        return _no_record_line(decision, cell_ids), tag
    if decision.new_question:
        return NEW_QUESTION_LINE, tag
    if decision.own_session:
        return OWN_SESSION_LINE.format(turns=decision.own_session), tag
    if decision.stale is not None:
        return STALE_LINE.format(turn=decision.stale), "nbagent-changed"
    if decision.past_record:
        return PAST_RECORD_LINE, tag
    if decision.carried is not None and decision.carried[0] != going_on:
        return (LIVE_LINE if decision.live else AFTER_LIVE_LINE).format(turn=decision.carried[1]), tag
    if decision.notebook_only:
        return NOTEBOOK_ONLY_LINE.format(turns=decision.notebook_only), tag
    return None


def _no_record_line(decision: Live, cell_ids: bool) -> str:
    """Why a cell that might have been recorded has no record reachable here."""
    if decision.ambiguous:
        return ambiguous_line(decision.ambiguous)
    if cell_ids:
        return UNFINISHED_LINE
    if decision.gone:
        return GONE_LINE.format(names=", ".join(decision.gone))
    if decision.without_session:
        return NO_SESSION_LINE
    if decision.unfinished_here:
        return UNFINISHED_HEADLESS_LINE.format(session=decision.unfinished_here)
    if decision.unwritten_here:
        return UNWRITTEN_HEADLESS_LINE.format(session=decision.unwritten_here)
    return NO_MATCH_LINE if decision.records_here else NO_RECORD_LINE


UNSAFE_RECORD_LINE = ("ⓘ no replay and no record here: {problem} (a folder that came with the notebook may point "
                      "it elsewhere, and nbagent writes nothing through it): asking the model, unrecorded.")
NO_RECORD_LINE = ("ⓘ no recorded answer for this cell here (no .nbagent/ record beside the notebook, none in the "
                  "cell's metadata, which only JupyterLab and Notebook 7 send): asking the model.")
NO_MATCH_LINE = ("ⓘ no recorded answer for this cell here: no record beside the notebook (.nbagent/) begins with "
                 "this prompt (a new or edited cell; a headless run sends no cell ids to tell which): asking the model.")
"""Headless, where the folder has records but none this first agent cell could replay (notebook 05
with its structured-output prompt edited said there was no .nbagent/ record at all)."""
GONE_LINE = ("ⓘ no recorded answer for this cell here: the record beside the notebook (.nbagent/) that begins "
             "with this prompt is {names}'s, which is not in this folder (renamed, moved or deleted since), and a "
             "headless run cannot tell this notebook is it: asking the model. JupyterLab and Notebook 7 replay it "
             "from the cell's own record.")
"""Headless, where the only records of this prompt name notebooks no longer in the folder (a renamed
notebook said no record began with this prompt, "a new or edited cell")."""
NO_SESSION_LINE = ("ⓘ no recorded answer for this cell here: the record beside the notebook (.nbagent/replay/) "
                   "that begins with this prompt has lost its session folder (.nbagent/sessions/ deleted or moved), "
                   "which a replay needs: asking the model.")
"""Headless, where the records of this prompt lost their sessions (the folder's big part, deleted to
save space): the line blamed the cell ("a new or edited cell")."""
UNFINISHED_LINE = ("ⓘ no recorded answer for this cell here: its last run did not finish and record one (cut "
                   "short by a kernel restart, for instance), or its record was removed: asking the model.")
"""Where the front-end sends the cell's id and metadata (JupyterLab, Notebook 7): naming a missing
folder or a front-end that sends no metadata would be untrue."""
UNFINISHED_HEADLESS_LINE = ("ⓘ no recorded answer for this cell here: a run of this prompt in this folder "
                            "(session {session} in .nbagent/, by this notebook or another one here) did not finish "
                            "(cut short by a cell timeout, an interrupt, or its kernel killed or restarted), "
                            "so it recorded no answer to replay: asking the model again, live. If a timeout cut it short, "
                            "give the run more time (nbconvert/nbclient: --ExecutePreprocessor.timeout=600), or run the "
                            "cell in JupyterLab or Notebook 7.")
"""Headless, where the folder holds a run of this prompt that did not finish (no record began with it):
the line said "a new or edited cell", or that there was no record beside the notebook. A run that did
not finish names no notebook (its index, written when a turn ends, would), so the line does not say
it was this one's: a copy of the notebook, or another with the same cell, finds that run too."""
UNWRITTEN_HEADLESS_LINE = ("ⓘ no recorded answer for this cell here: no record beside the notebook begins with this "
                           "prompt, and session {session} in .nbagent/ stopped before it wrote anything (its kernel "
                           "killed or restarted, as a run began or while idle after %agent reset; whether it ran "
                           "this cell, nothing recorded tells): asking the model.")
"""Headless, where no record begins with the prompt and the folder's newest session wrote nothing before its
kernel was killed: the line said "a new or edited cell", or that there was no record beside the notebook. Not "as a
run began" only: ``%agent reset`` makes the next session's folder (its lock only) at once, and a kernel killed while
idle after it (a cell's out-of-memory) leaves the same folder, which said "that may have been this cell's run"."""
UNFINISHED_RERUN_LINE = ("ⓘ this cell's last run (turn {turn}) did not finish (■, Kernel > Interrupt, or a restart "
                         "while it ran) and recorded nothing; the answer it was run again after (turn {before}) is "
                         "not shown as current: asking the model.")
"""A cell answered, run again and stopped: Restart & Run All replayed the answer the stopped run
had replaced (the notebook had dropped it and its cells), as if it were the cell's last answer."""
NEW_QUESTION_LINE = ("ⓘ asking the model as a new question: this kernel has asked the model already, and a headless "
                     "run (no cell ids) cannot tell this cell's recorded answer from a new question.")
OWN_SESSION_LINE = ("ⓘ this cell continues the session your code made in this kernel, which has asked the model "
                    "here already ({turns} turn(s)), not a recorded one: asking the model.")
STALE_LINE = ("⚠ this cell's recorded answer (turn {turn}) is older than an answer shown above it: a cell "
              "above was edited or run again after it, so it is out of date: asking the model.")
PAST_RECORD_LINE = ("ⓘ no recorded answer for this cell here: the record shown above has no next turn with "
                    "this prompt (a new or edited cell, an answer that followed one a cell above replaced when "
                    "it was run again, or a turn undone with %agent rollback, which a headless run cannot tell "
                    "apart): asking the model.")
AMBIGUOUS_LINE = ("ⓘ no recorded answer for this cell here: {which} recorded this prompt, and a headless run "
                  "(nbclient, papermill, nbconvert --execute) cannot tell which notebook it is: asking the model.")
EDITED_LINE = "ⓘ this cell's prompt was edited since its recorded answer (turn {turn}): asking the model."
EDITED_PROMPT_LINE = "ⓘ this prompt of the cell was edited since its answers were recorded: asking the model."
"""A cell whose code asks several prompts, where the turn the edited one replaced is not known."""
LIVE_LINE = ("ⓘ --live: asking the model again; this cell's recorded answer (turn {turn}) is not replayed "
             "(without --live, Restart & Run All replays it with no request).")
COPIED_LINE = ("ⓘ this cell is a copy of another agent cell (the recorded answer it carries is that cell's, "
               "which replays there): asking the model.")
NOTEBOOK_ONLY_LINE = ("ⓘ a new conversation: the {turns} turn(s) replayed above came from the agent cells' own "
                      "records (no .nbagent/ folder here), so the model does not have them: asking the model.")
AFTER_LIVE_LINE = ("ⓘ this cell's recorded answer (turn {turn}) is not replayed: an agent cell before it asked the "
                   "model in this kernel, so the conversation that answer followed has changed: asking the model.")


def ambiguous_line(notebooks: Sequence[str | None]) -> str:
    """The line of a headless cell whose prompt several notebooks' records start with."""
    names = [n for n in notebooks if n is not None] + (["a headless run of an unnamed notebook"]
                                                       if None in notebooks else [])
    which = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)
    return AMBIGUOUS_LINE.format(which=which)


OTHER_MODEL_LINE = ("ⓘ this cell names --model {wanted}, and its recorded answer is {recorded}'s: replayed as "
                    "recorded (a replay asks no model). Add --live to ask {wanted}.")


def other_model_line(wanted: str | None, recorded: object) -> str | None:
    """The line a replayed cell says when its ``--model`` (added since, say: the user wants another
    model's answer) names another model than the one that answered; None when they are the same
    (by id or alias) or either is unknown."""
    from ...engine.api_facts.models import get_model

    if not wanted or not isinstance(recorded, str) or not recorded:
        return None

    def same(model: str) -> str:
        info = get_model(model)
        return info.id if info is not None else model

    return None if same(wanted) == same(recorded) else OTHER_MODEL_LINE.format(wanted=wanted, recorded=recorded)


OTHER_WINDOW_LINE = ("ⓘ this cell names --window {wanted:,}, and its recorded answer ran with a {recorded:,}-token "
                     "window: replayed as recorded (its context figures are that window's). Add --live to run it "
                     "with {wanted:,}.")


def other_window_line(wanted: int | None, recorded: object) -> str | None:
    """The line a replayed cell says when its ``--window`` (changed since, say: to show a class
    truncation) is not the window its recorded turn ran with; None when they agree or either is
    unknown (a record from before the window was kept)."""
    if not wanted or not isinstance(recorded, int) or recorded <= 0 or wanted == recorded:
        return None
    return OTHER_WINDOW_LINE.format(wanted=wanted, recorded=recorded)


def show_other_settings(model: str | None, window: int | None, summary: Mapping[str, object]) -> None:
    """One line where a replayed cell's ``--model`` is not the model its recorded answer came from,
    and one where its ``--window`` is not the window it ran with (``summary``: the record it carries)."""
    for line in (other_model_line(model, summary.get("model")), other_window_line(window, summary.get("context_window"))):
        if line is not None:
            show_line(line, "nbagent-changed")


__all__ = ["AFTER_LIVE_LINE", "AMBIGUOUS_LINE", "COPIED_LINE", "EDITED_LINE", "EDITED_PROMPT_LINE", "GONE_LINE", "LIVE_LINE",
           "NEW_QUESTION_LINE", "NO_MATCH_LINE", "NO_SESSION_LINE", "NO_RECORD_LINE", "NOTEBOOK_ONLY_LINE", "OTHER_MODEL_LINE",
           "OTHER_WINDOW_LINE",
           "OWN_SESSION_LINE", "PAST_RECORD_LINE", "STALE_LINE",
           "UNFINISHED_HEADLESS_LINE", "UNFINISHED_LINE", "UNFINISHED_RERUN_LINE", "UNSAFE_RECORD_LINE",
           "UNWRITTEN_HEADLESS_LINE",
           "ambiguous_line", "live_line", "other_model_line", "other_window_line", "show_line", "show_other_settings"]


def show_line(text: str, css: str) -> None:
    """Display one of these lines in the running cell (text, and HTML tagged ``css`` for the theme)."""
    from IPython.display import display

    display({"text/plain": text, "text/html": f'<div class="{css} {NO_TEX}">{escape(text)}</div>'}, raw=True)
