"""``%%agent`` and ``%agent``: parse, delegate to the session, render (the engine does the work).

A cell magic cannot await, so a cleanup input transformer (:mod:`.cell_transformer`) rewrites a ``%%agent`` cell into
``await run_agent_cell(line, cell)``; IPython then runs it as a top-level-await cell, which lets
widget clicks reach it on ipykernel 7.4. The real ``agent`` cell magic stays as the fallback
(``%autoawait off``, or a front-end calling ``run_cell_magic``): it runs the loop on a worker thread.
How a new session is built from the settings is in :mod:`.new_session`.
"""

from __future__ import annotations

import asyncio
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from traitlets import Bool, Dict, Enum, Float, Int, List, Unicode, observe, validate

from ..engine.api_facts.models import DEFAULT_MODEL
from ..engine.contracts.config import (
    DEFAULT_KERNEL_CONTEXT_TOKENS,
    DEFAULT_MAX_BUDGET_USD,
    DEFAULT_MAX_REQUESTS,
    DEFAULT_MAX_SESSION_BUDGET_USD,
    RunLimits,
)
from ..engine.contracts.context_policy import DEFAULT_POLICY
from ..engine.contracts.errors import NbAgentError
from ..engine.disk.own_imports import installed_only
from . import aborts, admin_traits, command_args, commands, magics_api, settings, warmup
from .busy import BusyHold
from .cell_transformer import run_agent_cell as run_agent_cell  # re-exported: scripts call magics.run_agent_cell
from .cell_transformer import run_agent_command as run_agent_command
from .config_refusal import RefusesConfig
from .kernel_context.figures import DisplayedImages
from .new_session import new_session
from .options import cell_options
from .outcome import AgentCellError, AgentInterrupted, check_done, refused
from .session import LastError, NotebookSession

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.utils.bunch import Bunch

    from ..engine.contracts.events import Done
    from .document.inputs import TurnWatch
    from .document.link import DocumentLink
    from .view import AgentView

# Loading the extension (every nbagent kernel's start) imports only plain-data settings from the
# engine (defaults, errors): the Agent, the loop and their pydantic models are imported by the first
# session, so a kernel that never runs a prompt never pays for them (issue 28, P6).

# The active instance is process-wide on purpose (see :mod:`.magics_api`): the input transformer
# and the rewritten ``await run_agent_cell(...)`` calls have no other way to find its magics.
# Once-only state of a conversation lives on its Agent instead.

def active_magics() -> "AgentMagics":
    """The magics instance registered by ``%load_ext nbagent``."""
    magics = magics_api.active()
    if magics is None:
        raise RuntimeError("nbagent is not loaded: run %load_ext nbagent first.")
    assert isinstance(magics, AgentMagics)  # the one implementation of MagicsApi
    return magics


