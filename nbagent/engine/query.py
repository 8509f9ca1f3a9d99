"""The conversation loop: ``QueryEngine.submit_message`` as an async generator of events.

One API request per iteration (see ``api_request``); tool calls are validated, permitted and run
in order; the loop stops at end of turn, a limit, an abort or an unrecovered error, and always
leaves a valid history behind.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping, Sequence

from .abort import AbortGuard, Aborted
from .api_request import (
    OnApiFailure, RequestCancelled, RequestOutcome, RequestSettings, RequestState, Sleep,
    attempt_api_request, cancel_on_failure,
)
from .context import ContextManager, RequestUsage, get_context_window_info
from .cost import cost_of
from .events import (
    Done, DoneReason, Event, Notice, PermissionAsked, PermissionDenied, TextDelta, ThinkingDelta,
    ToolResult, ToolUse, ToolUseDelta, Totals, TurnCompleted, TurnRecord,
)
from .file_state import FileStateCache
from .messages import tool_uses
from .models import DEFAULT_MODEL, ModelInfo, context_window_for
from .permissions import Allow, CanUseTool, Deny, PermissionDenial, PermissionGate
from .prompt import SystemPromptContext, VariableInfo, build_system_prompt, read_ignore_patterns, read_rules
from .session import SessionStore, TurnMark, totals_from_records
from .stream import Provider
from .tokens import TokenCounter
from .tool_api import ToolContext, ToolInputError, ToolLike, ToolOutput

DEFAULT_TOOL_OUTPUT_LIMIT = 30_000
_DELTAS = (TextDelta, ThinkingDelta, ToolUseDelta)
KernelFacts = Callable[[], tuple[Sequence[VariableInfo], Sequence[str]]]


@dataclass(frozen=True)
class QueryEngineConfig:
    """One session's configuration (frozen: make a new one with ``dataclasses.replace``)."""

    provider: Provider
    """Where replies come from: ``nbagent.providers.anthropic`` (real or simulated API)."""
    cwd: Path = field(default_factory=Path.cwd)
    """Working directory: file tools resolve paths here and refuse paths outside it."""
    model: str = DEFAULT_MODEL
    fallback_model: str | None = None
    """Used for the rest of a turn when the primary fails with overloaded/not_found after retries."""
    tools: Sequence[ToolLike] = ()
    can_use_tool: CanUseTool | None = None
    """Asked about every non-read-only tool call; None (headless) denies them with a clear reason."""
    allow: Sequence[str] = ()
    """Tool names allowed without asking."""
    mcp_servers: Mapping[str, Any] = field(default_factory=dict)
    initial_messages: Sequence[dict[str, Any]] = ()
    custom_system_prompt: str | None = None
    append_system_prompt: str | None = None
    thinking_budget: int | None = None
    """Extended thinking budget in tokens (None: off)."""
    max_turns: int | None = None
    """Most API requests per ``submit_message``."""
    max_budget_usd: float | None = None
    """Stop before the next request once the session's cost reaches this."""
    max_tokens: int = 8192
    context_window: int | None = None
    """Override of the model table's window (a tiny one makes truncation visible in demos)."""
    auto_condense: bool = False
    task_dir: Path | None = None
    """Persistence folder (None: in memory only)."""
    on_api_failure: OnApiFailure = cancel_on_failure
    abort: asyncio.Event | None = None
    prices: Mapping[str, ModelInfo] | None = None
    allowed_paths: Sequence[Path] = ()
    executor: Any = None
    """The python tool's executor (the notebook supplies one on the live namespace)."""
    shell_enabled: bool = False
    tool_output_limit: int = DEFAULT_TOOL_OUTPUT_LIMIT
    max_retry_delay: float = 60.0
    sleep: Sleep = asyncio.sleep
    """Injectable for tests (a fake clock instead of real waits)."""
    kernel_facts: KernelFacts | None = None
    """Returns (user variables, recent cell inputs) for the system prompt."""
    in_notebook: bool = False
    wait_for_tools: Callable[[], Awaitable[list[str]]] | None = None
    """Bounded wait for tool servers before each request; returns warnings to show."""
    dynamic_tools: Callable[[], Sequence[ToolLike]] | None = None
    """Tools that come and go during a session (MCP servers), read before each request."""


@dataclass(frozen=True)
class SentRequest:
    """What the model saw at one request (kept in memory for ``%agent saw``)."""

    request: int
    turn: int
    model: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[str]


