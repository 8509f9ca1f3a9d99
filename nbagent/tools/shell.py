"""``shell``: run a command in the working directory (off unless the session enables it).

The command runs in its own process group (``start_new_session``) so that a timeout, an abort or a
cancelled task kills everything it started — ``sh -c "make test"`` and all of make's children —
not just the shell.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import signal
from typing import Literal, Optional

import pydantic

from nbagent.engine.contracts.tool_api import ToolContext, ToolOutput

from ..engine.contracts.waits import within
from .base import BuiltinTool, ToolAborted, ToolInput
from .capture import BoundedText

DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 600.0
# After SIGTERM, how long the group gets before SIGKILL; short, because an abort must finish in 1 s.
_TERM_GRACE_S = 0.3
# After the kill, how long to wait for the pipes to close (a daemonised grandchild may hold them).
_DRAIN_S = 0.5
_CHUNK = 65_536

DISABLED_MESSAGE = (
    "The shell tool is disabled in this session. The user can enable it (the session's "
    "shell_enabled setting, with the shell tool in the tool list); meanwhile use the python tool "
    "or the file tools."
)


class ShellInput(ToolInput):
    command: str = pydantic.Field(min_length=1, description="Shell command line, run with /bin/sh in the working directory.")
    timeout_s: Optional[float] = pydantic.Field(
        default=None, gt=0, le=MAX_TIMEOUT_S,
        description=f"Seconds before the command is killed. Default {DEFAULT_TIMEOUT_S:g}.",
    )


def _signal_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # pid == pgid thanks to start_new_session
    except (ProcessLookupError, PermissionError):
        pass


async def _kill(proc: asyncio.subprocess.Process) -> None:
    """Terminate the whole process group, then kill it if it does not go quietly."""
    if proc.returncode is not None:
        _signal_group(proc, signal.SIGKILL)  # the shell exited; its children may not have
        return
    _signal_group(proc, signal.SIGTERM)
    try:
        await within(proc.wait(), _TERM_GRACE_S)
    except asyncio.TimeoutError:
        pass
    _signal_group(proc, signal.SIGKILL)
    try:
        await within(proc.wait(), _TERM_GRACE_S)
    except asyncio.TimeoutError:
        pass


def _format(code: int | None, stdout: str, stderr: str, note: str = "") -> str:
    parts = [note] if note else []
    parts.append(f"exit code: {code}")
    if stdout:
        parts.append("[stdout]\n" + stdout.rstrip("\n"))
    if stderr:
        parts.append("[stderr]\n" + stderr.rstrip("\n"))
    if not stdout and not stderr:
        parts.append("(no output)")
    return "\n".join(parts)


async def _read_bounded(stream: asyncio.StreamReader | None, into: BoundedText) -> None:
    """Read a pipe to its end, keeping head and tail only: a command printing gigabytes must not
    fill memory (what is dropped is counted in the text)."""
    if stream is None:
        return
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := await stream.read(_CHUNK):
        into.write(decoder.decode(chunk))
    into.write(decoder.decode(b"", final=True))


async def _communicate(proc: asyncio.subprocess.Process, limit: int) -> tuple[str, str]:
    """``proc.communicate()`` with bounded capture."""
    out, err = BoundedText(limit), BoundedText(limit)
    await asyncio.gather(_read_bounded(proc.stdout, out), _read_bounded(proc.stderr, err))
    await proc.wait()
    return out.getvalue(), err.getvalue()


class Shell(BuiltinTool):
    """Run a shell command; returns the exit code, stdout and stderr."""

    name = "shell"
    description = (
        "Run a shell command (/bin/sh) in the working directory, with no stdin. Returns the exit "
        "code, stdout and stderr. Killed (with everything it started) after timeout_s seconds."
    )
    read_only = False
    Input = ShellInput

    async def call(self, params: ShellInput, ctx: ToolContext) -> ToolOutput:
        if not ctx.shell_enabled:
            return ToolOutput(DISABLED_MESSAGE, is_error=True)
        if ctx.abort is not None and ctx.abort.is_set():
            raise ToolAborted("Aborted before it started.")
        timeout = params.timeout_s or DEFAULT_TIMEOUT_S
        proc = await asyncio.create_subprocess_shell(
            params.command,
            cwd=str(ctx.cwd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            env=dict(ctx.env) if ctx.env is not None else None,  # without the API key and other secrets
        )
        communicate = asyncio.ensure_future(_communicate(proc, ctx.capture_limit))
        waiters: set[asyncio.Future[tuple[str, str]] | asyncio.Future[Literal[True]]] = {communicate}
        abort_wait = asyncio.ensure_future(ctx.abort.wait()) if ctx.abort is not None else None
        if abort_wait is not None:
            waiters.add(abort_wait)
        try:
            done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if communicate in done:
                stdout, stderr = communicate.result()
                return ToolOutput(_format(proc.returncode, stdout, stderr), is_error=proc.returncode != 0)
            aborted = abort_wait is not None and abort_wait in done
            await _kill(proc)
            # Killing the group closes its pipes, so what was printed so far comes back.
            try:
                stdout, stderr = await within(asyncio.shield(communicate), _DRAIN_S)
            except asyncio.TimeoutError:
                stdout, stderr = "", ""
            if aborted:
                note = "Aborted by the user; the command and its child processes were killed."
            else:
                note = f"Timed out after {timeout:g} s; the command and its child processes were killed."
            return ToolOutput(_format(proc.returncode, stdout, stderr, note), is_error=True)
        finally:
            if abort_wait is not None:
                abort_wait.cancel()
            if proc.returncode is None or not communicate.done():
                # Cancelled (or failed) while the command ran: never leak it, nor the children
                # that outlived /bin/sh and still hold its pipes.
                _signal_group(proc, signal.SIGKILL)
            if not communicate.done():
                communicate.cancel()


__all__ = ["Shell", "ShellInput", "DEFAULT_TIMEOUT_S", "DISABLED_MESSAGE"]
