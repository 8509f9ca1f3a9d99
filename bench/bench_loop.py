"""Loop overhead: 100 scripted requests through ``QueryEngine`` vs a minimal loop on the SDK.

Both talk to the same in-process simulated Messages API through the real ``anthropic`` SDK, get the
same scripted replies (20 prompts; each: four ``echo`` tool calls, then a text answer — 100
requests) and send the same system prompt, tool definitions and prompt-cache breakpoints, so the
server-side work is identical (the baseline passes thinking blocks back, as the API requires on 5.x
models, and marks the same two breakpoints). The baseline is what a hand-written agent loop would do:
``client.messages.create(stream=True)``, iterate the events, build the message, run the tool,
append the results. The engine adds what the engine does (context manager, token estimate, events,
permissions, validation, records, cost); ``--persist`` adds its task folder (appends after every
request and tool round; the history is synced after a request when its last sync is a second old,
which at ~3 ms per request here means the run's end, where every file is synced).

Everything runs in one thread (the transport is in-process), so the figure is the process's CPU
time (``time.process_time``), which other work on a busy machine disturbs far less than wall-clock
time (shown too). The two loops run ``REPEATS`` times, interleaved in pairs (SDK loop, engine),
and the figure is the median of the pairs' ratios: a pause of the machine lands in one run of one
pair, which the median sets aside and a mean does not (the ratio of the means is shown too).
21 pairs, not 9: on this VM the median of 9 pairs read 1.03-1.17 for the same code in one hour
(20 runs), the median of 21 pairs 1.08-1.12; the order within a pair was measured not to matter.
Each timed run starts after a full garbage collection: a full collection costs ~90 ms here (it
walks the SDK's ~160,000 objects), and where one fell decided the result (0.98 to 1.29 for the
same code with the minimum, ±0.03 with the mean). Measured over 30 runs each, both loops trigger
the same number of full collections (10 and 10; the engine makes ~4% more young-generation
collections, which the timed runs include), so starting both from the same state takes out the
luck, not a cost of the engine. Goals: engine / baseline ≤ 1.10 in memory, ≤ 1.3 with a task
folder. ``--control`` runs the SDK loop a second time in each pair and prints it against the first
(the same code: what the machine's noise does to the median; ``bench_loop_instructions.py`` counts
instructions, which do not move). ``--profile`` prints the engine's cProfile top functions; ``--writes`` the CPU inside each
task-folder write per request and the waits for the disk per run.
Run: ``.venv/bin/python bench/bench_loop.py [--persist] [--control] [--profile] [--writes]``.
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Coroutine, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pydantic  # noqa: E402
from anthropic.types import CacheControlEphemeralParam, MessageParam, TextBlockParam, ToolParam  # noqa: E402

from nbagent.engine.contracts.config import SessionConfig  # noqa: E402
from nbagent.engine.contracts.context_policy import DEFAULT_POLICY, ContextPolicy  # noqa: E402
from nbagent.engine.contracts.events import Done  # noqa: E402
from nbagent.engine.contracts.json_types import JSONObject  # noqa: E402
from nbagent.engine.contracts.tool_api import Tool, ToolOutput  # noqa: E402
from nbagent.engine.loop.query import QueryEngine  # noqa: E402
from nbagent.providers.anthropic import AnthropicProvider  # noqa: E402
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply  # noqa: E402

MODEL = "claude-sonnet-5-5"
PROMPTS = 20
TOOLS_PER_PROMPT = 4
REPEATS = 21
SYSTEM = "You are a benchmark agent. Answer briefly."
EPHEMERAL: CacheControlEphemeralParam = {"type": "ephemeral"}
EPHEMERAL_1H: CacheControlEphemeralParam = {"type": "ephemeral", "ttl": "1h"}
API_KEY = "sk-ant-api03-bench-loop-0123456789abcdefghijklmnopqrstuvwxyz"


class Echo(Tool):
    name = "echo"
    description = "Echo a text back."
    read_only = True

    class Input(pydantic.BaseModel):
        text: str

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        return ToolOutput(content=tool_input["text"])


def responder(body: dict) -> Any:
    """Four tool calls after each prompt, then an answer (decided by the conversation's tail)."""
    calls = 0
    for m in reversed(body["messages"]):
        content = m["content"]
        if m["role"] == "user" and isinstance(content, list) and content and content[0].get("type") == "tool_result":
            calls += 1
            continue
        if m["role"] == "user":
            break
    calls //= 1
    if calls < TOOLS_PER_PROMPT:
        return tool_reply("echo", {"text": f"step {calls} " + "data " * 20}, text=f"Step {calls}: calling echo.")
    return text_reply("All steps are done; here is a short summary of what the tool returned. " * 3)


def prompts() -> list[str]:
    return [f"Task {i}: run the steps and summarise." for i in range(PROMPTS)]


def clocks() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def since(start: tuple[float, float]) -> tuple[float, float]:
    cpu, wall = clocks()
    return cpu - start[0], wall - start[1]


class BodyLog(SimulatedAPI):
    """The simulated API keeping every request body as the bytes the SDK sent (the check run only)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bodies: list[bytes] = []

    async def handle(self, method: str, path: str, headers: Any, body: bytes, read_timeout: float | None = None) -> Any:
        self.bodies.append(body)
        return await super().handle(method, path, headers, body, read_timeout)


async def run_engine(persist: bool, policy: str, api: SimulatedAPI | None = None) -> tuple[tuple[float, float], int]:
    api = api or SimulatedAPI(responder, request_log=1)  # the server's log is not client heap
    provider = AnthropicProvider(api.async_client, name="simulated")
    task_dir = Path(tempfile.mkdtemp(prefix="bench-loop-")) / "task" if persist else None
    engine = QueryEngine(SessionConfig(model=MODEL, custom_system_prompt=SYSTEM, task_dir=task_dir, max_requests=None,
                                       context=policy), provider=provider, tools=[Echo()],
                         secrets=[API_KEY])  # as an Agent does: its key is redacted from what streams back
    t0 = clocks()
    for p in prompts():
        async for event in engine.submit_message(p):
            if isinstance(event, Done):
                assert event.reason == "end_turn", event
    elapsed = since(t0)
    await (await provider.client()).close()
    return elapsed, api.request_count


def with_breakpoints(history: list[dict[str, Any]], anchor: bool) -> tuple[list[dict[str, Any]], str]:
    """Breakpoints where the engine puts them: the last message and the one the previous request
    ended at (len - 3), so the server does the same cache work for both loops. With ``anchor`` (the
    default policy's mask layer), a one-hour breakpoint before the first tool result (message 1: no
    masking ever clears here, so that is where the next one would start) once it is older than
    those two, and the system prompt's breakpoint is then one-hour too. Returns the messages and the
    system prompt's TTL."""
    messages = list(history)
    one_hour = anchor and 1 < len(messages) - 3
    marks = [(1, EPHEMERAL_1H)] if one_hour else []
    for i in (*marks, (len(messages) - 3, EPHEMERAL), (len(messages) - 1, EPHEMERAL)):
        index, mark = i
        if index >= 0 and messages[index]["content"][-1]["type"] != "thinking":
            m = messages[index]
            messages[index] = {"role": m["role"], "content": [
                *m["content"][:-1], {**m["content"][-1], "cache_control": mark}]}
    return messages, "1h" if one_hour else "5m"


async def read_reply(stream: Any) -> dict[int, dict[str, Any]]:
    """The reply's blocks by index: text, thinking (5.x models think; the blocks go back verbatim
    with their signature), tool calls with their streamed input."""
    blocks: dict[int, dict[str, Any]] = {}
    parts: dict[int, list[str]] = {}
    fields = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "signature"}
    async for ev in stream:
        if ev.type == "content_block_start":
            cb = ev.content_block
            if cb.type in ("text", "thinking"):
                blocks[ev.index] = cb.to_dict()  # the block as the API sent it; deltas fill it in
            elif cb.type == "tool_use":
                blocks[ev.index] = {"id": cb.id, "input": {}, "name": cb.name, "type": "tool_use"}
                parts[ev.index] = []
        elif ev.type == "content_block_delta":
            if ev.delta.type in fields:
                name = fields[ev.delta.type]
                blocks[ev.index][name] += getattr(ev.delta, name)
            elif ev.delta.type == "input_json_delta":
                parts[ev.index].append(ev.delta.partial_json)
        elif ev.type == "content_block_stop" and ev.index in parts:
            blocks[ev.index]["input"] = json.loads("".join(parts.pop(ev.index)) or "{}")
    return blocks