@magics_class
class AgentMagics(RefusesConfig, Magics):
    """The ``%agent`` / ``%%agent`` magics; traits are the defaults (``%config AgentMagics.x``)."""

    model = Unicode(DEFAULT_MODEL, help="Model id (the running session switches at its next prompt).").tag(config=True)
    provider = Enum(["auto", "simulated", "anthropic"], "auto",
                    help="auto: Anthropic when ANTHROPIC_API_KEY is set, else the offline simulated API "
                         "(new sessions).").tag(config=True)
    max_requests = Int(DEFAULT_MAX_REQUESTS, help="Most API requests per prompt.").tag(config=True)
    max_budget = Float(DEFAULT_MAX_BUDGET_USD, allow_none=True,
                       help="Most USD one prompt may spend (earlier prompts do not count).").tag(config=True)
    max_session_budget = Float(DEFAULT_MAX_SESSION_BUDGET_USD, allow_none=True,
                               help="Stop once the session has spent this (USD), rolled-back requests "
                                    "included.").tag(config=True)
    context_window = Int(None, allow_none=True, help="Override the model's context window.").tag(config=True)
    token_budget = Int(None, allow_none=True, help="Most tokens one prompt may use (any model, priced or not).").tag(
        config=True)
    session_token_budget = Int(None, allow_none=True,
                               help="Stop once the session's requests used this many tokens.").tag(config=True)
    endpoint = Unicode(None, allow_none=True,
                       help="Named endpoint profile of new sessions (see docs/endpoints.md).").tag(config=True)
    endpoints = Dict(help="Endpoint profiles by name, as in .nbagent/endpoints.json (put secrets in *_env "
                          "variables; %agent config shows only the names).").tag(config=True)
    effort = Unicode(None, allow_none=True,
                     help="output_config.effort (low/medium/high/xhigh/max, as the model takes).").tag(config=True)
    context = Unicode(DEFAULT_POLICY, help="Context policy: a preset (layered, cline, summary, server, all) or "
                      "LAYER[:key=value]+LAYER with layers mask, edit, summary, compact, truncate.").tag(config=True)
    notes = Int(0, help="The agent's notes file (notes.md in the task folder, read at the start of each turn): "
                "its bound in characters; 0 is off.").tag(config=True)
    kernel_context_tokens = Int(DEFAULT_KERNEL_CONTEXT_TOKENS,
                                help="Token budget of what each prompt tells the model about the kernel's variables "
                                     "(what does not fit is named, for the model to ask).").tag(config=True)
    web_search = Bool(False, help="Offer Anthropic's web search server tool.").tag(config=True)
    allow = List(Unicode(), help="Tools allowed without asking.").tag(config=True)
    insert_code = Bool(False, help="Insert the agent's last python code as the next cell.").tag(config=True)
    cells = Bool(True, help="Each python call that ran becomes a code cell below the agent cell (with the "
                            "nbagent front-end extension; elsewhere the last code goes into one new cell).").tag(config=True)
    replay_if_changed = Enum(["warn", "live", "fail"], "warn",
                             help="When a replayed agent cell's inputs (variables its code read or the model was "
                                  "shown, files it read, cells in context) changed since its answer was recorded: "
                                  "warn (a line names what changed), live (ask the model again) or fail (the cell "
                                  "fails, for CI).").tag(config=True)
    record = Bool(True, help="Record new sessions under .nbagent/sessions so Restart & Run All replays them "
                             "without asking the model (when task_root is not set).").tag(config=True)
    task_root = Unicode(None, allow_none=True, help="Persist new sessions in folders under this path.").tag(config=True)
    shell_tool = Bool(False, help="Offer new sessions the shell tool (asks before each command).").tag(config=True)
    mcp_json = Bool(True, help="New sessions start the MCP servers of the working folder's .mcp.json (with the "
                               "first live prompt) once you trust it (%agent mcp trust); False reads none "
                               "(python -m nbagent.batch sets it: an item's folder is data, not your project)."
                    ).tag(config=True)
    tokens_per_second = Float(None, allow_none=True,
                              help="Simulated model pacing of new sessions (None: instant).").tag(config=True)
    prices = Dict(help="Your own model table rows by model id, as Agent(prices={...}): prices and windows of a model "
                       "nbagent does not know (see docs/models.md, 'Your own rows').").tag(config=True)
    first_token_latency = Float(0.0, help="Simulated model first-token latency of new sessions, in seconds.").tag(config=True)
    # bypass is left out on purpose: it is only ever set explicitly, per session, never as a default.
    permission_mode = Enum(["default", "accept_edits", "plan"], "default",
                           help="Permission mode (the running session switches at its next prompt; bypass only per "
                                "session).").tag(config=True)

    @observe(*settings.LIVE, *settings.NEW_SESSIONS_ONLY)
    def _setting_changed(self, change: "Bunch") -> None:
        """``%config AgentMagics.X = …``: the running session takes it at its next prompt, or a
        line says it waits for a new session (see :mod:`.settings`)."""
        line = settings.apply_change(self, change["name"], change["old"], change["new"])
        if line:
            print(line)
        document = getattr(self, "_document", None)  # None too while IPython's config loads the traits
        if document is not None and change["name"] in settings.LIVE:  # set after the replayed cells: it wins
            from .document.replayed_options import forget

            forget(document, settings.LIVE[change["name"]])

    @validate("permission_mode", "allow", "max_budget", "web_search")
    def _within_admin_policy(self, proposal: "Bunch") -> object:
        """``%config AgentMagics.X = …`` beyond the admin policy fails at once, naming the admin setting."""
        return admin_traits.checked(proposal["trait"].name, proposal["value"])

    @validate("notes", "model", "prices")
    def _valid_setting(self, proposal: "Bunch") -> object:
        """``%config AgentMagics.notes = -1`` (or ``model = ""``, a price row missing ``output``) fails at
        once, saying why (as ``--notes`` and ``Agent(prices=…)`` do)."""
        return settings.CHECKS[proposal["trait"].name](proposal["value"])

    @validate("endpoints")
    def _no_literal_secrets(self, proposal: "Bunch") -> object:
        """``%config AgentMagics.endpoints`` refuses a literal key or token (``%config`` prints it)."""
        return settings.checked_endpoints(proposal["value"])

    def __init__(self, shell: "InteractiveShell | None" = None, **kwargs: object) -> None:
        super().__init__(shell=shell, **kwargs)
        admin_traits.start_from_admin_values(self)
        self.current: NotebookSession | None = None
        self.mode = "python"
        self.running = 0  # agent runs in progress (chat mode leaves the tool's code alone then)
        self._session_count = 0
        self.last_error = LastError(shell)  # one post_run_cell watcher per shell, shared by sessions
        self.displayed = DisplayedImages(shell)  # the PNGs user cells displayed, for prompts about a plot
        self._document: "DocumentLink | None" = None
        from .document.inputs import CellLog

        self.cell_log = CellLog(shell)  # which text each cell last ran (the cells a turn had in context)

    @property
    def document(self) -> "DocumentLink":
        """The kernel's :class:`~nbagent.notebook.document.link.DocumentLink` (made on first use)."""
        if self._document is None:
            from .document.link import DocumentLink

            self._document = DocumentLink()
        return self._document

    # --- sessions ----------------------------------------------------------------------------
    def new_session(self, *, resume_from: str | Path | None = None, **changes: Any) -> NotebookSession:
        """Start a fresh conversation, or continue the one saved in ``resume_from``; the old one
        is closed (its tool servers stopped, its folder released) once the new one exists
        (see :mod:`.new_session`)."""
        return new_session(self, resume_from=resume_from, **changes)

    def session(self) -> NotebookSession:
        """The active session (created on first use); after a replay, the replayed one, loaded."""
        from .document.replayed import replayed_session

        return replayed_session(self) or self.new_session()

    def _session_for(self, args: Namespace) -> NotebookSession:
        provider = "simulated" if args.simulated else "anthropic" if args.anthropic else None
        changes = {"model": args.model, "context_window": args.window, "effort": args.effort, "context": args.context,
                   "notes": args.notes,
                   "max_session_budget_usd": args.max_session_budget, "session_token_budget": args.session_token_budget,
                   "server_tools": ("web_search",) if args.web_search else None, "permission_mode": args.permissions}
        current = self.current
        switch = current is not None and (
            (provider and provider != current.agent.provider.name)
            or (args.endpoint and args.endpoint != getattr(current.agent.endpoint, "name", None)))
        if args.new or current is None or switch:
            return self.new_session(provider=provider, endpoint=args.endpoint, for_prompt=True, **changes)
        changes = {k: v for k, v in changes.items() if v is not None}
        if changes:  # --model / --window / --effort / --context / --notes / --web-search / … hold for later prompts
            current.agent.reconfigure(**changes)
        return current

    def _session_with_options(self, args: Namespace) -> NotebookSession:
        """The session, with the cell's ``--allow`` added; the cell's options checked against the
        admin policy before anything is shown (an ``AdminLockedError`` names the admin setting)."""
        sess = self._session_for(args)
        agent, policy = sess.agent, sess.agent.admin
        if policy is not None:
            policy.check_limits(RunLimits(max_budget_usd=args.max_budget))
        if args.allow:
            agent.reconfigure(allow=tuple(dict.fromkeys((*agent.config.allow, *args.allow))))
        return sess

    # --- %%agent -----------------------------------------------------------------------------
    @cell_options(name="%agent")  # IPython's help formatter adds a "%": the help reads %%agent
    @cell_magic("agent")  # type: ignore[arg-type]  # IPython types the decorator loosely
    def agent_cell(self, line: str, cell: str) -> None:
        """The cell is a prompt; the conversation continues across cells."""
        # The fallback path: normally agent_cell_transformer rewrites the cell to await run_prompt.
        warmup.imported()  # first: the executor imports the tools, pydantic, tiktoken (see run_prompt)
        from ..blocking import run_blocking
        from .executor import refuse_inside_tool_code

        refuse_inside_tool_code()  # here, on the thread of the tool's code: run_blocking runs the prompt on another

        def abort() -> None:
            if self.current is not None:
                self.current.agent.abort()

        try:
            run_blocking(lambda: self.run_prompt(line, cell), on_interrupt=abort, name="nbagent-cell")
        except KeyboardInterrupt:
            raise AgentInterrupted() from None  # the cell fails: "Run All" must stop here

    async def run_prompt(self, line: str, cell: str) -> Done | None:
        """Parse options, run the prompt with an :class:`AgentView`, return the ``Done`` event.

        Raises what fails the cell: ``UsageError`` for bad options, ``AgentRunRefused`` when the
        run cannot start, ``AgentRunFailed`` for ``Done("error")``, a ``KeyboardInterrupt`` when
        interrupted (see :mod:`.outcome`).
        """
        warmup.imported()  # never from the notebook's folder (see engine.disk.own_imports)
        # after it: the executor imports the tools, pydantic and tiktoken (their first import was unguarded)
        from .executor import refuse_inside_tool_code

        refuse_inside_tool_code()
        with BusyHold():  # the front-end reads "busy" all along, a wait for Allow included
            return await self._run_prompt(line, cell)

    async def _run_prompt(self, line: str, cell: str) -> Done | None:
        args = command_args.parse(self.agent_cell, line)
        if args is None:  # --help
            return None
        prompt = cell.strip()
        if not prompt:
            raise UsageError("%%agent needs a prompt in the cell body. See %agent help.")
        output = self._namespace_value(args.schema, "--schema") if args.schema else None
        from .document import cell_run

        try:
            plan = cell_run.plan(self, prompt, args)
            if plan is not None:  # a recorded turn: shown again, no request sent
                await cell_run.replay(self, plan)
                if args.out:
                    cell_run.bind_replayed(self, args.out, plan, output)
                return None
            sess = self._session_with_options(args)
        except AgentCellError:
            raise
        except NbAgentError as exc:
            raise refused(exc) from None
        with cell_run.watch_turn(self, sess) as watch:
            done = await self._run_with_view(sess, args, prompt, output, watch)
        if self._new_session_wanted:
            self._new_session_wanted = False
            self.new_session()
        check_done(done, cancelled=sess.view is not None and sess.view.cancelled, model=sess.agent.config.model)
        return done

    async def _run_with_view(self, sess: NotebookSession, args: Namespace, prompt: str, output: object,
                             watch: "TurnWatch | None" = None) -> Done | None:
        from ..engine.contracts.events import Done
        from .document import cell_run
        from .document.replayed_options import options_of

        agent = sess.agent
        view = self.new_view(sess)
        cells = cell_run.materialiser(self, sess, args)
        await cells.begin()
        if not sess.retrying:  # a retry sends the last prompt again, with the options its cell gave
            sess.last_options = options_of(args)
        sess.last_prompt, sess.retrying = prompt, False
        if sess.executor is not None:
            sess.executor.on_execute = cell_run.execution_shown(view, sess)  # what its code displayed, in its card
        view.display()
        done: Done | None = None
        limits = RunLimits(max_requests=args.max_requests, max_budget_usd=args.max_budget,  # this prompt only
                           token_budget=args.token_budget)
        self.document.linking(agent)  # this notebook's before its first request: a restart may cut the turn short
        token = aborts.register_abort(agent.abort)  # thread-safe, whatever loop the run is on
        self.running += 1
        before, sess.last_outcome = sess.last_outcome, "interrupted"  # until a Done says otherwise
        try:
            async for event in agent.run(prompt, limits=limits, asker=view, output=output):
                view.handle(event)
                await cells.handle(event)
                if isinstance(event, Done):
                    done, sess.last_outcome = event, event.reason
        except NbAgentError as exc:  # refused to start (e.g. a run already in progress)
            sess.last_outcome = before
            raise refused(exc) from None
        except (asyncio.CancelledError, KeyboardInterrupt):
            view.interrupted(agent.totals.spent_usd, agent.totals.spent_unpriced_requests)
            raise
        finally:
            self.running -= 1
            aborts.unregister_abort(token)
            view.finish()
        if args.out and done is not None and (output is None or done.output is not None):
            assert self.shell is not None
            self.shell.user_ns[args.out] = agent.last_output
        shown = view.finish()
        record = self.document.recorded(agent, prompt, shown, done, watch.inputs(cells.made) if watch is not None else None,
                                        sess.last_options)  # signed: its options line is not
        await cell_run.after_run(self, cells, agent.turn, record, shown)
        return done

    def new_view(self, sess: NotebookSession, *, session_cost: float | None = None, provider: str | None = None,
                 session_unpriced: int | None = None) -> "AgentView":
        """An :class:`AgentView` for one prompt of ``sess`` (live or replayed), shown in the cell."""
        from .document.page import shown_check
        from .view import AgentView

        agent = sess.agent
        if provider is None:  # an endpoint is named with its host: a profile name alone says not where keys go
            provider = agent.provider.name + (f" at {agent.endpoint.where}" if agent.endpoint is not None else "")
        view = AgentView(
            model=agent.config.model, provider=provider, context_window=agent.context_window,
            max_allowed=_max_allowed(agent.context_window),
            session_cost=agent.totals.spent_usd if session_cost is None else session_cost,
            recorded_spend=sess.recorded_spend if session_cost is None else 0.0,  # a replay shows its own
            session_unpriced=agent.session.spent.unpriced_requests if session_unpriced is None else session_unpriced,
            permission_mode=agent.config.permission_mode, context_policy=str(agent.config.context),
            on_retry_now=agent.retry_now, on_cancel=sess.stop,
            on_new_session=self._schedule_new_session, cell_shown=shown_check(self.document.bridge),
        )
        sess.view = view
        return view

    _new_session_wanted = False

    def _namespace_value(self, name: str, option: str) -> object:
        from IPython.core.error import UsageError

        assert self.shell is not None
        if name not in self.shell.user_ns:
            raise UsageError(f"{option} {name}: no such name in the notebook's namespace "
                             "(define the pydantic model in a cell first)")
        return self.shell.user_ns[name]

    def _schedule_new_session(self) -> None:
        self._new_session_wanted = True

    async def fix_async(self, options: str) -> Done | None:
        """``%agent fix [--insert-code]``: explain and fix the last failed cell (see :mod:`.again`)."""
        warmup.imported()  # first, as in run_prompt: `%agent fix` may be a kernel's first agent use
        from .again import fix
        from .executor import refuse_inside_tool_code

        refuse_inside_tool_code()
        return await fix(self, options)

    async def retry_async(self, line: str) -> None:
        """``%agent retry``: run the last prompt again from where its failed turn began (see :mod:`.again`)."""
        warmup.imported()  # first, as in run_prompt
        from .again import retry
        from .executor import refuse_inside_tool_code

        refuse_inside_tool_code()
        await retry(self, line)

    # --- %agent ------------------------------------------------------------------------------
    @line_magic("agent")  # type: ignore[arg-type]
    def agent_line(self, line: str) -> None:
        """Replaced below by the help generated from the commands' declarations (``%agent?``)."""
        with installed_only():  # what a command imports: never from the notebook's folder (see engine.disk.own_imports)
            commands.run(self, line)


# %agent? shows this docstring: the same text as %agent help, generated from the declarations.
AgentMagics.agent_line.__doc__ = commands.overview(AgentMagics.agent_cell)  # type: ignore[assignment]


def _max_allowed(window: int) -> float:
    from ..engine.context import get_context_window_info

    return get_context_window_info(window).max_allowed_size
