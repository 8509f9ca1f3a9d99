"""Issue 22: after an aborted runaway python call, later calls run (the runaway is interrupted, or
reported when it cannot be); relative paths in the code land in the agent's ``cwd``."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.tool_api import ToolContext, ToolOutput
from nbagent.tools import executor as executor_module
from nbagent.tools.executor import NamespaceExecutor
from nbagent.tools.python import Python

HANG_BREAKER_S = 60.0
"""Not a speed bound: on code that hangs, the call's own abort fires after this, so the test fails
with a clear assertion instead of hanging the suite. Correct code never comes near it."""


async def aborted_call(ex: NamespaceExecutor, code: str, tmp_path: Path) -> None:
    """Run ``code`` (which sets ``started``) through the tool, and abort it once it runs."""
    abort = asyncio.Event()
    task = asyncio.ensure_future(Python().run({"code": code}, ToolContext(cwd=tmp_path, abort=abort, executor=ex)))
    started = ex.namespace["started"]
    assert isinstance(started, threading.Event)
    await asyncio.to_thread(started.wait)
    abort.set()
    out = await task
    assert out.is_error and "Aborted" in out.content


async def guarded_call(ex: NamespaceExecutor, code: str, tmp_path: Path) -> ToolOutput:
    abort = asyncio.Event()
    breaker = asyncio.get_running_loop().call_later(HANG_BREAKER_S, abort.set)
    try:
        return await Python().run({"code": code}, ToolContext(cwd=tmp_path, abort=abort, executor=ex))
    finally:
        breaker.cancel()


async def test_an_aborted_runaway_loop_is_stopped_and_the_next_call_runs(tmp_path: Path) -> None:
    ex = NamespaceExecutor({"started": threading.Event(), "n": [0]})
    await aborted_call(ex, "started.set()\nwhile True:\n    n[0] += 1", tmp_path)
    out = await guarded_call(ex, "1 + 1", tmp_path)
    assert not out.is_error and "[result]\n2" in out.content
    counter = ex.namespace["n"]
    assert isinstance(counter, list)
    spins = counter[0]
    assert (await guarded_call(ex, "n[0]", tmp_path)).content == f"[result]\n{spins}"  # the loop is gone


async def test_a_call_after_an_aborted_call_blocked_in_c_says_so_instead_of_waiting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor_module, "BUSY_GRACE_S", 0.05)
    gate = threading.Lock()
    gate.acquire()
    ex = NamespaceExecutor({"started": threading.Event(), "gate": gate})
    await aborted_call(ex, "started.set()\ngate.acquire()\nleaked = 1", tmp_path)
    out = await guarded_call(ex, "1 + 1", tmp_path)
    assert out.is_error and "still running" in out.content and "Aborted" not in out.content
    gate.release()  # the blocked call returns, and the pending interrupt stops it there
    monkeypatch.setattr(executor_module, "BUSY_GRACE_S", HANG_BREAKER_S)
    out = await guarded_call(ex, "'leaked' in globals()", tmp_path)
    assert out.content == "[result]\nFalse"


async def test_relative_paths_land_in_the_agents_cwd_and_the_process_cwd_is_restored(tmp_path: Path) -> None:
    before = os.getcwd()
    out = await Python().run({"code": "import os\nopen('made.txt', 'w').write('x')\nos.getcwd()"},
                             ToolContext(cwd=tmp_path))
    assert (tmp_path / "made.txt").read_bytes() == b"x"  # noqa: ASYNC240 - a test's one small read
    assert out.content == f"[result]\n{str(tmp_path)!r}"
    assert os.getcwd() == before and "made.txt" not in os.listdir(before)  # noqa: ASYNC240


async def test_an_executor_without_cwd_still_works(tmp_path: Path) -> None:
    class Old:
        async def execute(self, code: str) -> Any:
            return await NamespaceExecutor().execute(code)

    out = await Python().run({"code": "6 * 7"}, ToolContext(cwd=tmp_path, executor=Old()))
    assert out.content == "[result]\n42"