def _truncate_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    keep = max(limit - 80, 0)
    head, tail = text[: keep // 2], text[len(text) - keep // 2:]
    omitted = len(text) - len(head) - len(tail)
    return f"{head}\n... [{omitted:,} characters omitted] ...\n{tail}"


def _clean_assistant(message: dict[str, Any]) -> dict[str, Any]:
    """The API rejects empty text blocks in later requests: drop them (keep one if nothing else)."""
    content = [b for b in message.get("content", []) if not (b.get("type") == "text" and not b.get("text"))]
    if not content:
        content = [{"type": "text", "text": "(no reply)"}]
    return {"role": "assistant", "content": content}


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
        self.store = SessionStore(config.task_dir) if config.task_dir else None
        if self.store is not None:
            self.context_manager.task_dir = config.task_dir  # type: ignore[attr-defined]

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
        return context_window_for(self.config.model, self.config.context_window)

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
        """Send ``prompt`` and run the loop until the model ends its turn (see module docstring)."""
        self._loop = asyncio.get_running_loop()
        self._abort.clear()
        guard = AbortGuard(self._abort)
        guard.start()
        self.turn += 1
        turn = self.turn
        self._append_user(prompt)
        self._persist()
        reason: DoneReason = "end_turn"
        error: str | None = None
        pending: list[dict[str, Any]] = []  # tool_use blocks not yet answered
        answered: list[dict[str, Any]] = []
        requests_this_turn = 0
        try:
            while True:
                if self.config.max_turns is not None and requests_this_turn >= self.config.max_turns:
                    reason = "max_turns"
                    break
                budget = self.config.max_budget_usd
                if budget is not None and requests_this_turn > 0 and self.totals.cost_usd >= budget:
                    reason = "max_budget"
                    break
                requests_this_turn += 1
                outcome: RequestOutcome | None = None
                system = self._system_prompt()
                tool_defs = [self._definition(t) for t in self.tools.values()]
                async for item in attempt_api_request(
                    self._settings(), self.state, system=system, tools=tool_defs, turn=turn,
                    request_no=len(self.records) + 1, guard=guard, counter=self.counter,
                ):
                    if isinstance(item, RequestOutcome):
                        outcome = item
                    else:
                        if getattr(item, "kind", "") == "context_truncated":
                            self.truncations += 1
                            # Hidden reads are gone for the model: "unchanged since turn N" would lie.
                            self.file_state.invalidate_reads()
                        yield self._log(item)
                assert outcome is not None
                record = self._complete_request(outcome, turn, system, tool_defs)
                yield self._log(TurnCompleted(record=record))
                message = self.history[-1]
                uses = tool_uses(message)
                if outcome.complete.stop_reason == "refusal":
                    reason = "refusal"
                if not uses:
                    break
                pending, answered = list(uses), []
                for use in uses:
                    guard.check()
                    async for ev in self._run_tool(use, turn, guard, answered):
                        yield self._log(ev)
                    pending.pop(0)
                self._append_results(answered)
                pending, answered = [], []
                self._persist()
                if reason == "refusal":
                    break
        except Aborted:
            reason = "aborted"
        except RequestCancelled as exc:
            reason, error = "error", str(exc)
        finally:
            guard.stop()
            # Whatever happened, every tool_use gets its tool_result before anything is saved.
            if pending:
                done_ids = {b["tool_use_id"] for b in answered}
                for use in pending:
                    if use["id"] not in done_ids:
                        answered.append(_error_result(use["id"], "Not run: the run was stopped before this tool call."))
                self._append_results(answered)
            self._mark_turn(turn)
            self._persist()
        yield self._log(Done(reason=reason, totals=self.totals, error=error))
        self._persist_events()

    # ----- pieces of the loop ---------------------------------------------------------------
    def _settings(self) -> RequestSettings:
        return RequestSettings(
            provider=self.config.provider, context_manager=self.context_manager, model=self.config.model,
            context_window=self.context_window, max_tokens=self.config.max_tokens,
            fallback_model=self.config.fallback_model, thinking_budget=self.config.thinking_budget,
            max_retry_delay=self.config.max_retry_delay, on_api_failure=self.config.on_api_failure,
            sleep=self.config.sleep, retry_now=self.retry_now_event, on_context_changed=self._persist_context,
            wait_for_tools=self.config.wait_for_tools,
        )

    def _definition(self, tool: ToolLike) -> dict[str, Any]:
        return {"name": tool.name, "description": tool.description, "input_schema": tool.schema()}

    def _system_prompt(self) -> str:
        cfg = self.config
        variables, inputs = cfg.kernel_facts() if cfg.kernel_facts else ((), ())
        ctx = SystemPromptContext(
            cwd=cfg.cwd, tool_names=list(self.tools), variables=variables, recent_inputs=inputs,
            rules=read_rules(cfg.cwd), ignore_patterns=read_ignore_patterns(cfg.cwd),
            custom_system_prompt=cfg.custom_system_prompt, append_system_prompt=cfg.append_system_prompt,
            in_notebook=cfg.in_notebook,
        )
        return build_system_prompt(ctx)

    def _append_user(self, prompt: str | list[dict[str, Any]]) -> None:
        new_blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else list(prompt)
        if self.history and self.history[-1]["role"] == "user":
            # Keep roles alternating (e.g. after a failed request): extend the waiting user message.
            last = self.history[-1]
            content = last["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
            self.history[-1] = {"role": "user", "content": blocks + new_blocks}
        else:
            self.history.append({"role": "user", "content": new_blocks})

    def _append_results(self, results: list[dict[str, Any]]) -> None:
        if results:
            self.history.append({"role": "user", "content": results})

    def _complete_request(self, outcome: RequestOutcome, turn: int, system: str, tool_defs: list[dict[str, Any]]) -> TurnRecord:
        c = outcome.complete
        self.history.append(_clean_assistant(c.message))
        u = c.usage
        self.state.previous_usage = RequestUsage(
            ts=outcome.ts, input_tokens=u.input_tokens, output_tokens=u.output_tokens,
            cache_creation_input_tokens=u.cache_creation_input_tokens,
            cache_read_input_tokens=u.cache_read_input_tokens,
        )
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
        self.sent.append(SentRequest(record.request, turn, outcome.model, system, outcome.sent_messages,
                                     [t["name"] for t in tool_defs]))
        self._persist()
        return record

    async def _run_tool(self, use: dict[str, Any], turn: int, guard: AbortGuard,
                        answered: list[dict[str, Any]]) -> AsyncIterator[Event]:
        """Validate, permit and run one tool call; appends its result block to ``answered``."""
        uid, name, raw = use["id"], use.get("name", ""), use.get("input")
        yield ToolUse(tool_use_id=uid, name=name, input=raw)
        started = time.perf_counter()
        tool = self.tools.get(name)
        if tool is None:
            msg = f"Unknown tool {name!r}. Available tools: {', '.join(sorted(self.tools)) or 'none'}."
            answered.append(_error_result(uid, msg))
            yield ToolResult(tool_use_id=uid, name=name, content=msg, is_error=True)
            return
        try:
            tool_input = tool.validate(raw)
        except ToolInputError as exc:
            answered.append(_error_result(uid, str(exc)))
            yield ToolResult(tool_use_id=uid, name=name, content=str(exc), is_error=True)
            return
        if self.gate.will_ask(tool):
            yield PermissionAsked(tool_use_id=uid, name=name, input=tool_input)
        with guard.armed():
            decision = await self.gate.check(tool, uid, tool_input, turn)
        if isinstance(decision, Deny):
            yield PermissionDenied(tool_use_id=uid, name=name, input=tool_input, reason=decision.reason)
            msg = f"The user denied this {name} call" + (f": {decision.reason}" if decision.reason else ".")
            answered.append(_error_result(uid, msg))
            yield ToolResult(tool_use_id=uid, name=name, content=msg, is_error=True)
            return
        ctx = ToolContext(
            cwd=self.config.cwd, turn=turn, abort=self._abort, file_state=self.file_state,
            allowed_paths=tuple(self.config.allowed_paths), executor=self.config.executor,
            shell_enabled=self.config.shell_enabled, max_output_chars=self.config.tool_output_limit,
            tool_use_id=uid,
        )
        try:
            with guard.armed():
                out = await tool.run(tool_input, ctx)
        except Aborted:
            answered.append(_error_result(uid, "Interrupted: the user stopped the run while this tool was running."))
            raise
        except Exception as exc:  # a tool bug must not break the loop; the model hears about it
            out = ToolOutput(content=f"{name} failed: {type(exc).__name__}: {exc}", is_error=True)
        content = out.content
        display = out.display
        if isinstance(content, str) and len(content) > self.config.tool_output_limit:
            display = display or content
            content = _truncate_middle(content, self.config.tool_output_limit)
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": uid, "content": content}
        if out.is_error:
            block["is_error"] = True
        answered.append(block)
        text = content if isinstance(content, str) else "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict))
        yield ToolResult(tool_use_id=uid, name=name, content=text, is_error=out.is_error,
                         duration_s=time.perf_counter() - started, display=display)

    # ----- persistence, rollback, resume -------------------------------------------------
    def _log(self, event: Event) -> Event:
        if not isinstance(event, _DELTAS):
            self.events.append(event)
        return event

    def _mark_turn(self, turn: int) -> None:
        pu = dataclasses.asdict(self.state.previous_usage) if self.state.previous_usage else None
        self.marks = [m for m in self.marks if m.turn < turn]
        self.marks.append(TurnMark(turn=turn, history_len=len(self.history), deleted_range=self.state.deleted_range,
                                   ts=self.state.last_ts, records_len=len(self.records), previous_usage=pu))

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

    def _persist(self) -> None:
        if self.store is not None:
            self.store.save_history(self.history)
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
        self.state.deleted_range = mark.deleted_range
        self.state.previous_usage = RequestUsage(**mark.previous_usage) if mark.previous_usage else None
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
        """Rebuild a session from ``task_dir`` (``config.task_dir`` is set to it)."""
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
        engine.turn = max([m.turn for m in snap.marks] + [r.turn for r in snap.records] + [0])
        # A session killed between a tool_use and its results is repaired before it continues.
        last = engine.history[-1] if engine.history else None
        if last is not None and last["role"] == "assistant" and tool_uses(last):
            engine.history.append({"role": "user", "content": [
                _error_result(u["id"], "Not run: the session ended before this tool call ran.") for u in tool_uses(last)
            ]})
        return engine


def _error_result(tool_use_id: str, message: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": message, "is_error": True}
