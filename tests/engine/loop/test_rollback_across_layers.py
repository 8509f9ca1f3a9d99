"""Rollback across every context layer at once: one session that is masked (client), server-edited
(``clear_tool_uses``), server-compacted (a ``compaction`` block in the history) and summary-compacted,
rolled back to a turn before all of it, replays the next turn with byte-identical requests, in the
live session and in a copy resumed from its task folder."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from nbagent import Agent
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_context_policy_loop import Load
from tests.engine.loop.test_query_support import messages_requests

POLICY = "mask:keep=1:clear=4000+edit:trigger=4000:keep=1:clear=2000+compact:trigger=50000"
WINDOW = 60_000
PROMPT_WORDS = 14_000  # prompts are not clearable: the context grows until the server compacts


def responder(body: dict[str, Any]) -> Any:
    """Three ``load`` calls per prompt; each call's id is a digest of the request, so the same
    request gets the same reply byte for byte (the simulator's own ids count up across the API)."""
    last = body["messages"][-1]["content"]
    answered = isinstance(last, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last)
    results = sum(1 for m in body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
                  if isinstance(b, dict) and b.get("type") == "tool_result")
    if answered and results % 3 == 0:
        return text_reply("done")
    digest = hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).hexdigest()[:16]
    return tool_reply("load", {"part": results}, id=f"toolu_{digest}")


def prompt(turn: int) -> str:
    return f"prompt {turn} " + "word " * PROMPT_WORDS


def settings(api: SimulatedAPI, tmp_path: Path) -> dict[str, Any]:
    return {"provider": "simulated", "simulated_options": {"api": api}, "cwd": tmp_path, "tools": [Load()],
            "context": POLICY, "context_window": WINDOW}


def request_bytes(api: SimulatedAPI, start: int) -> list[str]:
    """Every /v1/messages request from ``start`` on: its body and beta header, as bytes."""
    return [json.dumps({"body": r.body, "beta": r.headers.get("anthropic-beta")}, sort_keys=True)
            for r in messages_requests(api)[start:]]


def layers_acted(a: Agent, turns: range) -> set[str]:
    return {x.layer for r in a.records if r.turn in turns for x in r.context_actions
            if x.tokens_removed or x.layer != "server_edit"}


def replay_turn_three(a: Agent, api: SimulatedAPI) -> tuple[list[str], list[tuple[str, int]]]:
    start = len(messages_requests(api))
    a.run_sync(prompt(3))
    actions = [(x.layer, x.tokens_removed) for r in a.records if r.turn == 3 for x in r.context_actions]
    return request_bytes(api, start), actions


def test_rollback_across_mask_edit_and_both_compactions_replays_byte_identical_requests(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder, thinks_by_default=False)
    a = Agent(task_dir=tmp_path / "task", **settings(api, tmp_path))
    a.run_sync(prompt(1))
    a.run_sync(prompt(2))
    before_three = len(messages_requests(api))
    a.run_sync(prompt(3))
    turn_three = request_bytes(api, before_three)
    actions_three = [(x.layer, x.tokens_removed) for r in a.records if r.turn == 3 for x in r.context_actions]
    a.run_sync(prompt(4))  # the server compacts: a compaction block enters the history
    a.compact_sync()  # and a summary compaction on top
    a.run_sync(prompt(5))
    assert {"mask", "server_edit"} <= layers_acted(a, range(1, 3))  # the state rolled back to has both
    assert {"mask", "server_edit"} <= {layer for layer, removed in actions_three if removed}  # so has the replay
    assert {"mask", "server_edit", "server_compaction"} <= layers_acted(a, range(3, 6))
    assert any(b.get("type") == "compaction" for m in a.history for b in m["content"] if isinstance(b, dict))
    assert len(a.session.compactions) == 1
    copy = a.save(tmp_path / "copy")

    a.rollback(2)
    assert a.session.compactions == [] and not any(r.turn > 2 for r in a.records)
    replayed, actions = replay_turn_three(a, api)
    assert replayed == turn_three and actions == actions_three
    a.close()

    b = Agent.resume(copy, **settings(api, tmp_path))  # the whole layered session, from its folder
    assert len(b.session.compactions) == 1
    b.rollback(2)
    replayed, actions = replay_turn_three(b, api)
    assert replayed == turn_three and actions == actions_three
    b.close()
