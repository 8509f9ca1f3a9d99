"""Tool ids stay unique when an Agent continues a saved conversation through a new simulated API."""

from __future__ import annotations

from typing import Any

from nbagent import Agent
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import Fault, SimulatedAPI


def test_a_resumed_conversation_whose_first_request_hides_tool_calls_gets_fresh_tool_ids(tmp_path: Any,
                                                                                          monkeypatch: Any) -> None:
    # Notebook 03 with its "9 * 9" cell edited: the overflow recovery (keep quarter) hid messages 2-7,
    # and a new simulated API, counting from what the request showed, gave the next call the id of a
    # hidden one: "Not run: tool_use id 'toolu_sim_000002' was already used in this conversation".
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    first = Agent(task_dir=tmp_path / "s", allow=["python"])
    for prompt in ("What is 2 * 3?", "What is 4 * 5?", "What is 6 * 7?"):
        done = first.run_sync(prompt).done
        assert done is not None and done.reason == "end_turn"
    first.close()
    api = SimulatedAPI(faults={1: Fault.prompt_too_long()})
    again = Agent.resume(tmp_path / "s", provider=simulated_provider(api), allow=["python"])

    result = again.run_sync("What is 8 * 8?")

    assert "already used" not in result.text and "64" in result.text
    blocks: list[Any] = [b for m in again.history if isinstance(m["content"], list) for b in m["content"]]
    ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
    assert len(ids) == len(set(ids)) == 4
