"""Shared pieces of the loop's acceptance tests (issue 4): tools, fake sleeps, engine factory,
event normalisation and the persisted-history check. Everything runs against the simulated
Messages API through the real ``anthropic`` SDK; nothing touches the network or really sleeps."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any, AsyncIterator, Iterable, Sequence

import pydantic

from nbagent.engine.api_facts.cost import cost_of
from nbagent.engine.api_facts.tokens import TokenCounter
from nbagent.engine.contracts.config import RunLimits, SessionConfig
from nbagent.engine.contracts.events import (
    Done,
    Event,
    RequestCompleted,
    RequestRecord,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUseDelta,
    Totals,
)
from nbagent.engine.contracts.messages import MessageParam, history_problems
from nbagent.engine.contracts.permissions import Asker, CallbackAsker
from nbagent.engine.contracts.tool_api import Tool, ToolOutput
from nbagent.engine.loop.query import QueryEngine
from nbagent.engine.state.session import Session
from nbagent.engine.state.store import SessionStore
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import SimulatedAPI

MODEL = "claude-sonnet-5-5"
FALLBACK = "claude-haiku-4-5"
SYSTEM = "You are the test agent."


class RecordingSleep:
    """A fake ``sleep``: records each requested delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


class BlockingSleep(RecordingSleep):
    """A fake ``sleep`` that records the delay and then never returns on its own (a long wait
    that only an abort or *Retry now* can end)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = asyncio.Event()

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        self.started.set()
        await asyncio.Event().wait()


# ----- tools -----------------------------------------------------------------------------------


class Add(Tool):
    name = "add"
    description = "Add two integers."
    read_only = True

    class Input(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid", strict=True)
        a: int
        b: int

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        return ToolOutput(content=str(tool_input["a"] + tool_input["b"]))


class Echo(Tool):
    name = "echo"
    description = "Echo a text back."
    read_only = True

    class Input(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid", strict=True)
        text: str

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        return ToolOutput(content=tool_input["text"])


class Write(Tool):
    """Not read-only, so the gate asks; records every call so a test can prove it never ran."""

    name = "write"
    description = "Write a text to a (pretend) file."
    read_only = False

    class Input(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid", strict=True)
        path: str
        text: str

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        self.calls.append(dict(tool_input))
        return ToolOutput(content=f"wrote {len(tool_input['text'])} characters to {tool_input['path']}")


class Slow(Tool):
    """A read-only tool that takes ``seconds`` (real time) unless cancelled."""

    name = "slow"
    description = "Take a while."
    read_only = True

    class Input(pydantic.BaseModel):
        seconds: float = 30.0

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = 0
        self.finished = 0

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        self.started.set()
        try:
            await asyncio.sleep(tool_input["seconds"])
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        self.finished += 1
        return ToolOutput(content="slept")


class Boom(Tool):
    name = "boom"
    description = "Always fails."
    read_only = True

    class Input(pydantic.BaseModel):
        pass

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        raise RuntimeError("kaboom")


def default_tools() -> list[Tool]:
    return [Add(), Echo(), Write()]


# ----- engines ---------------------------------------------------------------------------------


class FunctionSource:
    """A :class:`ToolSource` from two functions (tests of the bounded wait and dynamic tools)."""

    def __init__(self, ready: Any = None, tools: Any = None) -> None:
        self._ready, self._tools = ready, tools

    async def ready(self) -> list[str]:
        return await self._ready() if self._ready is not None else []

    def tools(self) -> Sequence[Any]:
        return self._tools() if self._tools is not None else ()


class EngineUnderTest(QueryEngine):
    """A QueryEngine whose runs use the test's asker unless one is passed."""

    asker: Asker | None = None

    def submit_message(self, prompt: Any, *, limits: RunLimits | None = None,
                       asker: Asker | None = None, output: Any = None) -> AsyncIterator[Event]:
        return super().submit_message(prompt, limits=limits, asker=asker or self.asker, output=output)


_RENAMED = {"max_requests": "max_requests", "max_retry_delay": "max_retry_delay_s"}


def make_engine(api: SimulatedAPI, tmp_path: Path, *, tools: Sequence[Any] | None = None,
                sleep: Any = None, task: str | None = "task", can_use_tool: Any = None, on_api_failure: Any = None,
                wait_for_tools: Any = None, dynamic_tools: Any = None, executor: Any = None,
                kernel_facts: Any = None, provider: Any = None, resume: bool = False,
                **settings: Any) -> EngineUnderTest:
    """A QueryEngine on ``api`` (through the real SDK), persisting to ``tmp_path / task``
    (``resume``: continuing the session saved there)."""
    sources = [FunctionSource(wait_for_tools, dynamic_tools)] if wait_for_tools or dynamic_tools else []
    engine = EngineUnderTest(
        make_config(tmp_path, task=task, **settings), provider=provider or simulated_provider(api),
        tools=list(tools) if tools is not None else default_tools(), tool_sources=sources,
        sleep=sleep or RecordingSleep(), executor=executor, kernel_facts=kernel_facts,
        session=Session.load(tmp_path / task) if resume and task else None)
    if can_use_tool is not None or on_api_failure is not None:
        engine.asker = CallbackAsker(can_use_tool, on_api_failure)
    return engine


