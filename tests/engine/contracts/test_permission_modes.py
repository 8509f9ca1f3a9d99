"""Permission modes: a matrix of mode × tool kind, bypass never a default, plan mode told to the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.config import PERMISSION_MODES, SessionConfig
from nbagent.engine.contracts.events import PermissionDenied
from nbagent.engine.contracts.permissions import PLAN_MODE_OFF_PROMPT, PLAN_MODE_PROMPT, Allow, Deny, PermissionGate
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.contracts._fake_tool import FakeTool
from tests.engine.loop.test_query_support import Write, done_of, make_engine, messages_requests, run

READ = (FakeTool("read_file", read_only=True), {"path": "a.txt"})
EDIT_IN = (FakeTool("write_file", edits_files=True), {"path": "sub/a.txt", "content": "x"})
EDIT_OUT = (FakeTool("write_file", edits_files=True), {"path": "../elsewhere.txt", "content": "x"})
CODE = (FakeTool("python"), {"code": "1"})
KINDS = {"read_only": READ, "edit_in_cwd": EDIT_IN, "edit_outside_cwd": EDIT_OUT, "code": CODE}

# What each mode does with each kind of tool: allow (no question), ask (the user decides), deny.
MATRIX = {
    "default":      {"read_only": "allow", "edit_in_cwd": "ask", "edit_outside_cwd": "ask", "code": "ask"},
    "accept_edits": {"read_only": "allow", "edit_in_cwd": "allow", "edit_outside_cwd": "ask", "code": "ask"},
    "plan":         {"read_only": "allow", "edit_in_cwd": "deny", "edit_outside_cwd": "deny", "code": "deny"},
    "bypass":       {"read_only": "allow", "edit_in_cwd": "allow", "edit_outside_cwd": "allow", "code": "allow"},
}


@pytest.mark.parametrize("mode", list(MATRIX))
@pytest.mark.parametrize("kind", list(KINDS))
async def test_mode_by_tool_kind_matrix(mode: str, kind: str, tmp_path: Path) -> None:
    asked: list[str] = []

    async def user_says_deny(name: str, tool_input: dict, request: Any) -> Deny:
        asked.append(name)
        return Deny("user said no")

    gate = PermissionGate(can_use_tool=user_says_deny)
    gate.mode, gate.cwd = mode, tmp_path
    tool, tool_input = KINDS[kind]
    decision = await gate.check(tool, "t1", tool_input, turn=1)
    expected = MATRIX[mode][kind]
    outcome = "ask" if asked else "allow" if isinstance(decision, Allow) else "deny"
    assert outcome == expected
    assert len(gate.denials) == (0 if expected == "allow" else 1)  # mode denials are audited too


def test_the_matrix_covers_every_mode() -> None:
    assert set(MATRIX) == set(PERMISSION_MODES)


def test_default_mode_is_default_and_bypass_must_be_set() -> None:
    assert SessionConfig().permission_mode == "default"
    assert SessionConfig(permission_mode="bypass").permission_mode == "bypass"
    with pytest.raises(ValueError, match="permission_mode must be one of default, accept_edits, plan, bypass"):
        SessionConfig(permission_mode="yolo")  # type: ignore[arg-type]


async def test_deny_list_wins_over_bypass(tmp_path: Path) -> None:
    gate = PermissionGate()
    gate.mode, gate.deny = "bypass", frozenset({"python"})
    assert isinstance(await gate.check(CODE[0], "t1", CODE[1], turn=1), Deny)


async def test_plan_mode_denies_in_the_loop_tells_the_model_and_audits(tmp_path: Path) -> None:
    write = Write()
    api = SimulatedAPI([tool_reply("write", {"path": "n.txt", "text": "hi"}, id="toolu_w"), text_reply("Plan: ...")])
    engine = make_engine(api, tmp_path, tools=[write], allow=["write"], permission_mode="plan")
    events = await run(engine, "change the notes")
    assert write.calls == []
    (denied,) = [e for e in events if isinstance(e, PermissionDenied)]
    assert denied.reason.startswith("plan mode: write is not read-only")
    assert engine.denials[0].reason == denied.reason
    first = messages_requests(api)[0].body
    system = first["system"] if isinstance(first["system"], str) else " ".join(b["text"] for b in first["system"])
    assert PLAN_MODE_PROMPT not in system  # the system prompt stays the same in every mode (the cache)
    assert PLAN_MODE_PROMPT in [b.get("text") for b in first["messages"][0]["content"]]
    assert done_of(events).reason == "end_turn"


async def test_reconfigure_changes_the_mode_for_later_prompts(tmp_path: Path) -> None:
    write = Write()
    api = SimulatedAPI([tool_reply("write", {"path": "n.txt", "text": "hi"}), text_reply("done")])
    engine = make_engine(api, tmp_path, tools=[write], permission_mode="plan")
    engine.reconfigure(permission_mode="bypass")
    await run(engine, "write it")
    assert write.calls == [{"path": "n.txt", "text": "hi"}]
    first = messages_requests(api)[0].body
    assert PLAN_MODE_PROMPT not in str(first["system"]) and PLAN_MODE_PROMPT not in str(first["messages"])


async def test_switching_to_plan_mode_and_back_keeps_the_cached_prefix(tmp_path: Path) -> None:
    """Plan mode used to change the system prompt, so the next request wrote the whole cached
    conversation again; its instruction now travels in the prompt, and leaving it is said once."""
    long_system = "You are a careful assistant. " + " ".join(f"rule{i}." for i in range(1_500))
    api = SimulatedAPI([text_reply("first"), text_reply("a plan"), text_reply("done")])
    engine = make_engine(api, tmp_path, tools=[Write()], custom_system_prompt=long_system)
    await run(engine, "hello")
    engine.reconfigure(permission_mode="plan")
    await run(engine, "plan the change")
    engine.reconfigure(permission_mode="default")
    await run(engine, "go ahead")
    first, planned, after = (r.usage for r in engine.session.records)
    assert first.cache_creation_input_tokens > 1_024  # the prefix was cached by the first request
    for usage in (planned, after):
        assert usage.cache_read_input_tokens >= first.cache_creation_input_tokens  # still read, not rewritten
        assert usage.cache_creation_input_tokens < 200  # only what the new turn adds
    prompts = [m["content"] for m in messages_requests(api)[-1].body["messages"] if m["role"] == "user"]
    texts = [[b.get("text") for b in content] for content in prompts]
    assert PLAN_MODE_PROMPT in texts[1] and PLAN_MODE_OFF_PROMPT in texts[2] and PLAN_MODE_PROMPT not in texts[2]
