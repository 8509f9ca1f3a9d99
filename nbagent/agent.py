"""``Agent``: the one object front-ends talk to (run, abort, reconfigure, save, resume).

It wires a :class:`~nbagent.engine.contracts.config.SessionConfig` to a provider, tools and a
:class:`~nbagent.engine.loop.query.QueryEngine`; settings are keyword arguments or a config, wiring
(provider, key, simulated options, MCP servers, executor) are keyword arguments only.

>>> import asyncio, nbagent
>>> agent = nbagent.Agent(allow=["python"])          # no API key: the offline simulated model
>>> async def main():
...     async for event in agent.run("what is 17 * 23?"):
...         ...
>>> asyncio.run(main())
"""

from __future__ import annotations

import asyncio
import weakref
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Mapping, Sequence, TypeVar

from .admin import admin_policy
from .admin.enforce import DayCount, prompt_limits
from .engine.api_facts.models import get_model
from .engine.contracts.config import RunLimits, SessionConfig
from .engine.contracts.events import Done, Event, Notice, RequestCompleted, RequestRecord, StreamInterrupted, TextDelta, Totals
from .engine.contracts.hooks import HookMap, Hooks
from .engine.contracts.messages import Message
from .engine.contracts.permissions import Asker, CallbackAsker, CanUseTool, OnApiFailure, PermissionDenial
from .engine.contracts.provider import Provider
from .engine.contracts.tool_api import ToolLike, ToolSource
from .engine.loop.facts import KernelFacts
from .engine.loop.query import QueryEngine, RunInProgressError
from .engine.loop.request_run import Sleep
from .engine.loop.rollback import rollback
from .engine.loop.sanitize import SecretValues, hidden
from .engine.loop.structured import OutputSpec, StructuredOutputError
from .engine.state.sent import SentRequest
from .engine.state.session import Session
from .providers.choice import ProviderChoice
from .providers.choice import UnknownWindowError as UnknownWindowError  # re-exported: part of the API
from .providers.choice import make_provider as make_provider
from .result import RunResult, run_answer
from .views import ReadOnlyView
from .wiring import settings_in_force, tool_wiring

T = TypeVar("T")
_CHANGE_THROUGH_AGENT = ("change the session through the Agent (run, rollback, compact, reconfigure), "
                         "or take a copy with list(...)")



