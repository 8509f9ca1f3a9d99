"""What every built-in tool shares: strict inputs, errors as ``is_error`` results, truncation, abort.

A built-in tool subclasses :class:`BuiltinTool`, declares ``Input`` (a :class:`ToolInput` model)
and implements :meth:`BuiltinTool.call` with typed parameters. :meth:`BuiltinTool.run` turns the
expected failures (bad input, refused path, stale file, OS errors, abort) into ``is_error``
outputs the model can act on, and cuts long output in the middle.
"""

from __future__ import annotations

import asyncio
import errno
from typing import Any, Awaitable, ClassVar, TypeVar

import pydantic

from nbagent.engine.context.file_state import FileChangedError
from nbagent.engine.contracts.json_types import JSONObject
from nbagent.engine.contracts.tool_api import Tool, ToolContext, ToolExecutionError, ToolInputError, ToolOutput

T = TypeVar("T")


class ToolInput(pydantic.BaseModel):
    """Base of every built-in tool's input model: unknown keys are errors (the schema says
    ``additionalProperties: false``), and NaN/inf are not numbers."""

    model_config = pydantic.ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


class ToolAborted(ToolExecutionError):
    """The run was aborted (``ctx.abort`` was set) while the tool was waiting."""


def describe_os_error(exc: OSError) -> str:
    """A one-line message for an OSError, naming the file when there is one."""
    where = f": {exc.filename}" if exc.filename else ""
    if exc.errno == errno.ENOENT:
        return f"No such file or directory{where}"
    if exc.errno == errno.EISDIR:
        return f"Is a directory{where}"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"Permission denied{where}"
    return f"{exc.strerror or type(exc).__name__}{where}"


async def wait_or_abort(aw: Awaitable[T], abort: asyncio.Event | None) -> T:
    """Await ``aw``; if ``abort`` is set first, cancel it and raise :class:`ToolAborted` at once.

    Cancelling a task that waits on a worker thread only stops the waiting: the thread runs on.
    Tools that own a process kill it themselves (see the shell tool).
    """
    task = asyncio.ensure_future(aw)
    if abort is None:
        return await task
    if abort.is_set():
        task.cancel()
        raise ToolAborted("Aborted before it started.")
    abort_wait = asyncio.ensure_future(abort.wait())
    try:
        done, _ = await asyncio.wait({task, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        abort_wait.cancel()
    if task in done:
        return task.result()
    task.cancel()
    raise ToolAborted("Aborted by the user before it finished.")


class BuiltinTool(Tool):
    """A :class:`~nbagent.engine.contracts.tool_api.Tool` with typed input and uniform error handling."""

    Input: ClassVar[type[ToolInput]]

    async def run(self, tool_input: JSONObject, ctx: ToolContext) -> ToolOutput:
        """Validate, call, and shape the output; never raises except ``CancelledError``."""
        try:
            try:
                params = self.Input.model_validate(tool_input)  # the loop validated it; this types it
            except pydantic.ValidationError:
                self.validate(tool_input)  # called directly with bad input: the model-facing message
                raise
            out = await self.call(params, ctx)
        except ToolAborted as exc:
            return ToolOutput(f"{self.name}: {exc}", is_error=True)
        except (ToolInputError, ToolExecutionError, FileChangedError) as exc:
            return ToolOutput(str(exc), is_error=True)
        except OSError as exc:
            return ToolOutput(describe_os_error(exc), is_error=True)
        except Exception as exc:  # noqa: BLE001 - a tool bug must reach the model, not crash the loop
            return ToolOutput(f"{self.name} failed unexpectedly: {type(exc).__name__}: {exc}", is_error=True)
        return out  # the loop cuts long output, once

    async def call(self, params: Any, ctx: ToolContext) -> ToolOutput:  # pragma: no cover
        """Do the work with validated ``params`` (an instance of ``Input``)."""
        raise NotImplementedError


__all__ = ["ToolInput", "ToolAborted", "BuiltinTool", "wait_or_abort", "describe_os_error"]
