"""Hooks in the loop: pre_tool_use allows, denies with a reason, rewrites input; a raising hook is a
denial that shows the error and the loop goes on; observing hooks see the run; names are checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.events import Done, Notice, PermissionAsked, PermissionDenied, ToolResult
from nbagent.engine.contracts.hooks import Hooks, RewriteInput, ToolCall, UnknownHookError
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.contracts.permissions import Allow, Deny
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import Write, done_of, make_engine, run

INPUT = {"path": "notes.txt", "text": "hello"}


async def user_allows(name: str, tool_input: dict, request: Any) -> Allow:
    return Allow()


def engine_with(tmp_path: Path, hooks: Any, write: Write, *, asker: Any = None) -> Any:
    api = SimulatedAPI([tool_reply("write", INPUT, id="toolu_w"), text_reply("ok")])
    engine = make_engine(api, tmp_path, tools=[write], can_use_tool=asker)
    engine.hooks = Hooks.from_mapping(hooks)
    return engine


async def test_a_hook_that_raises_denies_with_the_error_shown_and_the_loop_lives(tmp_path: Path) -> None:
    def broken(call: ToolCall) -> None:
        raise KeyError("policy table")

    write = Write()
    engine = engine_with(tmp_path, {"pre_tool_use": broken}, write)
    events = await run(engine, "save")
    assert write.calls == []
    (denied,) = [e for e in events if isinstance(e, PermissionDenied)]
    assert "the pre_tool_use hook failed (KeyError: 'policy table')" in denied.reason
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.is_error and "KeyError" in result.content
    assert engine.denials[0].reason == denied.reason
    assert done_of(events).reason == "end_turn"  # the model got the error and answered
    assert history_problems(engine.session.history) == []


async def test_a_hook_deny_reaches_the_model_and_the_audit(tmp_path: Path) -> None:
    async def no_writes(call: ToolCall) -> Deny | None:
        return Deny("writes are frozen today") if call.name == "write" else None

    write = Write()
    engine = engine_with(tmp_path, {"pre_tool_use": no_writes}, write)
    events = await run(engine, "save")
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.content == "A pre_tool_use hook denied this write call: writes are frozen today"
    assert [d.reason for d in engine.denials] == ["writes are frozen today"]


async def test_a_hook_allow_skips_asking(tmp_path: Path) -> None:
    write = Write()
    engine = engine_with(tmp_path, {"pre_tool_use": lambda call: Allow()}, write)
    events = await run(engine, "save")
    assert write.calls == [INPUT]
    assert not [e for e in events if isinstance(e, PermissionAsked)]


async def test_a_hook_allow_does_not_beat_the_deny_list(tmp_path: Path) -> None:
    write = Write()
    engine = engine_with(tmp_path, {"pre_tool_use": lambda call: Allow()}, write)
    engine.reconfigure(deny=("write",))
    await run(engine, "save")
    assert write.calls == []


async def test_a_hook_rewrites_the_input_which_is_validated_again(tmp_path: Path) -> None:
    write = Write()
    engine = engine_with(tmp_path, {"pre_tool_use": lambda c: RewriteInput({**c.input, "path": "safe.txt"})}, write,
                         asker=user_allows)
    await run(engine, "save")
    assert write.calls == [{"path": "safe.txt", "text": "hello"}]

    bad = Write()
    engine = engine_with(tmp_path / "b", {"pre_tool_use": lambda c: RewriteInput({"path": 3})}, bad)
    events = await run(engine, "save")
    assert bad.calls == []
    (denied,) = [e for e in events if isinstance(e, PermissionDenied)]
    assert "rewrote the input into an invalid one" in denied.reason


async def test_a_hook_returning_nonsense_is_a_denial(tmp_path: Path) -> None:
    write = Write()
    engine = engine_with(tmp_path, {"pre_tool_use": lambda call: "yes"}, write)
    await run(engine, "save")
    assert write.calls == [] and "returned 'yes'" in engine.denials[0].reason


async def test_observing_hooks_see_the_run_and_their_errors_are_notices(tmp_path: Path) -> None:
    seen: list[Any] = []

    async def post(call: ToolCall, result: ToolResult) -> None:
        seen.append(("post", call.name, result.content))

    def on_done(done: Done) -> None:
        raise RuntimeError("dashboard down")

    hooks = {"pre_request": lambda turn, n: seen.append(("request", turn, n)), "post_tool_use": post,
             "on_done": on_done, "pre_tool_use": lambda c: Allow()}
    engine = engine_with(tmp_path, hooks, Write())
    events = await run(engine, "save")
    assert seen == [("request", 1, 1), ("post", "write", "wrote 5 characters to notes.txt"), ("request", 1, 2)]
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices == ["the on_done hook failed (RuntimeError: dashboard down); the run continues."]
    assert done_of(events).reason == "end_turn"


def test_unknown_hook_names_are_refused_with_the_known_ones() -> None:
    with pytest.raises(UnknownHookError, match="unknown hook.*pre_tool; hooks are: pre_tool_use"):
        Hooks.from_mapping({"pre_tool": print})
    with pytest.raises(TypeError, match="must be callable"):
        Hooks.from_mapping({"on_done": 3})  # type: ignore[dict-item]
