"""The ``%agent`` line commands. Each one reads the active session and displays something."""

from __future__ import annotations

from typing import Any, Callable

from IPython.core.error import UsageError

from ..engine.contracts.errors import NbAgentError
from .format import fmt_range, fmt_total_cost


def _display(obj: Any) -> None:
    from IPython.display import display

    display(obj)


def _need_session(magics: Any) -> Any:
    if magics.current is None:
        raise UsageError("No agent session yet: run a %%agent cell first.")
    return magics.current


def spent_line(t: Any) -> str:
    """What the session spent (every request billed; a rollback never lowers it) and, when a
    rollback made them differ, what the requests of the current history cost."""
    line = f"spent {fmt_total_cost(t.spent_usd, t.unpriced_requests, t.spent_requests)} in {t.spent_requests} request(s)"
    if t.spent_requests != t.requests:
        line += (f"; in the current history {fmt_total_cost(t.cost_usd, t.unpriced_requests, t.requests)} "
                 f"({t.requests} request(s); rolled-back requests stay spent)")
    return line


def status(magics: Any, args: list[str]) -> None:
    """Model, provider, turns, requests, cost, context range, tools."""
    sess = magics.current
    if sess is None:
        print(f"nbagent: no session yet. Next %%agent uses {magics.model} via {magics.provider} provider.")
        return
    agent = sess.agent
    t = agent.totals
    rng = agent.deleted_range
    hidden = fmt_range(rng, "none")
    last = agent.records[-1].context_tokens if agent.records else 0
    print(f"model        {agent.config.model} ({agent.provider.name})")
    print(f"turns        {agent.turn}   requests {t.requests}   retries {t.retries}   truncations {t.truncations}")
    print(f"money        {spent_line(t)}")
    print(f"context      last request {last:,} tokens; window {agent.context_window:,}; hidden messages {hidden}")
    print(f"history      {len(agent.history)} messages; task dir {agent.session.task_dir or '(in memory)'}")
    print(f"tools        {', '.join(agent.tools)}")
    always = sorted(agent.allowed_always | set(agent.config.allow))
    print(f"allowed      {', '.join(always) or '(read-only tools only)'}")
    print(f"permissions  {agent.config.permission_mode}")
    for line in agent.mcp_status():
        print(f"mcp          {line}")
    print(f"mode         {magics.mode}")


def history(magics: Any, args: list[str]) -> None:
    """The per-request table (``--plot`` adds the context/cost plot)."""
    sess = _need_session(magics)
    _display(sess.turns_df())
    if "--plot" in args:
        from .tables import plot_context_and_cost

        _display(plot_context_and_cost(sess.records))


COST_RECENT = 20  # requests whose cache hit share %agent cost lists


def cost(magics: Any, args: list[str]) -> None:
    """Session totals by token kind and USD."""
    sess = _need_session(magics)
    t = sess.totals
    u = t.usage
    print(f"requests {t.requests}  input {u.input_tokens:,}  output {u.output_tokens:,}  "
          f"cache write {u.cache_creation_input_tokens:,}  cache read {u.cache_read_input_tokens:,}")
    print(spent_line(t))
    shares = [r.usage.cache_hit_share for r in sess.agent.records[-COST_RECENT:]]
    if shares:
        total = u.cache_hit_share
        print(f"cache hit {'n/a' if total is None else f'{total:.0%}'} of prompt tokens; "
              f"per request (last {len(shares)}): " + " ".join("-" if s is None else f"{s:.0%}" for s in shares))


def context(magics: Any, args: list[str]) -> None:
    """Every history message with its size and whether the model still sees it."""
    sess = _need_session(magics)
    _display(sess.messages_df())


def saw(magics: Any, args: list[str]) -> None:
    """The exact request(s) of a turn: system prompt and messages after truncation."""
    from .saw import render_sent

    sess = _need_session(magics)
    turn = int(args[0]) if args else None
    sent = sess.saw(turn)
    if not sent:
        raise UsageError(f"No request recorded for turn {turn}." if turn else "No request sent yet.")
    _display(render_sent(sent))


def reset(magics: Any, args: list[str]) -> None:
    """Start a new conversation."""
    magics.new_session()
    print("nbagent: new session started.")