async def run_baseline(system: str, tools: list[JSONObject], anchor: bool,
                       api: SimulatedAPI | None = None) -> tuple[tuple[float, float], int]:
    """The minimal hand-written loop on the SDK (same transport, same replies, same request shape)."""
    api = api or SimulatedAPI(responder, request_log=1)  # the server's log is not client heap
    client = api.async_client()
    history: list[dict[str, Any]] = []
    system_blocks: dict[str, list[TextBlockParam]] = {
        ttl: [{"type": "text", "text": system, "cache_control": mark}] for ttl, mark in (("5m", EPHEMERAL), ("1h", EPHEMERAL_1H))}
    t0 = clocks()
    for p in prompts():
        if history and history[-1]["role"] == "user":
            history[-1] = {"role": "user", "content": history[-1]["content"] + [{"type": "text", "text": p}]}
        else:
            history.append({"role": "user", "content": [{"type": "text", "text": p}]})
        while True:
            messages, ttl = with_breakpoints(history, anchor)
            # The body is built as JSON, as a hand-written loop builds it: the messages are the API's
            # MessageParam shape (blocks as the API sent them, results as above) and the tools are
            # the engine's definitions, the API's ToolParam shape (check_bodies compares the bytes).
            stream = await client.messages.create(model=MODEL, max_tokens=8192, messages=cast("list[MessageParam]", messages),
                                                  system=system_blocks[ttl], tools=cast("list[ToolParam]", tools),
                                                  stream=True)
            blocks = await read_reply(stream)
            content = [blocks[i] for i in sorted(blocks)]
            history.append({"role": "assistant", "content": content})
            uses = [b for b in content if b["type"] == "tool_use"]
            if not uses:
                break
            history.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": u["id"], "content": u["input"]["text"]} for u in uses]})
    elapsed = since(t0)
    await client.close()
    return elapsed, api.request_count


