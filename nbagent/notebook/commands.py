"""The ``%agent`` line commands. Each one reads the active session and displays something."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from ..agent import Agent


def _display(obj: Any) -> None:
    from IPython.display import display

    display(obj)


def _need_session(magics: Any) -> Any:
    if magics.current is None:
        raise UsageError("No agent session yet: run a %%agent cell first.")
    return magics.current


class UsageError(Exception):
    """A ``%agent`` command was used wrongly; the message says how to use it."""


def status(magics: Any, args: list[str]) -> None:
    """Model, provider, turns, requests, cost, context range, tools."""
    sess = magics.current
    if sess is None:
        print(f"nbagent: no session yet. Next %%agent uses {magics.model} via {magics.provider} provider.")
        return
    eng, agent = sess.engine, sess.agent
    t = agent.totals
    rng = eng.deleted_range
    hidden = f"{rng[0]}–{rng[1]}" if rng and rng[1] >= rng[0] else "none"
    last = agent.records[-1].context_tokens if agent.records else 0
    print(f"model        {eng.config.model} ({agent.provider.name})")
    print(f"turns        {eng.turn}   requests {t.requests}   retries {t.retries}   truncations {t.truncations}")
    print(f"cost         ${t.cost_usd:.4f}" + (f" ({t.unpriced_requests} unpriced)" if t.unpriced_requests else ""))
    print(f"context      last request {last:,} tokens; window {eng.context_window:,}; hidden messages {hidden}")
    print(f"history      {len(agent.history)} messages; task dir {eng.config.task_dir or '(in memory)'}")
    print(f"tools        {', '.join(eng.tools)}")
    always = sorted(eng.gate.allowed_always | eng.gate.allow)
    print(f"allowed      {', '.join(always) or '(read-only tools only)'}")
    servers = getattr(agent, "mcp_status", None)
    if callable(servers):
        for line in servers():
            print(f"mcp          {line}")
    print(f"mode         {magics.mode}")


def history(magics: Any, args: list[str]) -> None:
    """The per-request table (``--plot`` adds the context/cost plot)."""
    sess = _need_session(magics)
    _display(sess.turns_df())
    if "--plot" in args:
        from .tables import plot_context_and_cost

        _display(plot_context_and_cost(sess.records))


def cost(magics: Any, args: list[str]) -> None:
    """Session totals by token kind and USD."""
    sess = _need_session(magics)
    t = sess.totals
    u = t.usage
    print(f"requests {t.requests}  input {u.input_tokens:,}  output {u.output_tokens:,}  "
          f"cache write {u.cache_creation_input_tokens:,}  cache read {u.cache_read_input_tokens:,}")
    print(f"cost ${t.cost_usd:.4f}" + (f"  ({t.unpriced_requests} requests without prices: n/a)" if t.unpriced_requests else ""))


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
    from .executor import ShellExecutor
    from .session import NotebookSession, kernel_facts_from

    if not args:
        raise UsageError("usage: %agent load PATH")
    path = Path(args[0])
    sess_cfg = magics.session().agent.config if magics.current else None
    executor = ShellExecutor(magics.shell)
    agent = Agent.resume(path, sess_cfg, executor=executor, kernel_facts=kernel_facts_from(magics.shell), in_notebook=True)
    old = magics.current
    if old is not None and getattr(old.agent, "mcp", None) is not None:
        old.agent.mcp.close(wait=False)  # its tool servers must not outlive the session
    magics.current = NotebookSession(agent, executor=executor)
    print(f"nbagent: loaded {path}/ — {len(agent.history)} messages, {agent.engine.turn} turns.")


def explore(magics: Any, args: list[str]) -> None:
    """Open the truncation explorer (on the live session's history when there is one)."""
    from .explorer import explore as open_explorer

    _display(open_explorer(session=magics.current))


def config(magics: Any, args: list[str]) -> None:
    """The defaults (``%config AgentMagics``) and the active session's settings."""
    names = ["model", "provider", "max_turns", "max_budget", "context_window", "allow", "insert_code",
             "task_root", "shell_tool", "tokens_per_second", "first_token_latency"]
    for n in names:
        print(f"AgentMagics.{n} = {getattr(magics, n)!r}")
    if magics.current is not None:
        print(f"session: {magics.current.agent.config!r}")


def mode(magics: Any, args: list[str]) -> None:
    """``chat``: plain cells are prompts (``%%python`` runs code); ``python``: back to normal."""
    if not args or args[0] not in ("chat", "python"):
        raise UsageError("usage: %agent mode chat|python")
    magics.mode = args[0]
    print("nbagent: chat mode — plain cells are prompts; start a cell with %%python to run code."
          if args[0] == "chat" else "nbagent: python mode — cells run as code; %%agent sends a prompt.")


def retry(magics: Any, args: list[str]) -> None:
    """Explains itself when it reaches the line magic (it is normally rewritten to await)."""
    raise UsageError("%agent retry must be alone in its cell (it runs the agent).")


COMMANDS: dict[str, Callable[[Any, list[str]], Any]] = {
    "status": status, "history": history, "cost": cost, "context": context, "saw": saw, "reset": reset,
    "rollback": rollback, "save": save, "load": load, "explore": explore, "config": config, "mode": mode,
    "retry": retry,
}


def run(magics: Any, command: str, args: list[str]) -> Any:
    """Dispatch ``%agent command args``; usage errors print a hint instead of a traceback."""
    fn = COMMANDS.get(command)
    if fn is None:
        print(f"Unknown %agent command {command!r}. Commands: {', '.join(sorted(COMMANDS))}. See %agent help.")
        return None
    try:
        return fn(magics, args)
    except UsageError as exc:
        print(f"nbagent: {exc}")
        return None
    except (FileNotFoundError, ValueError) as exc:
        print(f"nbagent: {exc}")
        return None


def to_json(obj: Any) -> str:
    return json.dumps(obj, indent=1, ensure_ascii=False, default=str)
