"""One rollback entry point (issue 37): ``nbagent.engine.loop.rollback.rollback``. The Agent, the
notebook's session, ``%agent rollback``/``retry`` and the fork of an edited record call it directly;
only it calls the session's state change."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nbagent.engine.loop.rollback import rollback
from nbagent.engine.loop.turn import RunInProgressError
from nbagent.providers.simulated import SimulatedAPI, text_reply
from tests.engine.loop.test_query_support import make_engine, run

PACKAGE = Path(__file__).resolve().parents[3] / "nbagent"


def test_only_the_entry_point_calls_a_method_named_rollback() -> None:
    calls = [f"{path.relative_to(PACKAGE)}:{node.lineno}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "rollback"]
    assert calls == ["engine/loop/rollback.py:" + str(_line_of("engine.session.rollback(turn)"))]


def _line_of(text: str) -> int:
    lines = (PACKAGE / "engine" / "loop" / "rollback.py").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


async def test_the_entry_point_refuses_during_a_run_and_a_bad_turn_changes_nothing(tmp_path: Path) -> None:
    engine = make_engine(SimulatedAPI([text_reply("one"), text_reply("two")]), tmp_path)
    await run(engine, "first")
    await run(engine, "second")
    history = list(engine.session.history)
    with pytest.raises(ValueError, match="no turn 7"):
        rollback(engine, 7)
    assert engine.session.history == history
    engine._running_prompt = "a prompt in progress"  # as a run sets it
    with pytest.raises(RunInProgressError):
        rollback(engine, 1)
    engine._running_prompt = None
    rollback(engine, 1)
    assert len(engine.session.history) == 2 and engine.session.turn == 1
