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

from ..engine.contracts.config import RunLimits
from ..engine.contracts.errors import NbAgentError
from ..engine.disk.own_imports import installed_only
from . import aborts, admin_traits, command_args, commands, magics_api, warmup
from .busy import BusyHold
from .cell_transformer import run_agent_cell as run_agent_cell  # re-exported: scripts call magics.run_agent_cell
from .cell_transformer import run_agent_command as run_agent_command
from .config_refusal import RefusesConfig
from .kernel_context.figures import DisplayedImages
from .magics_settings import AgentSettings
from .new_session import new_session
from .options import cell_options
from .outcome import AgentCellError, AgentInterrupted, check_done, refused
from .session import LastError, NotebookSession

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ..engine.contracts.events import Done
    from .document.inputs import CellLog, TurnWatch
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
class AgentMagics(RefusesConfig, AgentSettings, Magics):
    """The ``%agent`` / ``%%agent`` magics; traits are the defaults (``%config AgentMagics.x``, declared in
    :class:`~.magics_settings.AgentSettings`)."""

    def __init__(self, shell: "InteractiveShell | None" = None, carried: "AgentMagics | None" = None,
                 **kwargs: object) -> None:
        """``carried``: the magics ``%unload_ext`` removed from this shell; ``%reload_ext nbagent``
        keeps the kernel's agent state, as reloading any extension keeps the kernel's (the
        conversation, what it spent, the cells it made, and the one set of watchers of the shell's
        cells and displays). Started afresh, the old session stayed open with its folder locked, and
        ``%agent cost`` said "no session yet" after money was spent."""
        super().__init__(shell=shell, **kwargs)
        admin_traits.start_from_admin_values(self)
        self.current: NotebookSession | None
        self.mode: str
        self._session_count: int
        self.last_error: LastError
        self.displayed: DisplayedImages
        self.cell_log: CellLog
        self._document: DocumentLink | None
        self.running = 0  # agent runs in progress (chat mode leaves the tool's code alone then)
        if carried is not None and carried.shell is shell and shell is not None:
            self.current, self.mode, self._session_count = carried.current, carried.mode, carried._session_count
            self.last_error, self.displayed, self.cell_log = carried.last_error, carried.displayed, carried.cell_log
            self._document = carried._document
            self.displayed.watch()  # the shell's publisher may have been replaced since (a capture)
            return
        self.current = None
        self.mode = "python"
        self._session_count = 0
        self.last_error = LastError(shell)  # one post_run_cell watcher per shell, shared by sessions
        self.displayed = DisplayedImages(shell)  # the PNGs user cells displayed, for prompts about a plot
        self._document = None
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
