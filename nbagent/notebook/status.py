"""``%agent status``: what the session is and does, one line per aspect; never a key or header value."""

from __future__ import annotations

from argparse import Namespace
from typing import TYPE_CHECKING

from IPython.core.magic_arguments import magic_arguments

from ..display.format import fmt_range, fmt_total_cost, fmt_usd
from ..engine.contracts.context_policy import ContextPolicy
from .serve import command as serve_command

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..agent import Agent
    from ..engine.contracts.events import Totals
    from ..engine.contracts.records import RequestRecord
    from ..engine.state.totals import Spent
    from .magics_api import MagicsApi


def spent_line(t: "Totals", recorded: float = 0.0, spent_unpriced: int | None = None,
               earlier: "Spent | None" = None, not_added: int = 0, unreadable: "Sequence[str]" = ()) -> str:
    """What the session spent (every request billed; a rollback never lowers it), what of it was
    spent before this kernel (``recorded``: a loaded record's turns) and, when a rollback made
    them differ, what the requests of the current history cost. The others were rolled back, or cut
    off mid-answer: one retried (a dropped connection) is billed in the row of the request it was an
    attempt of; one stopped with ■ in no row. The API billed them all.
    ``spent_unpriced``: of the spent requests, those without prices (``Spent.unpriced_requests``;
    ``t.unpriced_requests`` counts the history's only, so a rolled-back one would read as $0).
    ``earlier``: what this notebook's sessions that a kernel restart (or ■) cut short before any turn
    finished spent (``RecordKeeper.earlier_spend``): added, and said. ``not_added``: how many such
    sessions were left out, their link not signed by this user's key (``RecordKeeper.earlier``):
    said, so that an index an earlier nbagent wrote does not silently read as $0. ``unreadable``: the
    replay index files left out because they could not be read (``Earlier.unreadable``): named, as
    the first prompt's refusal names them, so that a damaged one does not silently read as $0."""
    from ..engine.state.totals import Spent

    unpriced = t.unpriced_requests if spent_unpriced is None else spent_unpriced
    more = earlier if earlier is not None else Spent()
    requests = t.spent_requests + more.requests
    line = (f"spent {fmt_total_cost(t.spent_usd + more.cost_usd, unpriced + more.unpriced_requests, requests)} "
            f"in {requests} request(s)")
    if earlier is not None:
        line += (f" ({fmt_total_cost(more.cost_usd, more.unpriced_requests, more.requests)} in {more.requests} of them "
                 "by this notebook's earlier session(s) that a kernel restart or ■ cut short before a turn finished)")
    if not_added:
        line += (f" (not added: {not_added} earlier session(s) linked to this notebook's name and cut short before a "
                 "turn finished whose link your key did not sign: written before nbagent signed it, or someone else's)")
    if unreadable:
        # Named up to three: a received folder of hundreds of damaged ones made every money line pages long.
        named = "; ".join(unreadable[:3]) + (f"; and {len(unreadable) - 3} more" if len(unreadable) > 3 else "")
        line += (f" (left out: {len(unreadable)} replay index(es) that could not be read, so any earlier session "
                 f"of this notebook they name is not added: {named}; move it aside or restore it)")
    if recorded:
        line += f" ({fmt_usd(recorded)} of it spent before this kernel, when the record's turns ran)"
    if t.spent_requests != t.requests:
        line += (f"; in the current history {fmt_total_cost(t.cost_usd, t.unpriced_requests, t.requests)} "
                 f"({t.requests} request(s); the others were rolled back, or cut off mid-answer: "
                 "billed in the row of the request they were retried as, or, stopped with ■ or made on a model "
                 "the request then fell back from, in no row; "
                 "they stay spent)")
    return line


def earlier_line(earlier: "Spent | None") -> str | None:
    """What ``%agent history`` says under its rows when ``%agent cost`` adds the spend of this
    notebook's cut-short earlier sessions (:func:`spent_line`'s ``earlier``): those requests are in
    no row here, so without it the table's cumulative cost and cost's total differ with no word why."""
    if earlier is None or not earlier.requests:
        return None
    return (f"ⓘ %agent cost also counts {fmt_total_cost(earlier.cost_usd, earlier.unpriced_requests, earlier.requests)} "
            f"in {earlier.requests} request(s) by this notebook's earlier session(s) that a kernel restart or ■ cut "
            "short before a turn finished (not rows here: this table is the current session's).")


def earlier_only_line(earlier: "Spent | None") -> str | None:
    """``%agent history`` before this kernel's first agent cell, where a cut-short earlier session of
    this notebook spent money: "no requests yet" alone read as if nothing had been spent."""
    if earlier is None or not earlier.requests:
        return None
    money = fmt_total_cost(earlier.cost_usd, earlier.unpriced_requests, earlier.requests)
    return (f"ⓘ this notebook's earlier session(s) spent {money} "
            f"in {earlier.requests} request(s) before a kernel restart or ■ cut them short (no turn finished); "
            "%agent cost counts it too.")


