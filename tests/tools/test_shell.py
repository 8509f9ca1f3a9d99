"""shell: disabled by default; exit code and streams; timeout and abort kill the process group."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.tools import Shell


def on(tmp_path: Path, **kw: object) -> ToolContext:
    return ToolContext(cwd=tmp_path, shell_enabled=True, **kw)  # type: ignore[arg-type]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


async def test_disabled_by_default(tmp_path: Path) -> None:
    out = await Shell().run({"command": "touch created"}, ToolContext(cwd=tmp_path))
    assert out.is_error and "disabled" in out.content and "shell_enabled" in out.content
    assert not (tmp_path / "created").exists()


async def test_runs_in_cwd_with_exit_code_and_streams(tmp_path: Path) -> None:
    out = await Shell().run({"command": "pwd; echo oops >&2"}, on(tmp_path))
    assert not out.is_error
    real = await asyncio.to_thread(os.path.realpath, tmp_path)
    assert out.content == f"exit code: 0\n[stdout]\n{real}\n[stderr]\noops"
    fail = await Shell().run({"command": "exit 3"}, on(tmp_path))
    assert fail.is_error and fail.content == "exit code: 3\n(no output)"


async def test_no_stdin(tmp_path: Path) -> None:
    out = await Shell().run({"command": "cat; echo done", "timeout_s": 5}, on(tmp_path))
    assert "done" in out.content


async def test_timeout_kills_the_group(tmp_path: Path) -> None:
    start = time.monotonic()
    out = await Shell().run({"command": "echo started; sleep 30 & echo $! > child.pid; wait", "timeout_s": 0.5}, on(tmp_path))
    assert time.monotonic() - start < 15  # not the 30 s the child sleeps; room for a loaded CI machine
    assert out.is_error and "Timed out after 0.5 s" in out.content and "started" in out.content
    child = int((tmp_path / "child.pid").read_text())
    await asyncio.sleep(0.1)
    assert not pid_alive(child)


async def test_abort_kills_within_a_second(tmp_path: Path) -> None:
    abort = asyncio.Event()
    task = asyncio.ensure_future(Shell().run({"command": "sleep 30 & echo $! > child.pid; wait"}, on(tmp_path, abort=abort)))
    for _ in range(100):
        if (tmp_path / "child.pid").exists() and (tmp_path / "child.pid").read_text().strip():
            break
        await asyncio.sleep(0.02)
    start = time.monotonic()
    abort.set()
    out = await task
    assert time.monotonic() - start < 10  # not the 30 s the child sleeps; room for a loaded CI machine
    assert out.is_error and "Aborted by the user" in out.content
    await asyncio.sleep(0.1)
    assert not pid_alive(int((tmp_path / "child.pid").read_text()))


async def test_cancelled_tool_does_not_leak_the_process(tmp_path: Path) -> None:
    task = asyncio.ensure_future(Shell().run({"command": "echo $$ > sh.pid; sleep 30"}, on(tmp_path)))
    for _ in range(100):
        if (tmp_path / "sh.pid").exists() and (tmp_path / "sh.pid").read_text().strip():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    await asyncio.sleep(0.2)
    assert not pid_alive(int((tmp_path / "sh.pid").read_text()))


async def test_a_command_printing_megabytes_is_captured_bounded_with_what_was_dropped(tmp_path: Path) -> None:
    out = await Shell().run({"command": "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo done >&2"},
                            on(tmp_path, capture_limit=10_000))
    assert not out.is_error and len(out.content) < 12_000
    assert "characters of output not captured" in out.content and "[stderr]\ndone" in out.content
