"""How the magics start a conversation: a new :class:`~nbagent.notebook.session.NotebookSession` from
the ``AgentMagics`` settings and a cell's options, or one continuing a saved task folder; its
agent gets the notebook tools and the kernel's facts.

Moved out of magics.py (``AgentMagics.new_session`` calls :func:`new_session`), so that the magics
read as parse, delegate, render.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .session import NotebookSession, kernel_facts_from
from .settings import endpoint_for

if TYPE_CHECKING:
    from .document.tools import NotebookTools
    from .magics_api import MagicsApi


def new_session(magics: MagicsApi, *, resume_from: str | Path | None = None, for_prompt: bool = False,
                keep_settings: bool = False, **changes: Any) -> NotebookSession:
    """Start a fresh conversation, or continue the one saved in ``resume_from``; the old one
    is closed (its tool servers stopped, its folder released) once the new one exists.
    ``for_prompt``: made to send the prompt of the cell now running, so the MCP servers start now,
    while it is being sent. A session made for anything else (a replay, ``%agent permissions``,
    ``%agent reset``, ``nbagent.session()``) starts nothing: a received ``.mcp.json``'s commands
    start with the first live request, never by a settings command.

    Continuing a folder in place of a session the notebook's code made and asked nothing with
    (``s = magics.new_session(hooks=...)`` above a replayed cell), or of the session it forks
    (``keep_settings``), keeps that session's settings and hooks (see :func:`_kept_settings`)."""
    from ..agent import Agent
    from .executor import ShellExecutor

    settings = _configured_settings(magics)
    asked_for = changes.get("provider") is not None or changes.get("endpoint") is not None
    provider = changes.pop("provider", None) or magics.provider
    endpoint = endpoint_for(magics, changes.pop("endpoint", None), provider)
    if endpoint is not None and endpoint.model and changes.get("model") is None:
        settings.pop("model")  # the profile's model, unless this cell names one
    settings.update({k: v for k, v in changes.items() if v is not None})
    sim: dict[str, float] = {"first_token_latency": magics.first_token_latency}
    if magics.tokens_per_second:
        sim["tokens_per_second"] = magics.tokens_per_second
    assert magics.shell is not None  # the magics of a loaded extension have their shell
    executor = ShellExecutor(magics.shell)
    wiring: dict[str, Any] = dict(provider=provider, simulated_options=sim, executor=executor, endpoint=endpoint,
                  kernel_facts=kernel_facts_from(magics.shell, magics.last_error, magics.displayed),
                  tool_sources=[notebook_tools(magics)], start_mcp=for_prompt,
                  read_mcp_json=magics.mcp_json)
    old = magics.current
    if resume_from is not None:
        if old is not None and old.agent.session.task_dir is not None and \
                Path(old.agent.session.task_dir).resolve() == Path(resume_from).resolve():
            old.agent.close()  # loading the folder this session writes: hand it over
        # Your model (the cell's, the endpoint profile's or AgentMagics.model), never the folder's: a
        # received session.json must not pick what your key pays for (the notice names both).
        settings.setdefault("model", endpoint.model if endpoint is not None and endpoint.model else magics.model)
        if old is not None and (old.turn == 0 or keep_settings):
            kept, wiring["hooks"] = _kept_settings(old)
            settings = {**settings, **kept, **{k: v for k, v in changes.items() if v is not None}}
            if not asked_for:  # and its provider: the simulated API it set faults on, its endpoint
                wiring["provider"], wiring["endpoint"] = old.agent.provider, None
        agent = Agent.resume(resume_from, **wiring, **settings)
    else:
        magics._session_count += 1
        # A task_dir the caller names wins over the configured places (task_root, the record folder).
        if "task_dir" not in settings and (task_dir := _new_task_dir(magics)) is not None:
            settings["task_dir"] = task_dir
        agent = Agent(**wiring, **settings)
    if old is not None:
        old.agent.close()
        from .document.replay import drop_if_unused

        drop_if_unused(magics.document.root, old.agent.session.task_dir)
    recorded = agent.totals.spent_usd if resume_from is not None else 0.0
    magics.current = NotebookSession(agent, executor=executor, recorded_spend=recorded)
    return magics.current