def make_config(tmp_path: Path, *, task: str | None = "task", **settings: Any) -> SessionConfig:
    fields: dict[str, Any] = dict(cwd=tmp_path, model=MODEL, custom_system_prompt=SYSTEM, max_requests=None,
                                  task_dir=tmp_path / task if task else None)
    fields.update({_RENAMED.get(k, k): v for k, v in settings.items()})
    return SessionConfig(**fields)


async def run(engine: QueryEngine, prompt: str) -> list[Event]:
    """Every event of one ``submit_message``."""
    return [e async for e in engine.submit_message(prompt)]


def messages_requests(api: SimulatedAPI) -> list[Any]:
    """The ``/v1/messages`` requests the API received, in order."""
    return [r for r in api.requests if r.path.rstrip("/").endswith("/v1/messages")]


# ----- normalisation and checks ----------------------------------------------------------------

_DELTA_KEY: dict[type[Event], str] = {TextDelta: "text", ThinkingDelta: "text", ToolUseDelta: "partial_json"}
_DELTAS = (TextDelta, ThinkingDelta, ToolUseDelta)


def normalise(events: Iterable[Event]) -> list[Event]:
    """Events with wall-clock fields zeroed (RequestRecord ``duration_s``/``ts``, ToolResult
    ``duration_s``) and each run of stream deltas of one content block joined into one delta
    (the simulated API's fragment boundaries are its own business; their concatenation is not)."""
    out: list[Event] = []
    for e in events:
        if isinstance(e, RequestCompleted) and e.record is not None:
            e = RequestCompleted(record=dataclasses.replace(e.record, duration_s=0.0, ts=0))
        elif isinstance(e, ToolResult):
            e = dataclasses.replace(e, duration_s=0.0)
        key = _DELTA_KEY.get(type(e))
        prev = out[-1] if out else None
        if (key is not None and isinstance(e, _DELTAS) and isinstance(prev, _DELTAS) and type(prev) is type(e)
                and prev.index == e.index):
            out[-1] = dataclasses.replace(prev, **{key: getattr(prev, key) + getattr(e, key)})
            continue
        out.append(e)
    return out


def kinds(events: Iterable[Event], *, deltas: bool = False) -> list[str]:
    skip = () if deltas else ("text_delta", "thinking_delta", "tool_use_delta")
    return [e.kind for e in events if e.kind not in skip]


def records_of(events: Iterable[Event]) -> list[RequestRecord]:
    return [e.record for e in events if isinstance(e, RequestCompleted) and e.record is not None]


def done_of(events: Sequence[Event]) -> Done:
    assert isinstance(events[-1], Done), events[-1]
    return events[-1]


def assert_history_valid(history: Sequence[MessageParam]) -> None:
    assert history_problems(history) == [], history


def assert_persisted_valid(task_dir: Path | None, engine: QueryEngine | None = None) -> None:
    """The task folder loads, its history is a valid conversation, and (given the engine) it holds
    exactly the engine's history, records and range: nothing complete was lost. (``task_dir`` is
    a config's optional folder: these tests always set one.)"""
    assert task_dir is not None
    snap = SessionStore(task_dir).load()
    assert not snap.history or history_problems(snap.history) == [], snap.history
    if engine is not None:
        assert snap.history == engine.session.history
        assert snap.records == engine.session.records
        assert snap.deleted_range == engine.session.deleted_range


def request_tokens(body: dict[str, Any]) -> int:
    """Input tokens of a request body as the simulated API counts them (cl100k over system, tools
    and messages) — computed here with a fresh counter, independently of the engine."""
    return TokenCounter().count_request(body["messages"], body.get("system") or None, body.get("tools") or None)


def totals_for(records: Sequence[RequestRecord], truncations: int = 0) -> Totals:
    """Totals as the sum of per-request figures, cost recomputed with ``cost_of``."""
    usage = records[0].usage.__class__()
    cost = 0.0
    for r in records:
        usage = usage + r.usage
        cost += cost_of(r.usage, r.model) or 0.0
    return Totals(requests=len(records), turns=len({r.turn for r in records}), usage=usage, cost_usd=cost,
                  retries=sum(r.retries for r in records), truncations=truncations, unpriced_requests=0,
                  spent_usd=cost, spent_requests=len(records))


def test_normalise_joins_deltas_per_block_and_zeroes_clocks() -> None:
    evs: list[Event] = [TextDelta(text="a", index=0), TextDelta(text="b", index=0), TextDelta(text="c", index=1),
                        ToolUseDelta(tool_use_id="t", name="n", partial_json="{", index=2),
                        ToolUseDelta(tool_use_id="t", name="n", partial_json="}", index=2),
                        ToolResult(tool_use_id="t", name="n", content="x", duration_s=3.0)]
    assert normalise(evs) == [TextDelta(text="ab", index=0), TextDelta(text="c", index=1),
                              ToolUseDelta(tool_use_id="t", name="n", partial_json="{}", index=2),
                              ToolResult(tool_use_id="t", name="n", content="x")]
