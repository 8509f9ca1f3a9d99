"""``python -m nbagent.demo``: one offline agent session in the terminal.

Without an API key the agent talks to the simulated Messages API through the real ``anthropic``
SDK: it streams, asks permission for the python tool (approved here automatically, and said so),
runs it on a pandas DataFrame, and prints the per-request table of tokens, cost and context.
"""

from __future__ import annotations

import asyncio
import sys

from . import Agent
from .console import print_event
from .engine.contracts.permissions import Allow, PermissionRequest


async def _approve_and_say(tool_name: str, tool_input: dict, request: PermissionRequest) -> Allow:
    print(f"  ? {tool_name} wants to run — approved automatically by the demo script")
    return Allow()


async def main(prompts: list[str] | None = None) -> int:
    import pandas as pd

    from .display.tables import for_display, text_table, turns_df
    from .tools.python import NamespaceExecutor

    namespace = {"df": pd.DataFrame({"city": ["Oslo", "Lima", "Pune", "Kyiv"], "temp_c": [4.5, 19.0, 31.2, 7.9]})}
    agent = Agent(
        executor=NamespaceExecutor(namespace), can_use_tool=_approve_and_say,
        simulated_options={"tokens_per_second": 400.0, "first_token_latency": 0.2},
    )
    prompts = prompts or ["What is in `df`? Give me its shape and mean temperature.", "What is 17 * 23?"]
    for prompt in prompts:
        print(f"\n>>> {prompt}\n")
        async for event in agent.run(prompt):
            print_event(event)
    print("\nPer-request table (tokens from the API's usage; cost from the price table):\n")
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(text_table(for_display(turns_df(agent.records))))
    print("\nNext: `make lab` opens the notebooks; `%load_ext nbagent` then `%%agent` in any cell.")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:] or None)))
