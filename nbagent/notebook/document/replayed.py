"""``%agent status`` / ``history`` (and cost, context, saw) after a replay: the replayed session.

A replay loads no session (that is what keeps Run All fast), so after it the commands that read a
session would say "no session yet" about a notebook whose answers are on screen. They describe
the replayed one instead:

- replayed from the ``.nbagent/`` folder: the recorded session is loaded on first use (no request
  is sent: loading is reading its task folder), its table limited to the turns shown;
- replayed from the notebook's own records only (no folder): what the records say of each turn
  (model, requests, tokens, cost), marked as recorded.
"""

from __future__ import annotations

from argparse import Namespace
from typing import TYPE_CHECKING

from ..view.render import marked_line
from .allow_folder import not_carried_line
from .bridge import executing_cell_id
from .decisions import Replay
from .embedded import executing_metadata, read_record
from .link import session_name
from .live_lines import show_line, show_other_settings
from .replay import sessions_dir
from .replayed_options import (
    CARRIED,
    LINE_IS_NOT_THE_CELLS,
    UNSIGNED_OPTIONS_LINE,
    grant_allow,
    off_its_endpoint,
    remember,
    session_settings,
    signed_options,
    unsigned_widening,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..magics_api import MagicsApi
    from ..session import NotebookSession
    from .link import DocumentLink


def replayed_session(magics: "MagicsApi") -> "NotebookSession | None":
    """The notebook's session: the active one, else the one the kernel replayed from the folder,
    loaded (None when there is neither, or its folder is gone). A session made in a cell that asked
    nothing before the replay (``s = magics.new_session()``), or one loaded for a replayed session
    the kernel has left since (a ``--new`` cell replayed another), is not the notebook's: the
    replayed one is. Another notebook's record is never loaded, but a copy of it
    (:func:`.fork.adopt`), which this kernel then replays on from."""
    link = magics.document
    cursor = link.cursor
    if (magics.current is not None and not link.superseded(magics.current)) or cursor is None or cursor.shown < 1:
        return magics.current
    folder = sessions_dir(link.root) / cursor.index.session
    if not folder.is_dir():
        return None
    if not link.owns(cursor.index):  # another notebook's record: loading it would lock it (see .fork)
        from .fork import adopt

        adopt(magics)
    else:
        magics.new_session(resume_from=folder, **session_settings(link, cursor.index.session))
        link.cursor = cursor  # loading the record is part of replaying it
    link.loaded = magics.current
    if magics.current is not None:  # %agent status names what the next prompt may run, as live
        grant_allow(link, cursor.index.session, magics.current.agent)
    return magics.current


def resume_live(magics: "MagicsApi", session: str) -> None:
    """Make the record ``session`` the active session, for a live prompt that continues it: loaded
    with the settings its replayed cells gave it, its endpoint included. One loaded only to show it
    (``%agent status`` after Run All needs no endpoint profile), or filled into the session the
    notebook's code made, is loaded again where it runs elsewhere than its cells named: continued
    as it was, a conversation kept on a local endpoint went on to the default provider (Anthropic's
    API, with your key), the whole history with it."""
    link, current = magics.document, magics.current
    same = current is not None and session_name(current.agent) == session
    if same and not off_its_endpoint(link, current, session):
        return
    magics.new_session(resume_from=sessions_dir(link.root) / session, for_prompt=True,
                       **session_settings(link, session, live=True))
    loaded = magics.current
    if same and current is not None and loaded is not None:
        # The notebook's code may hold the session it made or read (``s = nbagent.session()``): it
        # goes on in that object, as it did live, now on the record's endpoint.
        _hand_over(current, loaded)
        magics.current = current
        if link.loaded is current:
            link.loaded = None  # no longer one loaded only to show the record


def take_options(magics: "MagicsApi", args: Namespace, prompt: str, decision: Replay) -> None:
    """A replayed cell's session options, kept for when its session goes on live (as they set the
    rest of the session live): a received record's only where they narrow yours, and of its
    options the line gave when its turn ran, as its signed record says; the lines saying what differs."""
    mine = _signed_by_you(decision)
    if not LINE_IS_NOT_THE_CELLS.get():  # what a replayed retry of this cell narrows by
        magics.document.replayed_line = {name: getattr(args, name, default) for name, default in CARRIED.items()}
    # A record of yours made before cells' options were signed says nothing of them: its line,
    # which anyone who edited the notebook could have changed, carries only what narrows.
    signed = decision.shown is not None and decision.shown.options is not None
    def own(trait: str) -> object:  # your setting of an AgentMagics trait
        return getattr(magics, trait, None)

    taken = _as_signed(magics.document, args, decision) if mine and signed else args
    if mine and signed and taken.allow and decision.shown is not None \
            and (why := not_carried_line(magics.document.root, decision.shown.options)) is not None:
        # Recorded in another folder (a copy of your published project): not carried, as session.json's grants.
        taken = Namespace(**{**vars(taken), "allow": None})
        show_line(why, "nbagent-changed")
    if mine and not signed and not LINE_IS_NOT_THE_CELLS.get() and (widening := unsigned_widening(args, own)):
        show_line(UNSIGNED_OPTIONS_LINE.format(options=", ".join(widening)), "nbagent-changed")
    options = remember(magics.document, decision.session, taken, mine=mine, signed=signed, own=own)
    update_loaded(magics, decision.session, options)
    _said_other_settings(args, prompt, decision)  # of the line as it reads


def _as_signed(link: "DocumentLink", args: Namespace, decision: Replay) -> Namespace:
    """The replayed cell's session options as its signed record gave them (the options line is
    not signed), and a line naming those changed since. A replayed ``%agent retry`` (no line of its
    own) is narrowed by the retried cell's line, which has said what it does not carry."""
    retry = LINE_IS_NOT_THE_CELLS.get()
    args, unsigned = signed_options(args, decision.shown, link.replayed_line if retry else None)
    if unsigned is not None and not retry:
        show_line(unsigned, "nbagent-changed")
    return args


def _said_other_settings(args: Namespace, prompt: str, decision: Replay) -> None:
    """The lines of a replayed cell whose ``--model`` or ``--window`` differ from what answered, as
    the record it carries in its own metadata for this very turn says."""
    carried = decision.notebook or read_record(executing_metadata(), prompt, executing_cell_id())
    if carried is not None and (carried.session, carried.turn) == (decision.session, decision.turn):
        show_other_settings(args.model, args.window, carried.summary)


def _signed_by_you(decision: Replay) -> bool:
    """Whether the replayed turn is your own record (its transcript signed with your key, in the
    folder or in the cell's metadata): a received record's cells chose their ``--allow`` for the
    prompts of whoever recorded it, so a live prompt of yours that continues it does not get them."""
    if decision.notebook is not None:
        return decision.notebook.mine
    return decision.shown is not None



def update_loaded(magics: "MagicsApi", session: str, options: "dict[str, object]") -> None:
    """The replayed session, when a command loaded it already (``%agent status`` between replayed
    cells), takes the replayed cell's ``options``, as it would have live."""
    current = magics.current
    if current is None or session_name(current.agent) != session:
        return
    if options:
        current.agent.reconfigure(**options)
    grant_allow(magics.document, session, current.agent)


def fill_stand_in(magics: "MagicsApi") -> bool:
    """Load the replayed session into the session the notebook's code made and the replay stood
    in for (``s = magics.new_session(...)`` or ``nbagent.session()`` before its agent cells): a
    fresh one that asked nothing, while this kernel showed another session's turns in its place.

    The code holds that object (``s.turns_df()``, ``s.events``, ``s.agent.history``), so it gets
    the replayed session's agent, with the settings the code gave it (its window, its allow), and
    stays the active session: the notebook's audit cells read what the live run read, not an
    empty session. True when it was filled (the record is loaded once: no request is sent)."""
    link = magics.document
    current, cursor = magics.current, link.cursor
    if (current is None or cursor is None or current.turn or current is not link.session_at_replay
            or session_name(current.agent) == cursor.index.session):
        return False
    folder = sessions_dir(link.root) / cursor.index.session
    if not folder.is_dir():
        return False
    # Loaded in place of the code's session (its settings and hooks kept: .new_session), which then
    # takes the loaded agent and stays the active session.
    if link.owns(cursor.index):
        magics.new_session(resume_from=folder, **session_settings(link, cursor.index.session))
        link.cursor = cursor  # loading the record is part of replaying it
    else:
        from .fork import adopt

        adopt(magics)  # another notebook's record: a copy of it, never the record itself
    loaded = magics.current
    magics.current = current
    if loaded is None:
        return False
    _hand_over(current, loaded)
    link.code_session = link.loaded = current  # loaded for the replay: a later --new replay leaves it
    return True


def keep_code_session(magics: "MagicsApi", before: "NotebookSession | None") -> None:
    """After a live cell forked or resumed the record: the session the notebook's code made and a
    replay filled (``before``) goes on in the new agent, as the active session, with the settings
    the code gave it (02's 4,000-token window and its allowed tools, not the defaults)."""
    new = magics.current
    if before is None or new is None or new is before or before is not magics.document.code_session:
        return
    # Only a copy of the code's own record goes on in it: a record a later --new cell started was
    # made, live, with the AgentMagics settings and none of the code's hooks, and goes on so.
    if session_name(before.agent) not in magics.document.lineage(session_name(new.agent) or ""):
        return
    _hand_over(before, new)
    magics.current = before


def _hand_over(session: "NotebookSession", loaded: "NotebookSession") -> None:
    """``session`` takes ``loaded``'s agent. ``loaded`` replaced it (its old agent is closed
    already) and was made with its settings and hooks (``new_session``'s ``keep_settings``, or a
    session that had asked nothing: one place says what a continued conversation keeps)."""
    if session.agent is not loaded.agent:
        session.agent.close()
    session.agent, session.executor = loaded.agent, loaded.executor


def shown_turns(magics: "MagicsApi") -> int | None:
    """How many turns of the current session this kernel replayed (None: it did not replay it)."""
    cursor = magics.document.cursor
    current = magics.current
    if cursor is None or current is None or session_name(current.agent) != cursor.index.session:
        return None
    return cursor.shown


def nothing_loaded(magics: "MagicsApi") -> str | None:
    """What an inspection command (``%agent context``, ``saw``) says in a replaying kernel that has
    no session to load: a notebook received without its ``.nbagent/`` folder (its turns replayed from
    the cells' own records), or one whose turns were all undone. Such a cell left in the notebook
    must not fail and stop Run All there. None: there is a session, or nothing was replayed."""
    link = magics.document
    loaded = replayed_session(magics)
    if loaded is not None and loaded.turn > 0:
        return None  # a session that asked (or was loaded from the record): it has something to show
    if link.from_notebook:
        return (f"nbagent: nothing to show: this kernel replayed {len(link.from_notebook)} turn(s) from the "
                "notebook's own records, and no .nbagent/ folder here holds their session (what was sent is "
                "not in the notebook); %agent status and %agent cost give the recorded totals.")
    if link.undone_shown:
        return "nbagent: nothing to show: the agent cells this kernel reached were undone with %agent rollback."
    return None


def carried_only(magics: "MagicsApi") -> bool:
    """True when the notebook's own records are all there is to describe: this kernel replayed turns
    from the cells' metadata (no ``.nbagent/`` folder) and has no session that asked anything. A
    session a cell made (``magics.new_session()``, or ``nbagent.session()`` to set the simulated
    API's faults) that asked nothing is no answer to "what did this cost": `%agent cost` read
    "spent $0.0000 in 0 request(s)" under replayed answers that show what they cost."""
    if not magics.document.from_notebook:
        return False
    sess = replayed_session(magics)
    return sess is None or sess.turn == 0


def _seconds(wait: object) -> float | None:
    return round(wait, 1) if isinstance(wait, (int, float)) else None


def _money(cost: object) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


def notebook_status(magics: "MagicsApi") -> list[str] | None:
    """``%agent status`` for turns replayed from the notebook's own records only (None: none were)."""
    carried = magics.document.from_notebook
    if not carried:
        return None
    last = carried[-1]
    summaries = [c.summary for c in carried]
    costs = [s.get("cost_usd") for s in summaries]
    cost = None if any(not isinstance(c, (int, float)) for c in costs) else sum(c for c in costs if isinstance(c, (int, float)))
    requests = sum(int(s.get("requests") or 0) for s in summaries)
    others = " (one or more recorded by someone else: not verified)" if any(not c.mine for c in carried) else ""
    return [
        f"replayed     from the notebook's own records{others}: session {marked_line(last.session)}, "
        f"{len(carried)} turn(s) shown; no request sent in this kernel",
        # The notebook's text, maybe someone else's: one line each (a newline could add lines here)
        f"model        {marked_line(last.summary.get('model', 'unknown'))} "
        f"({marked_line(last.provider or 'unknown provider')})",
        f"requests     {requests} as recorded",
        f"money        {_money(cost)} as recorded (nothing spent in this kernel)",
        "conversation not here (no .nbagent/ folder): a new prompt starts a new session",
    ]


def notebook_history(magics: "MagicsApi") -> pd.DataFrame:
    """``%agent history`` for turns replayed from the notebook's own records: one row per turn."""
    import pandas as pd

    rows = [{"turn": c.turn, "model": c.summary.get("model"), "requests": c.summary.get("requests"),
             "input tokens": c.summary.get("input_tokens"), "cache write": c.summary.get("cache_write_tokens"),
             "cache read": c.summary.get("cache_read_tokens"), "output tokens": c.summary.get("output_tokens"),
             # The live table's names; blank (unknown) for a record made before they were kept.
             "retries": c.summary.get("retries"), "rate-limit wait s": _seconds(c.summary.get("rate_limit_wait_s")),
             "cost (recorded)": _money(c.summary.get("cost_usd")), "signed by you": c.mine}
            for c in magics.document.from_notebook]
    return pd.DataFrame(rows)


__all__ = ["carried_only", "fill_stand_in", "keep_code_session", "nothing_loaded", "notebook_history", "notebook_status",
           "replayed_session", "resume_live", "shown_turns", "take_options", "update_loaded"]