def engine_request_shape() -> tuple[str, list[JSONObject]]:
    # No provider: only _prepare() runs, which builds the request shape without one.
    engine = QueryEngine(SessionConfig(model=MODEL, custom_system_prompt=SYSTEM), provider=None,  # type: ignore[arg-type]
                         tools=[Echo()])
    prepared = engine._prepare()
    return prepared.system, prepared.tools


def anchors(policy: str) -> bool:
    """Whether the engine's requests carry the mask layer's cache anchor (the SDK loop then sends it too)."""
    return ContextPolicy.parse(policy).has("mask")


def check_bodies(persist: bool, policy: str, system: str, tools: list[JSONObject]) -> None:
    """Both loops send byte-identical request bodies (else the ratio compares different work)."""
    base, eng = BodyLog(responder, request_log=1), BodyLog(responder, request_log=1)
    asyncio.run(run_baseline(system, tools, anchors(policy), base))
    asyncio.run(run_engine(persist, policy, eng))
    differ = [i for i, (b, e) in enumerate(zip(base.bodies, eng.bodies, strict=True)) if b != e]
    if differ:
        i = differ[0]
        raise SystemExit(f"{len(differ)} request bodies differ, the first at request {i + 1}:\n"
                         f"SDK loop: {base.bodies[i][-600:]!r}\nengine:   {eng.bodies[i][-600:]!r}")
    print(f"{len(eng.bodies)} request bodies checked: byte-identical in both loops")


def timed_run(run: Callable[[], Coroutine[Any, Any, tuple[tuple[float, float], int]]], full: dict[str, int],
              name: str) -> tuple[tuple[float, float], int]:
    """One run, started from a collected heap; counts the full collections that fell inside it."""
    gc.collect()
    before = gc.get_stats()[2]["collections"]
    result = asyncio.run(run())
    full[name] += gc.get_stats()[2]["collections"] - before
    return result


STORE_WRITES = ("write_all", "save_history", "save_events", "save_records", "save_sent", "save_marks", "save_meta",
                "save_context_and_meta", "save_compactions", "sync", "sync_history_if_due")


