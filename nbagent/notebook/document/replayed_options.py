"""The session options of replayed agent cells, kept for when their session goes on live.

Live, ``%%agent --window 4000 --max-session-budget 0.50 --model claude-opus-5`` sets the rest of
the session. A replayed cell sends no request and makes no session, so without this the session a
later live prompt continues (loaded from the record folder) had the ``AgentMagics`` defaults: the
model's full window (a context-window lesson stopped truncating), no session cap, another model.

Limits (``--window``, the session budgets) hold whoever recorded the cell, but from a record that
is not yours only where they are tighter than your own setting: they narrow what a live prompt may
do, never widen it. What spends, changes what is sent or sends elsewhere (``--model``,
``--effort``, ``--web-search``, ``--context``, ``--notes``, ``--allow``, ``--endpoint``,
``--simulated``/``--anthropic``) is kept only from your own record (signed with your key), as a
received record's cells answered for their author's prompts, never for yours; and from it as the
cell gave them when its turn ran (:func:`signed_options`), as the options line is not signed
(anyone can edit it into a notebook of yours): only what narrows is taken from the line as it
reads. ``--permissions`` is never carried: a permission mode grants every tool at once; a live
prompt runs with your own mode.
"""

from __future__ import annotations

from argparse import Namespace
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ...agent import Agent
    from ...engine.contracts.json_types import JSONObject
    from ..session import NotebookSession
    from .link import DocumentLink
    from .shown import Shown

# cell option -> (SessionConfig field, the AgentMagics trait that sets it for your own sessions)
_LIMITS = {"window": ("context_window", "context_window"),
           "max_session_budget": ("max_session_budget_usd", "max_session_budget"),
           "session_token_budget": ("session_token_budget", "session_token_budget")}
_CHOICES = {"model": "model", "effort": "effort", "context": "context", "notes": "notes"}
_LOCAL = ("endpoint", "provider")


def remember(link: "DocumentLink", session: str, args: Namespace, *, mine: bool, signed: bool = True,
             own: "Callable[[str], object]" = lambda trait: None) -> dict[str, Any]:
    """Keep a replayed cell's session options for ``session`` (``--new`` of your own record starts
    the session's lists: it made the session, so nothing before it set it); returns this cell's own
    (what a session loaded already takes now, as live: not the earlier cells' again, over a change
    made since). ``own``: your setting of an ``AgentMagics`` trait (a received record's limit is
    kept only where it is tighter). ``signed``: your record signed the cell's options (False: made
    before records kept them, so ``args`` is the unsigned line, taken only where it narrows, as a
    received record's; but where it sends the conversation, as the line reads)."""
    record_yours, mine = mine, mine and signed  # ``mine``: your signed options, taken as they are
    cell = {field: value for option, (field, trait) in _LIMITS.items()
            if (value := getattr(args, option, None)) is not None and (mine or _tighter(value, own(trait)))}
    if mine:
        cell.update({field: value for option, field in _CHOICES.items()
                     if (value := getattr(args, option, None)) is not None})
        if getattr(args, "web_search", False):
            cell["server_tools"] = ("web_search",)
    options = {} if args.new and mine else dict(link.replayed_options.get(session, {}))
    options.update(cell)
    # Where the conversation goes (a local endpoint kept it off the cloud, live), from a record of
    # yours made before options were signed too: dropped, its history went to your default provider.
    if record_yours:
        provider = "simulated" if getattr(args, "simulated", False) else "anthropic" if getattr(args, "anthropic", False) \
            else None
        if args.endpoint or provider:
            options.update(endpoint=args.endpoint, provider=provider)
    link.replayed_options[session] = options
    link.replayed_mine[session] = record_yours and link.replayed_mine.get(session, True)
    if mine:  # someone else's --allow answered their prompts, never yours
        before = () if args.new else link.replayed_allow.get(session, ())
        link.replayed_allow[session] = tuple(dict.fromkeys((*before, *(args.allow or ()))))
    return cell


