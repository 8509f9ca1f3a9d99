"""PermissionGate: default policy, asking, denial log, "always" per session, broken callbacks."""

from __future__ import annotations

import asyncio
from dataclasses import FrozenInstanceError
from typing import Any

import pytest

from nbagent.engine.contracts.permissions import (
    Allow,
    Deny,
    PermissionDenial,
    PermissionGate,
    PermissionRequest,
    allow_all,
    deny_all,
)
from tests.engine.contracts._fake_tool import FakeTool

READ = FakeTool("read_file", read_only=True)
WRITE = FakeTool("write_file")


class Recorder:
    """A can_use_tool that answers from a script and remembers what it was asked."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, dict, PermissionRequest]] = []

    async def __call__(self, name: str, tool_input: dict, request: PermissionRequest) -> Any:
        self.calls.append((name, tool_input, request))
        return self.answers.pop(0)


async def test_read_only_allowed_without_asking() -> None:
    ask = Recorder()
    gate = PermissionGate(can_use_tool=ask)
    assert await gate.check(READ, "t1", {"path": "a"}, turn=1) == Allow()
    assert ask.calls == [] and gate.denials == ()
    assert not gate.will_ask(READ)


async def test_not_read_only_asks_with_a_request() -> None:
    ask = Recorder(Allow())
    gate = PermissionGate(can_use_tool=ask)
    assert gate.will_ask(WRITE)
    decision = await gate.check(WRITE, "t7", {"path": "a", "content": "x"}, turn=3)
    assert decision == Allow()
    (name, tool_input, req), = ask.calls
    assert name == "write_file" and tool_input == {"path": "a", "content": "x"}
    assert req == PermissionRequest("t7", "write_file", {"path": "a", "content": "x"}, False, 3, "write_file is not read-only")


async def test_reason_can_be_given() -> None:
    ask = Recorder(Allow())
    gate = PermissionGate(can_use_tool=ask)
    await gate.check(WRITE, "t", {}, turn=1, reason="path outside cwd")
    assert ask.calls[0][2].reason_asked == "path outside cwd"


async def test_deny_is_recorded_for_audit() -> None:
    gate = PermissionGate(can_use_tool=Recorder(Deny("not now")))
    tool_input = {"path": "x", "content": "y"}
    decision = await gate.check(WRITE, "t2", tool_input, turn=2)
    assert decision == Deny("not now")
    (d,) = gate.denials
    assert isinstance(d, PermissionDenial)
    assert (d.tool, d.input, d.reason, d.tool_use_id, d.turn) == ("write_file", tool_input, "not now", "t2", 2)
    assert d.ts > 1_600_000_000_000  # milliseconds since the epoch
    tool_input["content"] = "changed later"
    recorded = gate.denials[0].input
    assert isinstance(recorded, dict) and recorded["content"] == "y"  # the audit record is a copy


async def test_callback_cannot_change_the_input() -> None:
    async def meddler(name: str, tool_input: dict, request: PermissionRequest) -> Allow:
        tool_input["path"] = "/etc/passwd"
        return Allow()

    original = {"path": "a.txt"}
    await PermissionGate(can_use_tool=meddler).check(WRITE, "t", original, turn=1)
    assert original == {"path": "a.txt"}


async def test_allow_always_is_remembered_per_gate_instance() -> None:
    ask = Recorder(Allow(always=True))
    gate = PermissionGate(can_use_tool=ask)
    assert await gate.check(WRITE, "t1", {}, turn=1) == Allow(always=True)
    assert gate.allowed_always == {"write_file"}
    assert await gate.check(WRITE, "t2", {}, turn=1) == Allow()
    assert len(ask.calls) == 1
    # Another tool is still asked about; another session (gate) starts from nothing.
    ask.answers.append(Deny("no"))
    assert await gate.check(FakeTool("shell"), "t3", {}, turn=1) == Deny("no")
    other = PermissionGate(can_use_tool=Recorder(Deny("fresh session")))
    assert isinstance(await other.check(WRITE, "t4", {}, turn=1), Deny)


async def test_plain_allow_is_not_remembered() -> None:
    ask = Recorder(Allow(), Allow())
    gate = PermissionGate(can_use_tool=ask)
    await gate.check(WRITE, "t1", {}, turn=1)
    await gate.check(WRITE, "t2", {}, turn=1)
    assert len(ask.calls) == 2 and gate.allowed_always == frozenset()


async def test_headless_denies_with_instructions() -> None:
    gate = PermissionGate()
    assert not gate.will_ask(WRITE)
    decision = await gate.check(WRITE, "t", {"path": "a"}, turn=1)
    assert isinstance(decision, Deny)
    assert "No one to approve 'write_file'" in decision.reason
    assert "allow=['write_file']" in decision.reason and "can_use_tool=" in decision.reason
    assert len(gate.denials) == 1
    assert await gate.check(READ, "t", {}, turn=1) == Allow()  # read-only still runs headless


async def test_allow_and_deny_lists() -> None:
    ask = Recorder()
    gate = PermissionGate(can_use_tool=ask, allow=["write_file"], deny=["read_file", "shell"])
    assert await gate.check(WRITE, "t", {}, turn=1) == Allow()
    denied = await gate.check(READ, "t", {}, turn=1)  # deny wins even over read-only
    assert isinstance(denied, Deny) and "denied by this session's configuration" in denied.reason
    assert ask.calls == [] and [d.tool for d in gate.denials] == ["read_file"]


async def test_deny_list_wins_over_allow_always() -> None:
    gate = PermissionGate(can_use_tool=allow_all, deny=["write_file"])
    gate.allow_always("write_file")
    assert isinstance(await gate.check(WRITE, "t", {}, turn=1), Deny)


@pytest.mark.parametrize("exc", [RuntimeError("widget gone"), KeyError("x"), ValueError()])
async def test_raising_callback_is_a_deny(exc: Exception) -> None:
    async def broken(name: str, tool_input: dict, request: PermissionRequest) -> Allow:
        raise exc

    gate = PermissionGate(can_use_tool=broken)
    decision = await gate.check(WRITE, "t", {}, turn=1)
    assert isinstance(decision, Deny)
    assert type(exc).__name__ in decision.reason and "failed" in decision.reason
    assert len(gate.denials) == 1


async def test_wrong_answer_type_is_a_deny() -> None:
    gate = PermissionGate(can_use_tool=Recorder(True))
    decision = await gate.check(WRITE, "t", {}, turn=1)
    assert isinstance(decision, Deny) and "not Allow or Deny" in decision.reason


async def test_sync_callback_is_tolerated() -> None:
    gate = PermissionGate(can_use_tool=lambda name, inp, req: Allow())  # type: ignore[arg-type,return-value]
    assert await gate.check(WRITE, "t", {}, turn=1) == Allow()


async def test_cancellation_while_asking_propagates() -> None:
    async def slow(name: str, tool_input: dict, request: PermissionRequest) -> Allow:
        await asyncio.sleep(10)
        return Allow()

    gate = PermissionGate(can_use_tool=slow)
    task = asyncio.ensure_future(gate.check(WRITE, "t", {}, turn=1))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gate.denials == ()


async def test_ready_made_callables() -> None:
    req = PermissionRequest("t", "shell", {}, False, 1, "shell is not read-only")
    assert await allow_all("shell", {}, req) == Allow()
    d = await deny_all("shell", {}, req)
    assert isinstance(d, Deny) and "shell" in d.reason
    assert isinstance(await PermissionGate(can_use_tool=deny_all).check(WRITE, "t", {}, turn=1), Deny)


def test_records_are_frozen() -> None:
    with pytest.raises(FrozenInstanceError):
        Allow().always = True  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        Deny("x").reason = "y"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        PermissionDenial("t", {}, "r", 0).reason = "y"  # type: ignore[misc]


async def test_gate_accepts_real_tools() -> None:
    from nbagent.tools import builtin_tools

    gate = PermissionGate()
    decisions = {t.name: await gate.check(t, "t", {}, turn=1) for t in builtin_tools(shell=True)}
    assert {n for n, d in decisions.items() if isinstance(d, Allow)} == {"read_file", "list_files"}