def write_costs(policy: str, runs: int = 10) -> None:
    """``--writes``: the CPU inside each task-folder write, per request, and the waits for the disk
    per run (syncs in a row count as one). Only the calls: a wait also costs the process its warm
    caches (it sleeps), which shows in the ratio, not here."""
    from nbagent.engine.state.store import SessionStore

    spent: dict[str, float] = dict.fromkeys(STORE_WRITES, 0.0)
    calls = dict.fromkeys(STORE_WRITES, 0)
    syncs: list[str] = []  # the write each sync fell in
    current = [""]

    def timed(name: str, write: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            start, outer, current[0] = time.process_time(), current[0], current[0] or name
            try:
                return write(*args, **kwargs)
            finally:
                current[0] = outer
                if not outer:  # a write's own cost, not again inside the one that called it
                    spent[name] += time.process_time() - start
                    calls[name] += 1
        return call

    def counted(sync: Callable[[int], None]) -> Callable[[int], None]:
        def call(fd: int) -> None:
            syncs.append(f"{current[0]}:{calls[current[0]] if current[0] else 0}")
            sync(fd)
        return call

    originals = {name: getattr(SessionStore, name) for name in STORE_WRITES if hasattr(SessionStore, name)}  # or older
    os_syncs = {name: getattr(os, name) for name in ("fsync", "fdatasync") if hasattr(os, name)}
    for name, write in originals.items():
        setattr(SessionStore, name, timed(name, write))
    for name, sync in os_syncs.items():
        setattr(os, name, counted(sync))
    try:
        for _ in range(runs):
            gc.collect()
            asyncio.run(run_engine(True, policy))
    finally:
        for name, write in originals.items():
            setattr(SessionStore, name, write)
        for name, sync in os_syncs.items():
            setattr(os, name, sync)
    requests = runs * PROMPTS * (TOOLS_PER_PROMPT + 1)
    print(f"Task-folder writes, CPU inside each call ({runs} runs of {PROMPTS} turns, {requests // runs} requests):")
    for name in sorted(spent, key=lambda n: -spent[n]):
        if calls[name]:
            print(f"  {name:<20} {spent[name] / requests * 1e6:6.1f} us per request  "
                  f"({calls[name] / runs:5.1f} calls per run, {spent[name] / calls[name] * 1e6:6.1f} us each)")
    print(f"  total                {sum(spent.values()) / requests * 1e6:6.1f} us per request; "
          f"{len(syncs) / runs:.0f} syncs and {len(set(syncs)) / runs:.0f} waits for the disk per run")


def main(argv: list[str]) -> int:
    persist = "--persist" in argv
    policy = argv[argv.index("--context") + 1] if "--context" in argv else DEFAULT_POLICY
    repeats = int(argv[argv.index("--pairs") + 1]) if "--pairs" in argv else REPEATS
    system, tools = engine_request_shape()
    check_bodies(persist, policy, system, tools)  # also the warm-up: imports, tokenizer, SDK
    base_times, engine_times, control_times = [], [], []
    full = {"baseline": 0, "engine": 0, "control": 0}
    def baseline() -> Coroutine[Any, Any, tuple[tuple[float, float], int]]:
        return run_baseline(system, tools, anchors(policy))

    for _ in range(repeats):
        t, n_base = timed_run(baseline, full, "baseline")
        base_times.append(t)
        t, n_engine = timed_run(lambda: run_engine(persist, policy), full, "engine")
        engine_times.append(t)
        if "--control" in argv:  # the SDK loop again, after the engine: what the same code reads
            control_times.append(timed_run(baseline, full, "control")[0])
    assert n_base == n_engine == PROMPTS * (TOOLS_PER_PROMPT + 1), (n_base, n_engine)
    label = f"engine ({'task folder, fsync' if persist else 'in memory'}, context {policy})"
    print(f"{n_engine} requests, {repeats} interleaved pairs of runs; full collections inside the timed runs: "
          f"SDK loop {full['baseline']}, engine {full['engine']}")
    goal = 1.3 if persist else 1.10
    for i, clock in enumerate(("CPU time", "wall time")):
        base = statistics.mean(t[i] for t in base_times)
        eng = statistics.mean(t[i] for t in engine_times)
        paired = statistics.median(e[i] / b[i] for e, b in zip(engine_times, base_times, strict=True))
        print(f"{clock}:")
        print(f"  minimal SDK loop:   {base * 1000:8.1f} ms  ({base / n_base * 1000:.2f} ms/request, mean)")
        print(f"  {label + ':':<20}\n                      {eng * 1000:8.1f} ms  ({eng / n_engine * 1000:.2f} ms/request, mean)")
        print(f"  ratio engine / SDK loop: {paired:.3f}, the median of the pairs' ratios (goal <= {goal}); "
              f"ratio of the means {eng / base:.3f}; overhead {(eng - base) / n_engine * 1000:+.2f} ms/request")
    if control_times:
        paired = statistics.median(c[0] / b[0] for c, b in zip(control_times, base_times, strict=True))
        means = statistics.mean(t[0] for t in control_times) / statistics.mean(t[0] for t in base_times)
        print(f"control, the SDK loop against itself (CPU): {paired:.3f}, the median of the pairs' ratios; "
              f"ratio of the means {means:.3f} (1.000 on a quiet machine: how far this run's figures can move)")
    if "--profile" in argv:
        prof = cProfile.Profile()
        prof.enable()
        asyncio.run(run_engine(persist, policy))
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
    if "--writes" in argv:
        write_costs(policy)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
