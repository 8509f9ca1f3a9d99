"""The conversation loop: ``QueryEngine.submit_message`` as an async generator of events.

One API request per iteration (see ``api_request``); tool calls are validated, permitted and run
in order (``tool_runner``); the loop stops at end of turn, a limit, an abort or an unrecovered
error, and always leaves a valid history behind.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any, AsyncIterator

from .abort import AbortGuard, Aborted, event_for_running_loop
from .api_request import RequestCancelled, RequestOutcome, RequestSettings, RequestState, attempt_api_request
from .context import ContextManager, RequestUsage, get_context_window_info
from .cost import cost_of
from .events import (
    ContextTruncated, Done, DoneReason, Event, ModelFallback, TextDelta, ThinkingDelta, ToolUseDelta, Totals,
    TurnCompleted, TurnRecord,
)
from .file_state import FileStateCache
from .messages import blocks, clean_assistant, prompt_blocks, tool_uses
from .models import context_window_for
from .permissions import PermissionDenial, PermissionGate
from .prompt import SystemPromptContext, build_system_prompt
from .query_config import DEFAULT_TOOL_OUTPUT_LIMIT, KernelFacts, QueryEngineConfig, RulesCache, SentRequest
from .session import SessionStore, TurnMark, totals_from_records
from .tokens import TokenCounter
from .tool_api import ToolContext, ToolLike
from .tool_runner import NOT_RUN, error_result, run_tool_call

__all__ = [
    "DEFAULT_TOOL_OUTPUT_LIMIT", "KernelFacts", "QueryEngine", "QueryEngineConfig", "SentRequest",
]

_DELTAS = (TextDelta, ThinkingDelta, ToolUseDelta)


class QueryEngine:
    """Runs the agent loop for one session (see the query-engine spec)."""

    def __init__(self, config: QueryEngineConfig) -> None:
        self.config = config
        self.history: list[dict[str, Any]] = [dict(m) for m in config.initial_messages]
        self.state = RequestState(history=self.history)
        self.context_manager = ContextManager()
        self.records: list[TurnRecord] = []
        self.events: list[Event] = []
        self.marks: list[TurnMark] = []
        self.sent: list[SentRequest] = []
        self.turn = 0
        self.truncations = 0
        self.counter = TokenCounter()
        self.file_state = FileStateCache()
        self.gate = PermissionGate(config.can_use_tool, allow=tuple(config.allow))
        self.retry_now_event = asyncio.Event()
        self._abort = config.abort or asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._turn_model = config.model
        self._rules = RulesCache(config.cwd)
        self._definitions: dict[int, tuple[ToolLike, dict[str, Any]]] = {}
        self._context_saved = False
        self._offered: dict[str, ToolLike] = {}
        self.store = SessionStore(config.task_dir) if config.task_dir else None
        if self.store is not None:
            self.context_manager.task_dir = Path(config.task_dir)  # type: ignore[arg-type]

    # ----- public state -------------------------------------------------------------------
    @property
    def tools(self) -> dict[str, ToolLike]:
        """Every tool offered now: the configured ones, then any dynamic (MCP) ones."""
        tools = {t.name: t for t in self.config.tools}
        if self.config.dynamic_tools is not None:
            for t in self.config.dynamic_tools():
                tools.setdefault(t.name, t)
        return tools

    @property
    def totals(self) -> Totals:
        return totals_from_records(self.records, truncations=self.truncations)

    @property
    def deleted_range(self) -> tuple[int, int] | None:
        return self.state.deleted_range

    @property
    def denials(self) -> list[PermissionDenial]:
        return list(self.gate.denials)

    @property
    def context_window(self) -> int:
        return context_window_for(self.config.model, self.config.context_window, self.config.prices)

    @property
    def abort_event(self) -> asyncio.Event:
        return self._abort

    def abort(self) -> None:
        """Abort the running loop; safe to call from any thread."""
        loop = self._loop
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(self._abort.set)
        else:
            self._abort.set()

    def retry_now(self) -> None:
        """Cut a scheduled retry's wait short; safe to call from any thread."""
        loop = self._loop
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(self.retry_now_event.set)
        else:
            self.retry_now_event.set()

    # ----- the loop -----------------------------------------------------------------------
    async def submit_message(self, prompt: str | list[dict[str, Any]]) -> AsyncIterator[Event]:
        """Send ``prompt`` and run the loop until the model ends its turn (see module docstring).

        An empty prompt raises ``ValueError`` before anything changes.
        """
        prompt_blocks(prompt)
        self._loop = asyncio.get_running_loop()
        # An asyncio.Event binds to the first loop that waits on it; each run_sync uses a new loop.
        self._abort = event_for_running_loop(self._abort)
        self.retry_now_event = event_for_running_loop(self.retry_now_event)
        self._abort.clear()
        guard = AbortGuard(self._abort)
        guard.start()
        self.turn += 1
        turn = self.turn
        self._turn_model = self.config.model  # a fallback lasts for the rest of one turn only
        self._append_user(prompt)
        self._persist(meta=False)
        reason: DoneReason = "end_turn"
        error: str | None = None
        answered: list[dict[str, Any]] = []  # tool_result blocks of the tool calls being answered
        requests_this_turn = 0
        try:
            while True:
                if self.config.max_turns is not None and requests_this_turn >= self.config.max_turns:
                    reason = "max_turns"
                    break
                budget = self.config.max_budget_usd
                if budget is not None and self.totals.cost_usd >= budget:
                    reason = "max_budget"
                    break
                requests_this_turn += 1
                outcome: RequestOutcome | None = None
                async for item in attempt_api_request(
                    self._settings(), self.state, prepare=self._prepare, turn=turn,
                    request_no=len(self.records) + 1, guard=guard, counter=self.counter,
                ):
                    if isinstance(item, RequestOutcome):
                        outcome = item
                        continue
                    if isinstance(item, ContextTruncated):
                        self.truncations += 1
                        # Hidden reads are gone for the model: "unchanged since turn N" would lie.
                        self.file_state.invalidate_reads()
                    elif isinstance(item, ModelFallback):
                        self._turn_model = item.to_model
                    yield self._log(item)
                assert outcome is not None
                tools = self._offered  # what this request offered is what may run
                record = self._complete_request(outcome, turn)
                yield self._log(TurnCompleted(record=record))
                uses = tool_uses(self.history[-1])
                if outcome.complete.stop_reason == "refusal":
                    reason = "refusal"
                if not uses:
                    break
                answered = []
                for use in uses:
                    guard.check()
                    async for ev in run_tool_call(
                        use, tools=tools, gate=self.gate, guard=guard, make_context=self._tool_context(turn),
                        turn=turn, output_limit=self.config.tool_output_limit, answered=answered,
                    ):
                        yield self._log(ev)
                self._append_results(answered)
                answered = []
                self._persist(meta=False)
                if reason == "refusal":
                    break
        except Aborted:
            reason = "aborted"
        except RequestCancelled as exc:
            reason, error = "error", str(exc)
        finally:
            guard.stop()
            # Whatever happened (abort, error, interrupt, a closed generator), every tool_use gets
            # its tool_result before anything is saved.
            self._answer_dangling(answered)
            self._mark_turn(turn)
            self._persist()
            self._persist_events()
        yield self._log(Done(reason=reason, totals=self.totals, error=error))
        self._persist_events()

    # ----- pieces of the loop ---------------------------------------------------------------
    def _settings(self) -> RequestSettings:
        return RequestSettings(
            provider=self.config.provider, context_manager=self.context_manager, model=self._turn_model,
            context_window=self.context_window, max_tokens=self.config.max_tokens,
            fallback_model=self.config.fallback_model, thinking_budget=self.config.thinking_budget,
            max_retry_delay=self.config.max_retry_delay, on_api_failure=self.config.on_api_failure,
            sleep=self.config.sleep, retry_now=self.retry_now_event, on_context_changed=self._persist_context,
            wait_for_tools=self.config.wait_for_tools, tool_wait_s=self.config.tool_wait_s, timeout_s=self.config.request_timeout_s,
        )

    def _prepare(self) -> tuple[str, list[dict[str, Any]]]:
        """System prompt and tool definitions of the next request (after the tool-server wait)."""
        self._offered = self.tools
        return self._system_prompt(), [self._definition(t) for t in self._offered.values()]

    def _definition(self, tool: ToolLike) -> dict[str, Any]:
        """The tool's API definition, built once per tool object (schemas do not change)."""
        hit = self._definitions.get(id(tool))
        if hit is not None and hit[0] is tool:
            return hit[1]
        definition = {"name": tool.name, "description": tool.description, "input_schema": tool.schema()}
        self._definitions[id(tool)] = (tool, definition)
        return definition

    def _tool_context(self, turn: int) -> Any:
        cfg = self.config

        def make(tool_use_id: str) -> ToolContext:
            return ToolContext(
                cwd=cfg.cwd, turn=turn, abort=self._abort, file_state=self.file_state,
                allowed_paths=tuple(cfg.allowed_paths), executor=cfg.executor, shell_enabled=cfg.shell_enabled,
                max_output_chars=cfg.tool_output_limit, tool_use_id=tool_use_id,
            )

        return make

    def _system_prompt(self) -> str:
        cfg = self.config
        variables, inputs = cfg.kernel_facts() if cfg.kernel_facts else ((), ())
        rules, ignore = self._rules.get()
        ctx = SystemPromptContext(
            cwd=cfg.cwd, tool_names=list(self.tools), variables=variables, recent_inputs=inputs,
            rules=rules, ignore_patterns=ignore, custom_system_prompt=cfg.custom_system_prompt,
            append_system_prompt=cfg.append_system_prompt, in_notebook=cfg.in_notebook,
        )
        return build_system_prompt(ctx)

    def _append_user(self, prompt: str | list[dict[str, Any]]) -> None:
        new_blocks = prompt_blocks(prompt)
        if self.history and self.history[-1]["role"] == "user":
            # Keep roles alternating (e.g. after a failed request): extend the waiting user message
            # (a new object: the turn mark remembers how many blocks it had, for rollback).
            self.history[-1] = {"role": "user", "content": blocks(self.history[-1]) + new_blocks}
        else:
            self.history.append({"role": "user", "content": new_blocks})

    def _append_results(self, results: list[dict[str, Any]]) -> None:
        if results:
            self.history.append({"role": "user", "content": results})

    def _answer_dangling(self, answered: list[dict[str, Any]]) -> None:
        """If the last message calls tools, answer each call: its result if it ran, else an error."""
        last = self.history[-1] if self.history else None
        if last is None or last.get("role") != "assistant":
            return
        uses = tool_uses(last)
        if not uses:
            return
        by_id = {b.get("tool_use_id"): b for b in answered}
        self._append_results([by_id.get(u.get("id")) or error_result(u.get("id", ""), NOT_RUN) for u in uses])

    def _complete_request(self, outcome: RequestOutcome, turn: int) -> TurnRecord:
        c = outcome.complete
        self.history.append(clean_assistant(c.message))
        u = c.usage
        self.state.previous_usage = RequestUsage.from_usage(outcome.ts, u)
        info = get_context_window_info(self.context_window)
        record = TurnRecord(
            turn=turn, request=len(self.records) + 1, model=c.model or outcome.model, usage=u,
            cost_usd=cost_of(u, outcome.model, self.config.prices), context_tokens=u.prompt_tokens,
            max_allowed=info.max_allowed_size, context_window=info.context_window,
            deleted_range=self.state.deleted_range, keep=outcome.context.keep,
            file_read_saving=outcome.context.file_read_saving, retries=outcome.retries,
            stop_reason=c.stop_reason, duration_s=outcome.duration_s, ts=outcome.ts,
            estimated_input_tokens=outcome.estimated_input_tokens,
        )
        self.records.append(record)
        self.sent.append(SentRequest(record.request, turn, outcome.model, outcome.system, outcome.sent_messages,
                                     [t["name"] for t in outcome.tools]))
        self._persist()
        return record

    # ----- persistence, rollback, resume -------------------------------------------------
    def _log(self, event: Event) -> Event:
        if not isinstance(event, _DELTAS):
            self.events.append(event)
        return event

    def _mark_turn(self, turn: int) -> None:
        pu = dataclasses.asdict(self.state.previous_usage) if self.state.previous_usage else None
        last_blocks = len(blocks(self.history[-1])) if self.history else None
        self.marks = [m for m in self.marks if m.turn < turn]
        self.marks.append(TurnMark(turn=turn, history_len=len(self.history), deleted_range=self.state.deleted_range,
                                   ts=self.state.last_ts, records_len=len(self.records), previous_usage=pu,
                                   last_blocks=last_blocks))

    def _persist_context(self) -> None:
        if self.store is not None:
            self.context_manager.save(self.store.task_dir)
            self._persist_meta()

    def _persist_meta(self) -> None:
        if self.store is None:
            return
        pu = dataclasses.asdict(self.state.previous_usage) if self.state.previous_usage else None
        self.store.save_meta(model=self.config.model, deleted_range=self.state.deleted_range, records=self.records,
                             marks=self.marks, last_ts=self.state.last_ts, previous_usage=pu)

    def _persist(self, *, meta: bool = True) -> None:
        """Save the history (and ``session.json`` unless only the history changed)."""
        if self.store is not None:
            if not self._context_saved:  # the folder always holds all four files
                self._context_saved = meta = True
                self.context_manager.save(self.store.task_dir)
            self.store.save_history(self.history)
            if meta:
                self._persist_meta()

    def _persist_events(self) -> None:
        if self.store is not None:
            self.store.save_events(self.events)

    def rollback(self, turn: int) -> None:
        """Return the session to the end of ``turn``: history, range, records, and what the model
        saw (the context manager's updates newer than that turn are dropped)."""
        if turn == 0:
            mark = TurnMark(turn=0, history_len=0, deleted_range=None, ts=0, records_len=0)
        else:
            found = [m for m in self.marks if m.turn == turn]
            if not found:
                known = ", ".join(str(m.turn) for m in self.marks) or "none"
                raise ValueError(f"no turn {turn} to roll back to (turns: {known})")
            mark = found[0]
        del self.history[mark.history_len:]
        if self.history and mark.last_blocks is not None:
            # A later prompt may have been merged into the turn's last (user) message: undo that.
            last = self.history[-1]
            if isinstance(last.get("content"), list) and len(last["content"]) > mark.last_blocks:
                self.history[-1] = {**last, "content": last["content"][:mark.last_blocks]}
        self.state.deleted_range = mark.deleted_range
        self.state.previous_usage = RequestUsage(**mark.previous_usage) if mark.previous_usage else None
        self.state.last_ts = max(self.state.last_ts, mark.ts)
        self.context_manager.truncate_context_history(mark.ts)
        del self.records[mark.records_len:]
        self.sent = [s for s in self.sent if s.request <= mark.records_len]
        self.marks = [m for m in self.marks if m.turn <= turn]
        self.turn = turn
        self.file_state.invalidate_reads()
        self._persist_context()
        self._persist()

    @classmethod
    def resume(cls, task_dir: str | Path, config: QueryEngineConfig) -> "QueryEngine":
        """Rebuild a session from ``task_dir`` (``config.task_dir`` is set to it).

        A corrupt file raises :class:`~nbagent.engine.errors.CorruptFileError` naming it; nothing
        on disk is changed then.
        """
        snap = SessionStore(task_dir).load()
        engine = cls(dataclasses.replace(config, task_dir=Path(task_dir), initial_messages=()))
        engine.history.extend(snap.history)
        engine.context_manager.load(Path(task_dir))
        engine.state.deleted_range = snap.deleted_range
        engine.state.last_ts = snap.last_ts
        engine.state.previous_usage = RequestUsage(**snap.previous_usage) if snap.previous_usage else None
        engine.records = snap.records
        engine.events = snap.events
        engine.marks = snap.marks
        engine.truncations = sum(isinstance(e, ContextTruncated) for e in snap.events)
        engine.turn = max([m.turn for m in snap.marks] + [r.turn for r in snap.records] + [0])
        # A session killed between a tool_use and its results is repaired before it continues.
        last = engine.history[-1] if engine.history else None
        if last is not None and last["role"] == "assistant" and tool_uses(last):
            engine.history.append({"role": "user", "content": [
                error_result(u["id"], "Not run: the session ended before this tool call ran.") for u in tool_uses(last)
            ]})
            engine._persist()
        return engine