CARRIED = {"window": None, "max_session_budget": None, "session_token_budget": None, "model": None, "effort": None,
           "context": None, "notes": None, "web_search": False, "endpoint": None, "simulated": False,
           "anthropic": False, "allow": None}
"""The cell options :func:`remember` carries to a later live prompt, with the parser's defaults."""

OPTIONS_NOT_SIGNED_LINE = ("ⓘ this cell's options line gives {options} otherwise than its recorded answer ran with: not "
                           "carried to your next prompt, which goes on as the record ran (signed with your key; the "
                           "line is not): a tighter limit, or fewer tools, are taken from the line. Add --live to run "
                           "it as it reads.")


UNSIGNED_OPTIONS_LINE = ("ⓘ this cell's record was made before nbagent signed a cell's options, so its options line's "
                         "{options} is not carried to your next prompt, which asks as a new session would (the line "
                         "is not signed: anyone who edited the notebook could have added it; a tighter limit is "
                         "taken). Run the cell with --live to record it with them.")


def unsigned_widening(args: Namespace, own: "Callable[[str], object]") -> list[str]:
    """The options of a replayed cell's line that a record made before options were signed does not
    carry (all but a limit tighter than yours, and where it sends the conversation), as the line names them."""
    return ["--" + name.replace("_", "-") for name, value in options_of(args).items()
            if name not in ("endpoint", "simulated", "anthropic")
            and not (name in _LIMITS and _tighter(value, own(_LIMITS[name][1])))]


LINE_IS_NOT_THE_CELLS: ContextVar[bool] = ContextVar("nbagent_line_is_not_the_cells", default=False)
"""Set while a replayed ``%agent retry`` replays its turn: the empty line is the retry cell's, not
the retried cell's, so the record's options are taken without saying the line differs."""


def options_of(args: Namespace) -> JSONObject:
    """The session options a cell's line gave (those :data:`CARRIED`, where not the default), as
    its record keeps them, signed: a replay carries these, not the line as someone edited it since."""
    given: JSONObject = {}
    for name, default in CARRIED.items():
        value = getattr(args, name, default)
        if isinstance(value, (list, tuple)):  # --allow's tools
            if value:
                given[name] = [str(tool) for tool in value]
        elif value is not None and value is not False:
            given[name] = value
    return given


def signed_options(args: Namespace, shown: "Shown | None",
                   retried_line: "dict[str, object] | None" = None) -> tuple[Namespace, str | None]:
    """``args`` with the session options the replayed turn's cell gave when it ran (its signed
    record, ``shown``, says which), and the line naming those of the line not taken (None where
    none): anyone can edit ``--allow bash``, ``--web-search`` or a larger budget into the options
    line of a notebook of yours, and your next live prompt went on with it. What only narrows is
    taken from the line: a tighter limit, and of ``--allow`` the tools both name. A record from
    before records kept them (``options`` None) says nothing of them: the line as it reads (which
    :func:`remember` then takes as unsigned, ``signed=False``). ``retried_line``: a replayed
    ``%agent retry``'s stand-in for its empty line, the retried cell's (None: the record's own)."""
    signed = shown.options if shown is not None else None
    if signed is None:
        return args, None
    if LINE_IS_NOT_THE_CELLS.get() and retried_line is None:
        return Namespace(**{**vars(args), **{n: signed.get(n, d) for n, d in CARRIED.items()}}), None
    if retried_line is not None:  # a retry's empty line stands for the retried cell's, as it reads
        args = Namespace(**{**vars(args), **retried_line})
    visible, taken, ignored = options_of(args), {}, []
    for name, default in CARRIED.items():
        line, record = visible.get(name), signed.get(name)
        if name == "allow":
            tools = record if isinstance(record, list) else []
            value: object = [t for t in (line if isinstance(line, list) else []) if t in tools]
            kept = value == (line or [])
        elif name in _LIMITS:
            value = _tightest(line, record)
            kept = value == line
        elif name == "web_search" and line is None:  # taken off the line since: off narrows
            value, kept = False, True
        else:
            value, kept = (default if record is None else record), line == record
        taken[name] = value
        if not kept:
            ignored.append("--" + name.replace("_", "-"))
    if not ignored:
        return args, None
    return Namespace(**{**vars(args), **taken}), OPTIONS_NOT_SIGNED_LINE.format(options=", ".join(ignored))