class Agent:
    """One agent session: settings, a provider, tools, and the session's state.

    ``Agent(model=..., allow=[...], task_dir=...)`` takes any :class:`SessionConfig` setting as a
    keyword (or a ``config=``); ``provider`` is ``"auto"`` (Anthropic with a key, else the offline
    simulated API), ``"simulated"``, ``"anthropic"`` or a Provider object. ``hooks`` is a
    :class:`~nbagent.engine.contracts.hooks.HookMap`: hook names (``pre_tool_use``,
    ``post_tool_use``, ``pre_request``, ``pre_compact``, ``on_done``) to sync or async callables
    with that hook's signature (see :mod:`nbagent.engine.contracts.hooks`). ``start_mcp=False``
    starts the MCP servers (``.mcp.json``, ``mcp_servers``) with the first request instead of now;
    ``cwd``'s ``.mcp.json`` is read only once the user trusts it as it is
    (:func:`~nbagent.tools.mcp.trust_mcp_json`; an untrusted one starts nothing, and the first
    prompt says so); ``read_mcp_json=False`` reads none (a folder of data, not a project of yours:
    ``python -m nbagent.batch`` runs each item in its file's folder), only ``mcp_servers``.
    """

    def __init__(
        self,
        config: SessionConfig | None = None,
        *,
        provider: ProviderChoice | Provider = "auto",
        api_key: str | None = None,
        simulated_options: Mapping[str, Any] | None = None,
        mcp_servers: Mapping[str, Any] | None = None,
        start_mcp: bool = True,
        read_mcp_json: bool = True,
        tools: Sequence[ToolLike] | None = None,
        tool_sources: Sequence[ToolSource] = (),
        asker: Asker | None = None,
        can_use_tool: CanUseTool | None = None,
        on_api_failure: OnApiFailure | None = None,
        executor: Any = None,
        kernel_facts: KernelFacts | None = None,
        sleep: Sleep | None = None,
        session: Session | None = None,
        hooks: HookMap | Hooks | None = None,
        endpoint: Any = None,
        **settings: Any,
    ) -> None:
        api_key = hidden(api_key)  # first: a Verbose traceback from any line below prints the arguments
        wanted = settings_in_force(config, provider, endpoint, hooks, settings)
        config = wanted.config
        self.endpoint = wanted.endpoint
        """The endpoint this Agent talks to (None: the simulated API, or Anthropic's through ``api_key``)."""
        self.provider: Provider = make_provider(wanted.provider, api_key=api_key, simulated_options=simulated_options) \
            if isinstance(wanted.provider, str) else wanted.provider
        # A SecretValues, and the parameter gone: a traceback in %xmode Verbose prints each frame's
        # arguments and locals (a typo in mcp_servers printed the key into the notebook's output).
        secrets = SecretValues(str(v) for v in (api_key, *(self.endpoint.secrets() if self.endpoint else ())) if v)
        del api_key
        if asker is None and (can_use_tool is not None or on_api_failure is not None):
            asker = CallbackAsker(can_use_tool, on_api_failure)
        self.asker = asker
        """Asked during runs that do not pass their own ``asker`` (None: headless, deny and cancel)."""
        wired = tool_wiring(config, tools, tool_sources, mcp_servers, start_mcp=start_mcp,
                            read_mcp_json=read_mcp_json, secrets=secrets)
        self.mcp = wired.mcp
        self.engine = QueryEngine(config, provider=self.provider, tools=wired.tools, tool_sources=wired.sources,
                                  session=session, executor=executor, kernel_facts=kernel_facts,
                                  sleep=sleep or asyncio.sleep, hooks=Hooks.from_mapping(wanted.hooks),
                                  secrets=wired.secrets)
        continues = getattr(self.simulated_api, "continues", None)
        if session is not None and callable(continues):  # a saved conversation: its tool ids stay used
            continues(self.engine.session.history)
        if self.mcp is not None:
            self.mcp.close_with(self)  # a dropped Agent does not leave servers running
        if wired.project is not None and wired.project.untrusted is not None:  # said at the first prompt
            self.engine.session.notices.append(wired.project.notice())
        # Once per Agent, not per process: each new session (``%agent reset``, a second Agent in
        # the same kernel) says again which model answers it.
        self._announce = self.provider.name == "simulated"
        self.last_output: Any = None
        """The answer of the last run: its structured output, or the last assistant message's text."""
        weakref.finalize(self, self.engine.session.close)

    @property
    def admin(self) -> Any:
        """The system-wide admin policy in force now (None: none; see :mod:`nbagent.admin`), read
        again at each use so that a changed file applies to the next prompt."""
        return admin_policy()

    def __repr__(self) -> str:
        return f"Agent(model={self.config.model!r}, provider={self.provider.name!r}, turns={self.turn})"

    @classmethod
    def resume(cls, task_dir: str | Path, config: SessionConfig | None = None, **kwargs: Any) -> "Agent":
        """Continue the session saved in ``task_dir`` (which this Agent then writes and locks).

        Its model is the saved one unless ``model`` (or a ``config``) is given; a different one is
        said in a notice at the next prompt."""
        if kwargs.get("api_key") is not None:  # this frame's kwargs print in a Verbose traceback too
            kwargs["api_key"] = hidden(kwargs["api_key"])
        session = Session.load(task_dir)
        saved = session.model
        settings: dict[str, Any] = {"model": saved} if saved and config is None and "model" not in kwargs else {}
        try:
            agent = cls(config, session=session, task_dir=Path(task_dir), **settings, **kwargs)
        except BaseException:
            session.close()
            raise
        if saved and agent.config.model != saved:
            session.notices.append(f"Continuing this session with {agent.config.model}, as set here "
                                   f"(it was recorded with {saved}).")
        return agent

    # ----- settings ---------------------------------------------------------------------------
    @property
    def config(self) -> SessionConfig:
        """The settings in force for the next prompt (change them with :meth:`reconfigure`)."""
        return self.engine.config

    def reconfigure(self, **changes: Any) -> SessionConfig:
        """Change settings for later prompts, e.g. ``agent.reconfigure(model="claude-haiku-4-5")``;
        a change the admin policy forbids raises :class:`~nbagent.admin.AdminLockedError`."""
        policy = self.admin
        if policy is not None:
            policy.check_config(self.config.replace(**changes))
        return self.engine.reconfigure(**changes)

    async def _learn_window(self) -> None:
        """On a custom endpoint, a model the table does not know needs its window: asked from the
        endpoint once (and remembered), else :class:`UnknownWindowError` says to pass one."""
        endpoint, config = self.endpoint, self.config
        if endpoint is None or endpoint.base_url is None or config.context_window or \
                get_model(config.model, config.prices) or config.model in (config.known_windows or {}):
            return
        window = await self.provider.model_window(config.model)  # type: ignore[attr-defined]
        if window is None:
            raise UnknownWindowError(config.model, endpoint.describe())
        self.reconfigure(known_windows={**(config.known_windows or {}), config.model: window})

    # ----- running ----------------------------------------------------------------------------
    async def run(self, prompt: str, *, limits: RunLimits | None = None,
                  asker: Asker | None = None, output: Any = None) -> AsyncIterator[Event]:
        """Stream the events of one prompt (the loop runs until the model ends its turn).

        ``limits`` hold for this prompt only; ``asker`` (default: the Agent's) answers permission
        prompts and failed requests. With ``output`` (a pydantic model or a JSON schema dict) the
        model must end with a validated answer: ``Done.output`` carries it as JSON-ready data and
        :attr:`last_output` as the object. After any run, :attr:`last_output` is the answer
        (structured, or the text of the last assistant message). A second run while one is in progress raises
        :class:`~nbagent.engine.loop.query.RunInProgressError`.
        """
        self.engine.check_open()  # before anything is asked of the endpoint
        if self.engine.running_prompt is not None:
            raise RunInProgressError(self.engine.running_prompt)
        await self._learn_window()
        if self._announce:
            from .providers.anthropic import SIMULATED_NOTICE

            self._announce = False
            yield Notice(level="info", message=SIMULATED_NOTICE)
        limits, ledger = prompt_limits(self.admin, limits, self.config)
        spec = OutputSpec.of(output) if output is not None else None
        self.last_output = None
        # What budgets count (budget_usd): a model with no prices costs its family's highest price
        # there, where spent_usd counts it as $0 and the day's cap never came nearer.
        day = DayCount(ledger, self.session.spent.budget_usd)
        try:
            async for event in self.engine.submit_message(prompt, limits=limits, asker=asker or self.asker, output=spec):
                if isinstance(event, Done):
                    self.last_output = run_answer(spec, event, self.history)
                elif isinstance(event, (RequestCompleted, StreamInterrupted)):  # billed: counted now
                    day.update(self.session.spent.budget_usd)
                yield event
        finally:
            day.update(self.session.spent.budget_usd, final=True)

    async def ask(self, prompt: str, *, limits: RunLimits | None = None, output: Any = None) -> Any:
        """Run ``prompt`` and return the assistant's text (as ``RunResult.text``: each request's, a
        blank line between), or with ``output=Schema`` the validated answer (a pydantic object, or
        the data for a JSON schema); a structured run without a valid answer raises :class:`StructuredOutputError`."""
        events = RunResult()  # its ``text`` leaves out a broken stream's partial text, as history does
        done: Done | None = None
        async for event in self.run(prompt, limits=limits, output=output):
            if isinstance(event, (TextDelta, StreamInterrupted, RequestCompleted)):
                events.append(event)
            elif isinstance(event, Done):
                done = event
        if output is None:
            return events.text
        if done is None or done.output is None:
            raise StructuredOutputError(done.error if done and done.error else "the run ended without an answer")
        return self.last_output

    def run_sync(self, prompt: str, *, limits: RunLimits | None = None, output: Any = None) -> RunResult:
        """Blocking convenience: run ``prompt`` and return a :class:`~nbagent.result.RunResult`
        (the list of its events, with ``.text``, ``.cost``, ``.done`` and a one-line repr).

        Inside a running loop (a notebook cell) the run gets a private loop on a worker thread and
        this thread waits with a 0.1 s tick, so an interrupt aborts it cleanly. (``nest_asyncio``
        is not used: it was measured to break ipykernel 7.)
        """
        async def collect() -> RunResult:
            # A broken or stopped stream is billed but kept by no record: without a price it makes
            # the run's cost unknown (RunResult.cost None), which the events alone cannot tell.
            before = self.session.spent
            events = [e async for e in self.run(prompt, limits=limits, output=output)]
            after = self.session.spent
            return RunResult(events, unpriced_billed=max(after.unpriced_requests - before.unpriced_requests, 0),
                             billed_usd=max(after.cost_usd - before.cost_usd, 0.0))

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(collect())
        from .blocking import run_blocking

        return run_blocking(collect, on_interrupt=self.abort, name="nbagent-run-sync")

    async def compact(self, instructions: str | None = None) -> AsyncIterator[Event]:
        """Summarise what truncation would hide now (one request, in the turn table); a failure is
        a warning notice and leaves the history unchanged. Not while a run is in progress."""
        async for event in self.engine.compact(instructions):
            yield event

    def compact_sync(self, instructions: str | None = None) -> list[Event]:
        """Blocking :meth:`compact` (works inside a notebook cell, like :meth:`run_sync`)."""
        async def collect() -> list[Event]:
            return [e async for e in self.compact(instructions)]

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(collect())
        from .blocking import run_blocking

        return run_blocking(collect, on_interrupt=self.abort, name="nbagent-compact")

    # ----- controls and state -----------------------------------------------------------------
    def abort(self) -> None:
        """Stop the run in progress within a second (thread-safe); a no-op between runs."""
        self.engine.abort()

    def retry_now(self) -> None:
        """Skip the current retry wait (thread-safe)."""
        self.engine.retry_now()

    def rollback(self, turn: int) -> None:
        """Return the session to the end of ``turn`` (0 empties it), the notes file included.
        ``totals.spent_usd`` is not lowered: the requests rolled back were billed (``totals.cost_usd``
        is the history's).
        Raises :class:`RunInProgressError` during a run (see :func:`~nbagent.engine.loop.rollback.rollback`)."""
        rollback(self.engine, turn)

    def save(self, path: str | Path | None = None) -> Path:
        """Write the session's task folder (or a copy into ``path``); returns the folder."""
        return self.engine.session.save(path)

    @property
    def session(self) -> Session:
        """The session's state (history, records, events, marks; read it, change it through the Agent)."""
        return self.engine.session

    @property
    def history(self) -> ReadOnlyView[Message]:
        """The conversation (the live list, read-only: change it with :meth:`run`, :meth:`rollback`,
        :meth:`compact`; ``list(agent.history)`` is a copy you may change)."""
        return self._view("history", lambda: self.engine.session.history)

    @property
    def records(self) -> ReadOnlyView[RequestRecord]:
        """One :class:`RequestRecord` per request of the history (the turn table), read-only."""
        return self._view("records", lambda: self.engine.session.records)

    @property
    def events(self) -> ReadOnlyView[Event]:
        """Every non-delta event of the session, in order, read-only."""
        return self._view("events", lambda: self.engine.session.events)

    @property
    def sent(self) -> ReadOnlyView[SentRequest]:
        """The requests as sent (after truncation), for ``%agent saw``; read-only."""
        return self._view("sent", lambda: self.engine.session.sent)

    @staticmethod
    def _view(name: str, items: Callable[[], list[T]]) -> ReadOnlyView[T]:
        return ReadOnlyView(items, f"agent.{name}", _CHANGE_THROUGH_AGENT)

    @property
    def turn(self) -> int:
        return self.engine.session.turn

    @property
    def deleted_range(self) -> tuple[int, int] | None:
        return self.engine.session.deleted_range

    @property
    def totals(self) -> Totals:
        return self.engine.totals

    @property
    def denials(self) -> list[PermissionDenial]:
        return self.engine.denials

    @property
    def context_window(self) -> int:
        return self.engine.context_window

    @property
    def tools(self) -> dict[str, ToolLike]:
        """The tools offered now (built-ins, then MCP servers' tools once connected)."""
        return self.engine.tools

    @property
    def allowed_always(self) -> frozenset[str]:
        """Tools the user allowed "always" in this session."""
        return self.engine.gate.allowed_always

    @property
    def notes(self) -> str:
        """The agent's notes file as it stands ('' when there are none; the ``notes`` setting)."""
        return self.engine.notes

    @property
    def running_prompt(self) -> str | None:
        return self.engine.running_prompt

    @property
    def without(self) -> frozenset[str]:
        """Request features the endpoint refused, switched off for this session (see ``engine/loop/degrade.py``)."""
        return frozenset(self.engine.without)

    @property
    def simulated_api(self) -> Any:
        """The simulated Messages API behind this agent (None with a real key)."""
        return getattr(self.provider, "api", None)

    def mcp_status(self) -> list[str]:
        """One line per MCP server: name, transport, state and tools (empty without servers)."""
        return self.mcp.status_lines() if self.mcp is not None else []

    def close(self) -> None:
        """Release the task folder and stop MCP servers without waiting (idempotent). A run in
        progress is aborted; the folder is released when it has saved its end."""
        self.engine.close_session()
        if self.mcp is not None:
            self.mcp.close(wait=False)

    async def aclose(self) -> None:
        """Release the session's resources: the task folder (as :meth:`close`), MCP connections and
        server processes."""
        self.engine.close_session()
        if self.mcp is not None:
            await self.mcp.aclose()
