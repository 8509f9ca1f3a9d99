"""Issue 12: the seeded fault soak. Sessions under all 14 simulated faults, hostile tool output
(lone surrogates, the API key, huge prints, deep inputs, reused tool ids), aborts, rollbacks and
resumes; after every prompt the loop has ended with ``Done``, the history is valid, the folder
loads into exactly that history, and the key is nowhere on disk. A fast clock: no real sleeping.

The default run soaks 50 sessions; the heavy one (200) is marked ``soak`` and runs with
``pytest --soak -m soak`` (``make test`` runs it).
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.events import ApiRequestFailed, Done, Event, RetryScheduled
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.contracts.permissions import CallbackAsker, FailureChoice
from nbagent.engine.loop.rollback import rollback
from nbagent.engine.state.store import SessionStore
from nbagent.providers.simulated import ALL_FAULTS, FaultSchedule, SimulatedAPI, text_reply, tool_reply
from nbagent.tools.python import Python
from tests.engine.loop.test_query_support import RecordingSleep, default_tools, make_engine

FAULTS_SEEN: set[str] = set()  # error kinds met across the soak (it must meet some)
SECRET = "sk-ant-soak-0123456789abcdefghijklmnop"
HOSTILE_CODE = [
    "print('bad name \\udcff.csv')",
    "import os; print(os.environ.get('ANTHROPIC_API_KEY'))",
    "print('y' * 300_000)",
    "1 + 1",
]


def responder(rng: random.Random) -> Any:
    """A model that calls tools at random, sometimes with hostile input, from its own seeded rng."""
    def reply(body: dict[str, Any]) -> Any:
        roll = rng.random()
        if roll < 0.35:
            return text_reply("Done.")
        if roll < 0.6:
            return tool_reply("python", {"code": rng.choice(HOSTILE_CODE)}, text="Running code.")
        if roll < 0.75:
            return tool_reply("add", {"a": rng.randint(0, 9), "b": 1}, id="toolu_reused")
        if roll < 0.85:
            deep: dict[str, Any] = {}
            for _ in range(rng.choice([3, 80, 300])):
                deep = {"k": deep}
            return tool_reply("echo", {"text": "deep", "deep": deep})
        return tool_reply([("echo", {"text": "one \udcff"}), ("add", {"a": 1, "b": 2})])
    return reply


def check(engine: Any, task: Path, events: list[Event]) -> list[str]:
    """What is wrong after one prompt (empty: nothing)."""
    problems: list[str] = []
    if not events or not isinstance(events[-1], Done):
        problems.append("no Done")
    history = engine.session.history
    if history and history_problems(history):
        problems.append(f"invalid history: {history_problems(history)[:1]}")
    snap = SessionStore(task).load()
    if snap.history != history:
        problems.append("the folder does not hold the session's history")
    if any(SECRET in p.read_text(encoding="utf-8", errors="replace") for p in task.iterdir() if p.is_file()):
        problems.append("the API key is on disk")
    return problems


async def one_prompt(engine: Any, rng: random.Random, n: int) -> list[Event]:
    """Run one prompt; sometimes abort it after a few events."""
    abort_after = rng.choice([None, None, None, 2, 5])
    events: list[Event] = []
    async for event in engine.submit_message(f"task {n}: go"):
        events.append(event)
        if isinstance(event, (ApiRequestFailed, RetryScheduled)):
            FAULTS_SEEN.add(event.error_kind)
        if abort_after is not None and len(events) == abort_after:
            engine.abort()
    return events


async def soak_session(tmp_path: Path, seed: int, prompts: int = 4) -> tuple[list[str], int]:
    """One seeded session; returns its problems and the count of exceptions that escaped."""
    rng = random.Random(seed)
    api = SimulatedAPI(responder(rng), sleep=RecordingSleep(), faults=FaultSchedule(
        probability=0.3, seed=seed, kinds=tuple(ALL_FAULTS)))
    choices: list[FailureChoice] = ["retry", "cancel"]
    answers = iter(rng.choices(choices, k=100))
    task_name = f"task{seed}"
    task = tmp_path / task_name

    def engine_for(resume: bool) -> Any:
        engine = make_engine(api, tmp_path, task=task_name, tools=[*default_tools(), Python()], resume=resume,
                             allow=("python", "write"), tool_capture_limit=50_000)
        engine.asker = CallbackAsker(None, lambda failed: asyncio.sleep(0, next(answers, "cancel")))
        engine._secrets = (SECRET,)
        return engine

    engine, problems, escaped = engine_for(False), [], 0
    for n in range(prompts):
        try:
            events = await asyncio.wait_for(one_prompt(engine, rng, n), 60)
            problems += [f"seed {seed} prompt {n}: {p}" for p in check(engine, task, events)]
            action = rng.random()
            if action < 0.25:
                engine.session.close()
                engine = engine_for(True)
            elif action < 0.45 and engine.session.marks:
                rollback(engine, rng.choice(engine.session.marks).turn)
                problems += [f"seed {seed} rollback: {p}" for p in check(engine, task, [Done()])]
        except Exception as exc:  # noqa: BLE001 - counting them is the point
            escaped += 1
            problems.append(f"seed {seed} prompt {n}: {type(exc).__name__}: {exc}")
    engine.session.close()
    return problems, escaped


async def soak(tmp_path: Path, sessions: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)  # what the python tool's os.environ shows
    problems: list[str] = []
    escaped = 0
    for seed in range(sessions):
        found, n = await soak_session(tmp_path, seed)
        problems += found
        escaped += n
    assert escaped == 0 and problems == [], problems[:10]
    assert FAULTS_SEEN, "the soak saw no fault at all"


async def test_fault_soak_50_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    await soak(tmp_path, 50, monkeypatch)


@pytest.mark.soak
async def test_fault_soak_200_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    await soak(tmp_path, 200, monkeypatch)