def _tightest(line: object, record: object) -> object:
    """The tighter of two limits (where one is not a number, the other; neither: no limit)."""
    if not isinstance(line, (int, float)):
        return record
    if not isinstance(record, (int, float)):
        return line
    return min(line, record)


def _tighter(value: object, yours: object) -> bool:
    """Whether a received record's limit narrows yours (no limit of yours: any does)."""
    if not isinstance(value, (int, float)):
        return False
    return yours is None or (isinstance(yours, (int, float)) and value < yours)


def session_settings(link: "DocumentLink", session: str | None, *, live: bool = False) -> dict[str, Any]:
    """The settings the replayed cells of ``session`` gave it (for :func:`~..new_session.new_session`
    continuing its folder, or a copy of it). Its endpoint and provider only for a ``live`` prompt:
    loading the record to show it (``%agent status`` after Run All) needs no endpoint profile."""
    options = dict(link.replayed_options.get(session, {})) if session is not None else {}
    return options if live else {k: v for k, v in options.items() if k not in _LOCAL}


def off_its_endpoint(link: "DocumentLink", current: "NotebookSession | None", session: str) -> bool:
    """Whether ``current`` (the record ``session``, loaded) runs elsewhere than its replayed cells
    named (``--endpoint``, ``--simulated``/``--anthropic``): loaded only to show it (``%agent status``
    after Run All needs no endpoint profile), or the session the notebook's code made and a replay
    filled. A live prompt must load it again, with them, or the conversation kept on a local
    endpoint goes on to the default provider, its history with it."""
    options = link.replayed_options.get(session, {})
    if current is None or not options.keys() & set(_LOCAL):
        return False
    endpoint = getattr(current.agent.endpoint, "name", None)
    if options.get("endpoint"):
        return endpoint != options["endpoint"]
    return endpoint is not None or current.agent.provider.name != options.get("provider")


def follow_fork(link: "DocumentLink", old: str, new: str) -> None:
    """A copy of a replayed record (a fork, or the copy ``%agent status`` loads of another
    notebook's record) keeps what its replayed cells set, under the copy's name."""
    if old in link.replayed_options:
        link.replayed_options.setdefault(new, dict(link.replayed_options[old]))
    if old in link.replayed_allow:
        link.replayed_allow.setdefault(new, link.replayed_allow[old])
    if old in link.replayed_mine:
        link.replayed_mine.setdefault(new, link.replayed_mine[old])


def grant_allow(link: "DocumentLink", session: str, agent: "Agent") -> None:
    """Allow ``agent`` (``session`` loaded, or a copy of it) the tools its replayed cells allowed
    with ``--allow``, added to what it allows (only your own record's cells were kept)."""
    allowed = link.replayed_allow.get(session, ())
    if allowed and not set(allowed) <= set(agent.config.allow):
        agent.reconfigure(allow=tuple(dict.fromkeys((*agent.config.allow, *allowed))))


def forget(link: "DocumentLink", field: str) -> None:
    """``%config AgentMagics.X = …`` after replayed cells set ``field``: live, the trait reached the
    running session at its next prompt, over what those cells set; so it does after a replay."""
    for options in link.replayed_options.values():
        options.pop(field, None)


__all__ = ["CARRIED", "OPTIONS_NOT_SIGNED_LINE", "UNSIGNED_OPTIONS_LINE", "follow_fork", "forget", "grant_allow",
           "options_of", "remember", "off_its_endpoint", "session_settings", "signed_options", "unsigned_widening"]
