"""P4: what a session pays for its prompts ÷ the least it could pay with prompt caching.

A notebook-like session on the simulated Messages API (which caches as the API does: breakpoints,
20-block lookback, minimum size, TTL) through the real SDK: ``PROMPTS`` prompts; between prompts the
user's variables change (a cell ran), and the agent's own tool calls define variables too. Each
prompt gets three rounds of tool calls, one of them ``PARALLEL`` calls at once (more than the
20-block lookback with their results), then an answer.

The lower bound of a request: everything the previous request sent is read from the cache, only
what is new is written, plus the output: ``read × min(prev, now) + write_5m × max(now − prev, 0) +
out × output``, with the API-reported (simulated) token counts. The ratio is the sum of actual costs
÷ the sum of lower bounds; goal ≤ 1.3. ``--script`` also runs a session without kernel facts.
Run: ``.venv/bin/python bench/bench_cache.py [--script] [--verbose]``. ``NBAGENT_SRC`` points the
script at another checkout (e.g. to measure main for the "before" figure).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, os.environ.get("NBAGENT_SRC", str(Path(__file__).resolve().parents[1])))

import pydantic  # noqa: E402

from nbagent.engine.api_facts.cost import Usage, cost_of  # noqa: E402
from nbagent.engine.contracts.config import SessionConfig  # noqa: E402
from nbagent.engine.contracts.events import Done  # noqa: E402
from nbagent.engine.contracts.tool_api import Tool, ToolOutput  # noqa: E402
from nbagent.engine.loop.facts import VariableInfo  # noqa: E402
from nbagent.engine.loop.query import QueryEngine  # noqa: E402
from nbagent.providers.anthropic import AnthropicProvider  # noqa: E402
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply  # noqa: E402

MODEL = "claude-sonnet-5-5"
PROMPTS = 12
PARALLEL = 12


class Namespace:
    """The user's kernel: variables the user's cells and the agent's code define."""

    def __init__(self) -> None:
        self.vars: dict[str, VariableInfo] = {}
        self.inputs: list[str] = []

    def facts(self) -> tuple[list[VariableInfo], list[str]]:
        return list(self.vars.values()), self.inputs[-5:]

    def user_cell(self, i: int) -> None:
        self.vars[f"df{i}"] = VariableInfo(f"df{i}", "DataFrame", f"shape ({100 * i}, 4)")
        self.vars["step"] = VariableInfo("step", "int", str(i))
        self.inputs.append(f"df{i} = load('part-{i}.csv')\nstep = {i}")


class Run(Tool):
    name = "run"
    description = "Run a step of the analysis; may define a variable."
    read_only = True

    class Input(pydantic.BaseModel):
        step: str

    def __init__(self, ns: Namespace | None) -> None:
        self.ns = ns

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        if self.ns is not None:
            name = f"r_{tool_input['step'].split()[0]}"
            self.ns.vars[name] = VariableInfo(name, "Series", "length 100")
        return ToolOutput(content=f"{tool_input['step']}: " + "value 1.25, " * 60)


def responder(body: dict[str, Any]) -> Any:
    rounds = 0
    for m in reversed(body["messages"]):
        content = m["content"]
        if m["role"] == "user" and isinstance(content, list) and content and content[0].get("type") == "tool_result":
            rounds += 1
            continue
        if m["role"] == "user":
            break
    turn = sum(1 for m in body["messages"] if m["role"] == "user" and not _is_results(m))
    if rounds == 1:
        calls = [("run", {"step": f"p{turn}x{k} fan-out"}) for k in range(PARALLEL)]
        return tool_reply(calls, text="Running the parts in parallel.")
    if rounds < 3:
        return tool_reply("run", {"step": f"p{turn}s{rounds} step"}, text=f"Step {rounds}.")
    return text_reply("Done: the figures are as computed above. " * 8)


def _is_results(m: dict[str, Any]) -> bool:
    c = m["content"]
    return isinstance(c, list) and bool(c) and c[0].get("type") == "tool_result"


def lower_bound(usages: list[Usage]) -> float:
    total, prev = 0.0, 0
    for u in usages:
        now = u.prompt_tokens
        ideal = Usage(output_tokens=u.output_tokens, cache_read_input_tokens=min(prev, now),
                      cache_creation_input_tokens=max(now - prev, 0))
        total += cost_of(ideal, MODEL) or 0.0
        prev = now
    return total


async def session(notebook: bool, verbose: bool) -> tuple[float, float, int]:
    ns = Namespace() if notebook else None
    api = SimulatedAPI(responder)
    provider = AnthropicProvider(api.async_client, name="simulated")
    engine = QueryEngine(SessionConfig(model=MODEL, max_requests=None, in_notebook=notebook),
                         provider=provider, tools=[Run(ns)], kernel_facts=ns.facts if ns else None)
    for i in range(PROMPTS):
        if ns is not None:
            ns.user_cell(i)
        async for event in engine.submit_message(f"Prompt {i}: analyse part {i} and summarise."):
            if isinstance(event, Done):
                assert event.reason == "end_turn", event
    await (await provider.client()).close()
    records = engine.session.records
    if verbose:
        for r in records:
            u = r.usage
            print(f"  #{r.request:3d} prompt {u.prompt_tokens:6d} read {u.cache_read_input_tokens:6d} "
                  f"write {u.cache_creation_input_tokens:6d} input {u.input_tokens:6d}")
    actual = sum(r.cost_usd or 0.0 for r in records)
    return actual, lower_bound([r.usage for r in records]), len(records)


def main(argv: list[str]) -> int:
    verbose = "--verbose" in argv
    kinds = [("notebook (facts change, agent defines variables)", True)]
    if "--script" in argv:
        kinds.append(("script (no kernel facts)", False))
    for label, notebook in kinds:
        actual, bound, n = asyncio.run(session(notebook, verbose))
        print(f"P4 {label}: {n} requests, cost ${actual:.4f}, lower bound ${bound:.4f}, "
              f"ratio {actual / bound:.2f} (goal <= 1.3)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
