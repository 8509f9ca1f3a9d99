"""The conversation loop: ``QueryEngine.submit_message`` as an async generator of events.

One API request per iteration (:mod:`~nbagent.engine.loop.request`); tool calls are validated,
permitted and run in order (:mod:`~nbagent.engine.loop.tool_runner`); the loop stops at end of turn, a
limit, an abort or an unrecovered error, and always leaves a valid history behind. State lives in
the :class:`~nbagent.engine.state.session.Session`; settings in one frozen
:class:`~nbagent.engine.contracts.config.SessionConfig`; collaborators are passed in. What it does
to the session between runs (rollback, ``%agent compact``) is in :mod:`~nbagent.engine.loop.between_runs`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, AsyncGenerator, AsyncIterator, Sequence

from ..api_facts.models import context_window_for
from ..api_facts.tokens import TokenCounter
from ..contracts.abort import Aborted, AbortGuard, RunControl
from ..contracts.config import RunLimits, SessionConfig
from ..contracts.events import STREAM_DELTAS, Done, Event, ModelFallback, Notice, RequestCompleted, ServerToolResult, Totals
from ..contracts.hooks import Hooks
from ..contracts.messages import ContentBlock, prompt_blocks, result_sources, server_tool_calls, tool_uses
from ..contracts.permissions import (
    Asker,
    PermissionDenial,
    PermissionGate,
    TurnEnded,
    cancel_on_failure,
    denials_in,
    permission_callback,
)
from ..contracts.provider import Provider
from ..contracts.tool_api import StaticTools, ToolLike, ToolSource
from ..state.session import Session
from .between_runs import BetweenRuns
from .collaborators import Collaborators
from .completion import record_completed_request
from .facts import FactsFocus, ImagesSeen, KernelFacts, KernelFactsTracker, agent_code, facts_blocks, prompt_words
from .notes import NOTES_TOOL, SessionNotes, notes_blocks
from .pacing import RatePacer, pacer_for
from .prompt import RequestPrompt, last_prompt_mode, mode_blocks
from .request import BudgetReached, Prepared, RequestCancelled, RequestOutcome, attempt_api_request
from .request_run import RequestRun, Sleep
from .run_secrets import RunSecrets
from .sanitize import Sanitizer, replaced_notice
from .structured import OutputSpec, StructuredRun
from .summary_layer import SummaryLayer
from .tool_calls import answer_tool_calls
from .tool_runner import NOT_RUN
from .turn import (
    UNANSWERED,
    PromptLimits,
    RunInProgressError,
    SessionClosedError,
    TurnState,
    cancelled,
    checked_prompt,
    done_event,
    preview,
    save_outcome,
    stop_notice,
    take_structured_answer,
    unknown_tool_notices,
    unpriced_budget_notice,
)

if TYPE_CHECKING:  # typing.Unpack is 3.11+
    from typing_extensions import Unpack

__all__ = ["QueryEngine", "RunInProgressError", "SessionClosedError"]

class QueryEngine(RunSecrets, BetweenRuns):
    """Runs the agent loop for one session (see the query-engine spec)."""

    def __init__(
        self, config: SessionConfig, *, provider: Provider, tools: Sequence[ToolLike] = (),
        tool_sources: Sequence[ToolSource] = (), session: Session | None = None, executor: object = None,
        kernel_facts: KernelFacts | None = None, sleep: Sleep = asyncio.sleep, hooks: Hooks | None = None,
        secrets: Sequence[str | None] = (),
    ) -> None:
        self.provider = provider
        self.session = session if session is not None else Session(config.task_dir, model=config.model)
        self.sources: list[ToolSource] = [StaticTools(tools), *tool_sources]
        self.executor, self.kernel_facts, self.sleep = executor, kernel_facts, sleep
        self._secrets = tuple(secrets)  # e.g. the Agent's api_key; never in the config or on disk
        self.counter = TokenCounter()
        self._summary = SummaryLayer()
        self.gate = PermissionGate(None, always=self.session.allowed_always, on_always=self.session.allow_always,
                                   denials=denials_in(self.session.events))
        self.hooks = Hooks.from_mapping(hooks)
        self._config = config
        self._apply(config)
        self._run: RunControl | None = None
        self._running_prompt: str | None = None
        self._close_after_run = False
        self.closed = False
        """Whether :meth:`close_session` was called: a later prompt is refused before any request."""
        self._prompt_mode: str | None = None  # the permission mode of the last prompt sent (see mode_blocks)
        self._told: set[str] = set()  # models whose unpriced-budget notice was given
        self.without: set[str] = set()
        """Request features this session's endpoint refused: left out from then on (see loop/degrade.py)."""
        self._short_told: set[str] = set()  # secret_env names told to be too short to redact
        self._structured: StructuredRun | None = None
        self._facts = KernelFactsTracker()
        self._images_seen = ImagesSeen()  # kept up with the history, not scanned per prompt
        self._notes = SessionNotes(self.session)
        self._prompt = RequestPrompt()
        self._sanitizer: tuple[tuple[str | None, ...], Sanitizer] | None = None  # by the secrets' values
        self._run_env: tuple[str, ...] | None = None  # the credential-named variables' values, read at the run's start

    # ----- settings ---------------------------------------------------------------------------
    @property
    def config(self) -> SessionConfig:
        """The settings in force for the next prompt (read-only: use :meth:`reconfigure`)."""
        return self._config

    def reconfigure(self, **changes: object) -> SessionConfig:
        """Change settings for later prompts (a run in progress keeps the settings it started with)."""
        if "task_dir" in changes and changes["task_dir"] != self._config.task_dir:
            raise ValueError("task_dir cannot change during a session: save a copy with save(path), "
                             "or continue a folder with Agent.resume(path)")
        self._apply(self._config.replace(**changes))
        return self._config

    def _apply(self, config: SessionConfig) -> None:
        self._config = config
        self.session.model = config.model
        self.gate.allow, self.gate.deny = frozenset(config.allow), frozenset(config.deny)
        self.gate.mode, self.gate.cwd = config.permission_mode, config.cwd
        self.gate.task_dir = self.session.task_dir

    # ----- public state -----------------------------------------------------------------------
    @property
    def tools(self) -> dict[str, ToolLike]:
        """Every tool offered now, in source order (a later source never shadows an earlier name)."""
        tools: dict[str, ToolLike] = {}
        for source in self.sources:
            for t in source.tools():
                tools.setdefault(t.name, t)
        return tools

    @property
    def totals(self) -> Totals:
        return self.session.totals

    @property
    def denials(self) -> list[PermissionDenial]:
        return list(self.gate.denials)

    @property
    def context_window(self) -> int:
        config = self._config
        return context_window_for(config.model, config.context_window, config.prices, config.known_windows)

    @property
    def notes(self) -> str:
        """The agent's notes file as it stands ('' when there are none; see :mod:`.notes`)."""
        return self._notes.current() or ""

    # ----- the loop ---------------------------------------------------------------------------
    async def submit_message(
        self, prompt: str | Sequence[ContentBlock], *, limits: RunLimits | None = None, asker: Asker | None = None,
        output: object = None,
    ) -> AsyncIterator[Event]:
        """Send ``prompt`` and run the loop until the model ends its turn (see module docstring).

        An empty prompt raises ``ValueError`` and a second concurrent run
        :class:`RunInProgressError`, before anything changes. ``asker`` answers permission prompts
        and failed requests (None: headless, deny and cancel); ``limits`` hold for this run only.
        ``output`` (a pydantic model or JSON schema, see :mod:`~nbagent.engine.loop.structured`) asks
        for the final answer as validated data, carried by ``Done.output``.
        """
        self.check_open()
        new_blocks = prompt_blocks(prompt)
        structured = StructuredRun(OutputSpec.of(output)) if output is not None else None
        if self._running_prompt is not None:
            raise RunInProgressError(self._running_prompt)
        # Read before the run is marked as running (nothing here may leave it marked): the
        # kernel's credential variables too, a cell's db_password = "…" is in its input.
        run_env = self.credential_values()
        control = RunControl()
        control.bind()
        self._run, self._running_prompt = control, preview(prompt)
        self._run_env = run_env
        self._structured = structured
        mode = self._config.permission_mode
        previous = self._prompt_mode or last_prompt_mode(self.session.history)
        new_blocks = [*new_blocks, *mode_blocks(mode, previous)]
        self._prompt_mode = mode
        if structured is not None:
            # In the prompt, not the tools or system prompt: they lead the cached prefix (see structured).
            new_blocks = [*new_blocks, {"type": "text", "text": structured.spec.instruction()}]
        try:
            # aclosing: a consumer that stops listening must still get the history repaired now.
            async with aclosing(self._turn(new_blocks, limits or RunLimits(), asker, control)) as events:
                async for event in events:
                    yield event
        finally:
            self._run = self._running_prompt = self._structured = self._run_env = None
            if self._close_after_run:  # close() came during the run: the run has saved its end
                self.session.close()

    async def _turn(self, new_blocks: list[ContentBlock], limits: RunLimits, asker: Asker | None,
                    control: RunControl) -> AsyncGenerator[Event, None]:
        session = self.session
        new_blocks, replaced, too_big = checked_prompt(self.sanitizer(), self._config, limits, self.counter,
                                                       self.context_window, new_blocks)
        if replaced:
            session.notices.append(replaced_notice(replaced, "the prompt"))
        if too_big is not None:
            yield session.log(Done(reason="error", totals=session.totals, error=too_big))
            session.save_events()
            return
        run = self._request_run(control, asker)
        sanitizer = self.sanitizer()
        focus = FactsFocus(prompt_words(new_blocks), agent_code(session.history), self._config.kernel_context_tokens,
                           self._images_seen(session.history, session.deleted_range), sanitizer.redact)
        # The kernel's state (cell inputs, outputs, the last error, variables' reprs) is user text:
        # redacted as it is read, and the blocks again as they enter the history.
        facts = facts_blocks(self._facts, self.kernel_facts, session.history, session.deleted_range, focus,
                             redact=sanitizer.strings)
        self._notes.file(self._config.notes)  # made on first use once the setting is on
        notes = self._notes.current()  # as the agent left them (kept in the turn's mark for rollback)
        kernel_blocks, _ = sanitizer.value(facts + notes_blocks(notes, self._config.notes))
        turn = session.begin_turn(new_blocks + kernel_blocks, notes=notes)
        state = TurnState(turn=turn, model=run.config.model, structured=self._structured)
        try:
            # In the try: a consumer that stops reading here still gets the turn begun closed (else
            # the next prompt merged into it); the notices not handed over stay for the next prompt.
            for notice in [*session.notices, *unpriced_budget_notice(run.config, limits, self._told)]:
                yield session.log(Notice(level="warning", message=notice))
            session.notices.clear()
            async with aclosing(self._requests(run, state, limits)) as events:
                async for event in events:
                    yield event
        except Aborted:
            state.reason = "aborted"
        except RequestCancelled as exc:
            cancelled(state, exc, session)
        except BudgetReached as exc:
            state.reason, state.stopped = exc.reason, exc.line
        except TurnEnded as exc:  # a question nobody could answer: its call is answered, the rest not run
            state.reason, state.error = "error", str(exc)
        finally:
            run.guard.stop()
            # Whatever happened (abort, error, interrupt, a closed generator), every tool_use gets
            # its tool_result before anything is saved, and a prompt that got no reply at all stays
            # its own turn: the next prompt is never merged into it.
            session.answer_dangling(state.answered, NOT_RUN)
            session.close_unanswered(UNANSWERED.get(state.reason, UNANSWERED["aborted"]))
            session.end_turn(turn)
        for event in save_outcome(session, state):
            yield session.log(event)
        done = done_event(state, session.totals)
        warning = await self.hooks.notify("on_done", done)
        if warning:
            yield session.log(Notice(level="warning", message=warning))
        yield session.log(done)
        session.save_events()

    @property
    def pacer(self) -> RatePacer:
        """What this session's provider knows of the key's shared rate limit (see :mod:`.pacing`)."""
        return pacer_for(self.provider)

    def _request_run(self, control: RunControl, asker: Asker | None) -> RequestRun:
        """The run's settings (fixed for the whole run) and collaborators."""
        guard = AbortGuard(control.abort_event)
        guard.start()
        self.gate.can_use_tool = permission_callback(asker)
        return RequestRun(config=self._config, provider=self.provider, session=self.session, guard=guard,
                          control=control, counter=self.counter, sleep=self.sleep, sources=self.sources,
                          ask_failure=asker.ask_api_failure if asker else cancel_on_failure,
                          context_window=self.context_window, without=self.without, pacer=self.pacer)

    async def _requests(self, run: RequestRun, state: "TurnState", limits: RunLimits) -> AsyncGenerator[Event, None]:
        """Requests and tool calls until the model ends its turn or a limit is reached."""
        session = self.session
        # Budgets count money billed (session.spent: a rollback never lowers it), not the history.
        bounds = PromptLimits.of(run.config, limits, session.spent.budget_usd, session.spent.tokens)
        run = dataclasses.replace(run, budget_reached=lambda: bounds.budget_reached(session.spent.budget_usd,
                                                                                  session.spent.tokens))
        requests = 0
        while True:
            spent = session.spent
            reached = bounds.reached(requests, spent.budget_usd, spent.tokens)
            if reached is not None:
                state.reason, state.stopped = reached
                return
            if self._summary.due(run.config, session.previous_usage, run.context_window, session.history):
                async with aclosing(self._compact(run, state.turn, None)) as events:
                    async for event in events:
                        yield event
            requests += 1
            outcome: RequestOutcome | None = None
            sanitizer = self.sanitizer()  # for the reply and the tool calls it makes
            async with aclosing(self._one_request(run, state, sanitizer)) as items:
                async for item in items:
                    if isinstance(item, RequestOutcome):
                        outcome = item
                    else:
                        yield item
            assert outcome is not None  # _one_request ends with it, or raises
            stop = outcome.complete.stop_reason
            notice = stop_notice(outcome.complete)
            if notice is not None:
                yield session.log(notice)
            if stop == "refusal":
                # The API asks for the refused exchange to be removed before continuing (else it
                # refuses again): the transcript and records keep it, the next request does not.
                state.reason = "refusal"
                session.withdraw_turn(state.turn)
                return
            if stop in ("pause_turn", "compaction"):
                # A long server-tool turn, or a server compaction that paused: send the content
                # back (the compaction block verbatim) so the model goes on.
                continue
            uses = tool_uses(session.history[-1])
            if not uses:
                if take_structured_answer(self.session, state.structured):
                    continue
                return
            # What this request offered is what may run.
            calls = answer_tool_calls(run, state, uses, outcome.offered, gate=self.gate, hooks=self.hooks,
                                      executor=self.executor, sanitizer=sanitizer, refresh=self.sanitizer_after_code)
            async with aclosing(calls) as events:
                async for event in events:
                    yield event

    async def _one_request(self, run: RequestRun, state: "TurnState",
                           sanitizer: Sanitizer) -> AsyncGenerator[Event | RequestOutcome, None]:
        """One API request, its events, and the completed request recorded in the session; the
        last item is the request's :class:`RequestOutcome` (for the loop, not an event)."""
        warning = await self.hooks.notify("pre_request", state.turn, len(self.session.records) + 1)
        if warning:
            yield self.session.log(Notice(level="warning", message=warning))
        for warning in self._prompt.rules_warnings(self._config, state.turn):
            yield self.session.log(Notice(level="warning", message=warning))
        request = attempt_api_request(run, model=state.model, prepare=self._prepare, turn=state.turn,
                                      request_no=len(self.session.records) + 1, sanitizer=sanitizer)
        outcome: RequestOutcome | None = None
        async with aclosing(request) as items:
            async for item in items:
                if isinstance(item, STREAM_DELTAS):  # most items: passed on, not logged
                    yield item
                    continue
                if isinstance(item, RequestOutcome):
                    outcome = item
                    continue
                if isinstance(item, ModelFallback):
                    state.model = item.to_model  # a fallback lasts for the rest of this turn only
                yield self.session.log(item)
        assert outcome is not None  # attempt_api_request ends with it, or raises
        record, notice = record_completed_request(self.session, run, outcome, state, sanitizer)
        if notice is not None:
            yield self.session.log(notice)
        for use, result in server_tool_calls(self.session.history[-1]):
            sources, error = result_sources(result)
            yield self.session.log(ServerToolResult(tool_use_id=str(use.get("id", "")), name=str(use.get("name", "")),
                                                    input=use.get("input"), sources=sources, error=error))
        yield self.session.log(RequestCompleted(record=record))
        yield outcome

    # ----- pieces of the loop -----------------------------------------------------------------
    def _prepare(self) -> Prepared:
        """System prompt, tool definitions and offered tools of the next request (after the
        tool-server wait, so servers that connected during it are offered)."""
        offered = self.tools
        if (notes := self._notes.tool(self._config.notes)) is not None:
            offered[NOTES_TOOL] = notes
        # Rules files are user text: a key in AGENTS.md is not sent either (the request's sanitizer, just made).
        sanitizer = self._sanitizer[1] if self._sanitizer is not None and self._run is not None else self.sanitizer()
        system = sanitizer.redact(self._prompt.system(self._config, self.session.turn, tuple(offered)))
        # So are an MCP server's tool descriptions and schemas ("queries the database at postgresql://
        # app:<password>@…", a token as a default): every request carries them, and sent_requests.json.
        definitions = self._prompt.definitions(offered.values(), sanitizer)
        return Prepared(system, definitions, offered,
                        tuple(unknown_tool_notices(self._config, offered, self._told)))

    @classmethod
    def resume(cls, task_dir: str | Path, config: SessionConfig, **collaborators: Unpack[Collaborators]) -> "QueryEngine":
        """An engine continuing the session saved in ``task_dir`` (see :meth:`Session.load`)."""
        session = Session.load(task_dir)
        return cls(config.replace(task_dir=Path(task_dir)), session=session, **collaborators)

