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
received record's cells answered for their author's prompts, never for yours. ``--permissions`` is
never carried: the options line is not signed (anyone can edit it into a notebook of yours), and
a permission mode grants every tool at once; a live prompt runs with your own mode.
"""

from __future__ import annotations

from argparse import Namespace
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ...agent import Agent
    from ..session import NotebookSession
    from .link import DocumentLink
    from .shown import Shown

# cell option -> (SessionConfig field, the AgentMagics trait that sets it for your own sessions)
_LIMITS = {"window": ("context_window", "context_window"),
           "max_session_budget": ("max_session_budget_usd", "max_session_budget"),
           "session_token_budget": ("session_token_budget", "session_token_budget")}
_CHOICES = {"model": "model", "effort": "effort", "context": "context", "notes": "notes"}
_LOCAL = ("endpoint", "provider")


def remember(link: "DocumentLink", session: str, args: Namespace, *, mine: bool,
             own: "Callable[[str], object]" = lambda trait: None) -> dict[str, Any]:
    """Keep a replayed cell's session options for ``session`` (``--new`` of your own record starts
    the session's lists: it made the session, so nothing before it set it); returns this cell's own
    (what a session loaded already takes now, as live: not the earlier cells' again, over a change
    made since). ``own``: your setting of an ``AgentMagics`` trait (a received record's limit is
    kept only where it is tighter)."""
    cell = {field: value for option, (field, trait) in _LIMITS.items()
            if (value := getattr(args, option, None)) is not None and (mine or _tighter(value, own(trait)))}
    if mine:
        cell.update({field: value for option, field in _CHOICES.items()
                     if (value := getattr(args, option, None)) is not None})
        if getattr(args, "web_search", False):
            cell["server_tools"] = ("web_search",)
    options = {} if args.new and mine else dict(link.replayed_options.get(session, {}))
    options.update(cell)
    if mine:  # where the conversation goes: a local endpoint kept it off the cloud, live
        provider = "simulated" if getattr(args, "simulated", False) else "anthropic" if getattr(args, "anthropic", False) \
            else None
        if args.endpoint or provider:
            options.update(endpoint=args.endpoint, provider=provider)
    link.replayed_options[session] = options
    link.replayed_mine[session] = mine and link.replayed_mine.get(session, True)
    if mine:  # someone else's --allow answered their prompts, never yours
        before = () if args.new else link.replayed_allow.get(session, ())
        link.replayed_allow[session] = tuple(dict.fromkeys((*before, *(args.allow or ()))))
    return cell


ALLOW_NOT_SIGNED_LINE = ("ⓘ this cell's --allow names {tools}, which its recorded answer (signed with your key) did "
                         "not allow: not carried to your next prompt (its options line is not signed, and a replay "
                         "grants no tool its record did not: your next prompt asks). Add --live to run it with them.")


def signed_allow(args: Namespace, shown: "Shown | None") -> tuple[Namespace, str | None]:
    """``args`` with only the ``--allow`` tools the replayed turn's cell named when it ran (as its
    signed record, ``shown``, says), and the line naming the others (None where none): anyone can
    edit ``--allow bash`` into the options line of a notebook of yours, and your next live prompt
    went on with it. A record from before records kept them (``allow`` None) carries the line as
    it reads."""
    asked = tuple(getattr(args, "allow", None) or ())
    if shown is None or shown.allow is None or not asked:
        return args, None
    extra = [tool for tool in asked if tool not in shown.allow]
    if not extra:
        return args, None
    return Namespace(**{**vars(args), "allow": [t for t in asked if t in shown.allow]}), \
        ALLOW_NOT_SIGNED_LINE.format(tools=", ".join(extra))


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


__all__ = ["ALLOW_NOT_SIGNED_LINE", "follow_fork", "forget", "grant_allow", "remember", "off_its_endpoint", "session_settings",
           "signed_allow"]