def _configured_settings(magics: MagicsApi) -> dict[str, Any]:
    """The Agent settings the magics' configuration gives (``%config AgentMagics.…``)."""
    return dict(
        model=magics.model, max_requests=magics.max_requests, max_budget_usd=magics.max_budget,
        max_session_budget_usd=magics.max_session_budget, token_budget=magics.token_budget,
        session_token_budget=magics.session_token_budget,
        context_window=magics.context_window, allow=tuple(magics.allow), shell=magics.shell_tool,
        cwd=Path.cwd(), in_notebook=True, effort=magics.effort, permission_mode=magics.permission_mode,
        server_tools=("web_search",) if magics.web_search else (), context=magics.context, notes=magics.notes,
        kernel_context_tokens=magics.kernel_context_tokens, secret_env=configured_secret_env(magics),
        prices=dict(magics.prices) or None)


def configured_secret_env(magics: "MagicsApi | None") -> tuple[str, ...]:
    """The variables holding configured secrets, with no session loaded as in a new one: the SDK's
    and those your endpoint profiles (``AgentMagics.endpoints`` included) read keys from."""
    from ..engine.contracts.config import DEFAULT_SECRET_ENV
    from ..providers.endpoints import profile_secret_env

    return tuple(dict.fromkeys((*DEFAULT_SECRET_ENV, *profile_secret_env(getattr(magics, "endpoints", None)))))


def _new_task_dir(magics: MagicsApi) -> Path | None:
    """Where a new session is saved: under ``AgentMagics.task_root``, else the notebook's record
    folder (``.nbagent/sessions/…``); None where it is saved nowhere (``AgentMagics.record`` off, or
    a record folder that cannot be used: the agent cell says why)."""
    from .document.replay import RecordFolderError, new_session_dir, record_dir_problem, unused_session_name

    if magics.task_root:  # shared by the kernels of a class's student: the process in the name too
        return Path(magics.task_root) / unused_session_name(Path(magics.task_root), magics._session_count)
    if not magics.record:
        return None

    if record_dir_problem(magics.document.root) is not None:
        return None
    try:
        return new_session_dir(magics.document.root, magics._session_count)
    except RecordFolderError:
        return None  # a link where its folder would go: this session is not recorded


def _kept_settings(old: NotebookSession) -> tuple[dict[str, Any], Any]:
    """The settings and hooks a continued conversation keeps from the session it replaces: the
    session the user made in a cell (its ``pre_tool_use`` hook, its permission mode, ``allow`` and
    ``deny`` lists, model, budgets), as the turns it goes on from ran live in it. Replaced by one
    made from the ``AgentMagics`` settings, a Run All of a notebook whose first cell made a session
    with a deny hook went live past the replayed cells without the hook (attacker pass 8). Its
    provider is kept too, unless the cell names one (see :func:`new_session`): a session made with
    ``provider="simulated"`` or an ``endpoint=`` went on live through the ``AgentMagics`` provider
    (the real API, with the user's key), and notebook 03's faults, set on the code's simulated API,
    were lost."""
    import dataclasses

    config = old.agent.config
    kept = {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.name != "task_dir"}
    return kept, old.agent.engine.hooks


def notebook_tools(magics: MagicsApi) -> "NotebookTools":
    """The notebook tools of a new session (cells read and edited through the front-end bridge)."""
    from .document.edit_rules import IN_MEMORY_SESSION
    from .document.link import session_name
    from .document.tools import NotebookTools

    def name() -> str:
        return (session_name(magics.current.agent) if magics.current is not None else None) or IN_MEMORY_SESSION

    return NotebookTools(magics.document.bridge, name, log=magics.cell_log)