def rollback(magics: Any, args: list[str]) -> None:
    """Return the session to the end of a turn."""
    sess = _need_session(magics)
    if not args or not args[0].isdigit():
        raise UsageError("usage: %agent rollback TURN (a turn number; 0 empties the conversation)")
    sess.rollback(int(args[0]))
    print(f"nbagent: rolled back to the end of turn {args[0]}; {len(sess.agent.history)} messages remain.")


def save(magics: Any, args: list[str]) -> None:
    """Write the session's task folder."""
    sess = _need_session(magics)
    if not args:
        raise UsageError("usage: %agent save PATH")
    path = sess.save(args[0])
    print(f"nbagent: session saved to {path}/")


def load(magics: Any, args: list[str]) -> None:
    """Continue a saved session (its folder becomes the session's task folder)."""
    if not args:
        raise UsageError("usage: %agent load PATH")
    sess = magics.new_session(resume_from=args[0])
    print(f"nbagent: loaded {args[0]}/ — {len(sess.agent.history)} messages, {sess.turn} turns, "
          f"model {sess.agent.config.model}.")


def explore(magics: Any, args: list[str]) -> None:
    """Open the truncation explorer (on the live session's history when there is one)."""
    from ..explorer import explore as open_explorer

    _display(open_explorer(session=magics.current))


def config(magics: Any, args: list[str]) -> None:
    """Each ``%config AgentMagics`` setting once, with where the running session differs."""
    from .settings import config_lines

    print("\n".join(config_lines(magics)))


def mode(magics: Any, args: list[str]) -> None:
    """``chat``: plain cells are prompts (``%%python`` runs code); ``python``: back to normal."""
    if not args or args[0] not in ("chat", "python"):
        raise UsageError("usage: %agent mode chat|python")
    magics.mode = args[0]
    print("nbagent: chat mode — plain cells are prompts; start a cell with %%python to run code."
          if args[0] == "chat" else "nbagent: python mode — cells run as code; %%agent sends a prompt.")


def permissions(magics: Any, args: list[str]) -> None:
    """Show or set the session's permission mode (``bypass`` only when named here or in a cell)."""
    from ..engine.contracts.config import PERMISSION_MODES

    sess = magics.session()
    if len(args) > 1 or (args and args[0] not in PERMISSION_MODES):
        raise UsageError(f"usage: %agent permissions [{'|'.join(PERMISSION_MODES)}]")
    if args:
        sess.agent.reconfigure(permission_mode=args[0])
    mode_ = sess.agent.config.permission_mode
    warning = "  (every tool runs without asking)" if mode_ == "bypass" else ""
    print(f"nbagent: permission mode {mode_}{warning}")


def compact(magics: Any, args: list[str]) -> None:
    """Summarise the earlier conversation now (``%agent compact [INSTRUCTIONS]``)."""
    from ..engine.contracts.events import Notice

    sess = _need_session(magics)
    for event in sess.agent.compact_sync(" ".join(args) or None):
        if isinstance(event, Notice):
            print(f"nbagent: {event.message}")


def retry(magics: Any, args: list[str]) -> None:
    """Explains itself when it reaches the line magic (it is normally rewritten to await)."""
    raise UsageError("%agent retry must be alone in its cell (it runs the agent).")


def fix(magics: Any, args: list[str]) -> None:
    """Explains itself when it reaches the line magic (it is normally rewritten to await)."""
    raise UsageError("%agent fix must be alone in its cell (it runs the agent).")


COMMANDS: dict[str, Callable[[Any, list[str]], Any]] = {
    "status": status, "history": history, "cost": cost, "context": context, "saw": saw, "reset": reset,
    "rollback": rollback, "save": save, "load": load, "explore": explore, "config": config, "mode": mode,
    "retry": retry, "fix": fix, "permissions": permissions, "compact": compact,
}


def run(magics: Any, command: str, args: list[str]) -> Any:
    """Dispatch ``%agent command args``; a wrong use fails the cell with a one-line message."""
    fn = COMMANDS.get(command)
    if fn is None:
        raise UsageError(f"Unknown %agent command {command!r}. Commands: {', '.join(sorted(COMMANDS))}. "
                         "See %agent help.")
    try:
        return fn(magics, args)
    except (OSError, ValueError, NbAgentError) as exc:
        # IPython shows a UsageError as one line, and the cell fails (Run All stops there).
        raise UsageError(f"nbagent: {exc}") from None