def replayed_so_far(records: "Sequence[RequestRecord]", shown: int, whole: str, unrowed: int = 0) -> list[str]:
    """``%agent cost`` in a kernel that has replayed ``shown`` turns of a longer record: the requests
    of those turns (the rows ``%agent history`` lists there, so the two add up), then ``whole``, the
    whole record's spent line. The loaded session is the whole record, and its totals alone counted
    the turns the cells below have still to replay: a lesson's cost cell after turn 5 read turn 6's
    money too, under a history table that ended at turn 5. ``unrowed``: requests billed without a
    row (rolled back, or cut off mid-answer), which no turn is kept for: said, not left out unsaid."""
    from ..engine.state.totals import Spent

    mine = [r for r in records if r.turn <= shown]
    spent = Spent.of(mine)
    tokens = {"input": 0, "output": 0, "cache write": 0, "cache read": 0}
    for r in mine:
        u = r.usage
        for name, n in zip(tokens, (u.input_tokens, u.output_tokens, u.cache_creation_input_tokens,
                                    u.cache_read_input_tokens), strict=True):
            tokens[name] += n
    return [f"requests {spent.requests}  " + "  ".join(f"{k} {v:,}" for k, v in tokens.items()),
            f"spent {fmt_total_cost(spent.cost_usd, spent.unpriced_requests, spent.requests)} in {spent.requests} "
            f"request(s) by the {shown} turn(s) replayed so far, when the record's turns ran"
            + (f" (their rows; {unrowed} request(s) billed without a row, rolled back or cut off mid-answer, are "
               "in the whole record's line: no turn is kept for them)" if unrowed else ""),
            f"the whole record: {whole}; the agent cells below replay the rest"]


def endpoint_line(agent: "Agent") -> str:
    """Which endpoint answers, where the window comes from and what the endpoint switched off;
    never a key, token or header value."""
    from ..engine.api_facts.models import get_model

    config = agent.config
    endpoint = agent.endpoint
    where = endpoint.describe() if endpoint is not None else (
        "the simulated Messages API (in process)" if agent.provider.name == "simulated" else "the Anthropic API")
    if config.context_window:
        source = "set for this session"
    elif get_model(config.model, config.prices) is not None:
        source = "model table"
    elif config.model in (config.known_windows or {}):
        source = "reported by the endpoint or its profile"
    else:
        source = "assumed: the model is unknown"
    line = f"{where}; window {agent.context_window:,} ({source})"
    if agent.without:
        line += f"; switched off: {', '.join(sorted(agent.without))}"
    return line


@magic_arguments(name="agent status")
def status(magics: "MagicsApi", args: Namespace) -> None:
    """Model, provider, turns, requests, cost, context range, tools."""
    from .document.replayed import carried_only, notebook_status, replayed_session
    from .view.render import marked_line  # not at the kernel's start: the view package loads the engine

    sess = replayed_session(magics)
    serving = serve_command.status_line()
    carried = notebook_status(magics) if carried_only(magics) else None
    if carried is not None:
        lines = [*carried, f"notebook     {notebook_line(magics)}"]
        print("\n".join(lines + ([f"serve        {serving}"] if serving else [])))
        return
    if sess is None:
        if serving:
            print(f"serve        {serving}")
        if magics.endpoint:
            print(f"nbagent: no session yet. Next %%agent uses the endpoint {magics.endpoint!r} "
                  f"(its profile's model, else {magics.model}).")
        else:
            print(f"nbagent: no session yet. Next %%agent uses {magics.model} via {magics.provider} provider.")
        return
    agent = sess.agent
    t = agent.totals
    rng = agent.deleted_range
    hidden = fmt_range(rng, "none")
    last = agent.records[-1].context_tokens if agent.records else 0
    # One line each: a replayed session's model is a received record's text
    print(f"model        {marked_line(agent.config.model)} ({marked_line(agent.provider.name)})")
    print(f"endpoint     {endpoint_line(agent)}")
    print(f"turns        {agent.turn}   requests {t.requests}   retries {t.retries}   truncations {t.truncations}")
    e = magics.document.earlier(agent)  # one reading of the folder's replay indexes
    money = spent_line(t, sess.recorded_spend, agent.session.spent.unpriced_requests, e.spent, e.not_signed, e.unreadable)
    print(f"money        {money}")
    print(f"context      last request {last:,} tokens; window {agent.context_window:,}; hidden messages {hidden}")
    policy = ContextPolicy.parse(agent.config.context)  # stored parsed: the same object
    print(f"policy       {policy} ({' → '.join(policy.layers)})")
    print(f"notes        {notes_line(agent)}")
    print(f"history      {len(agent.history)} messages; task dir {agent.session.task_dir or '(in memory)'}")
    print(f"tools        {', '.join(agent.tools)}")
    always = sorted(agent.allowed_always | set(agent.config.allow))
    print(f"allowed      {', '.join(always) or '(read-only tools only)'}")
    print(f"permissions  {agent.config.permission_mode}")
    for line in agent.mcp_status():
        print(f"mcp          {line}")
    print(f"mode         {magics.mode}")
    print(f"notebook     {notebook_line(magics)}")
    if serving:
        print(f"serve        {serving}")


def notes_line(agent: "Agent") -> str:
    """The notes setting: off, or its bound and how much of it the file holds now."""
    bound = agent.config.notes
    if not bound:
        return "off (%%agent --notes CHARS or AgentMagics.notes turns them on)"
    folder = agent.session.task_dir
    where = f"{folder}/notes.md" if folder is not None else "in memory"
    return f"on, bound {bound:,} characters; {len(agent.notes):,} used ({where})"


def notebook_line(magics: "MagicsApi") -> str:
    """What the kernel can do with its notebook: the bridge, cells, the record and replay."""
    link = magics.document
    bridge = link.bridge
    where = (f"bridge to {bridge.frontend} ({bridge.path})" if bridge.connected
             else "no bridge (notebook tools off; code goes into one new cell where supported)")
    cells = "code cells on" if magics.cells else "code cells off"
    record = "recorded for replay" if magics.record and not magics.task_root else "not recorded for replay"
    cursor = link.cursor
    replay = f"; replaying session {cursor.index.session}, {cursor.shown} turn(s) shown" if cursor is not None else ""
    return f"{where}; {cells}; {record}{replay}"


__all__ = ["earlier_line", "earlier_only_line", "endpoint_line", "notebook_line", "notes_line", "spent_line", "status"]
