"""``python``: run code through the session's executor (the live kernel in a notebook).

The tool owns no interpreter: ``ctx.executor`` (an :class:`~nbagent.tools.executor.Executor`)
runs the code; without one, a :class:`~nbagent.tools.executor.NamespaceExecutor` kept on the tool
instance does, so variables persist between calls in a script too. In a notebook that is the
user's kernel namespace: the model's code can read and change the user's variables.

Relative paths in the code resolve against the agent's ``cwd``: an executor that takes ``cwd=``
sets the process's working directory to it for the execution and restores it afterwards (under a
lock: the kernel is one process, and its working directory is shared by everything in it).
"""

from __future__ import annotations

import asyncio
import dataclasses

import pydantic

from nbagent.engine.api_facts.images import IMAGE_MEDIA_TYPES
from nbagent.engine.contracts.json_types import JSONObject
from nbagent.engine.contracts.tool_api import ToolContext, ToolOutput

from .base import BuiltinTool, ToolInput, wait_or_abort
from .executor import ExecutionResult, Executor, NamespaceExecutor, takes_cwd

MAX_IMAGES = 4
"""The most images one python call sends the model (the first ones the cell shows), as ``notebook_read``'s."""


class PythonInput(ToolInput):
    code: str = pydantic.Field(min_length=1, description="Python code. The repr of a trailing expression is returned.")


def format_execution(result: ExecutionResult) -> str:
    """The text the model gets: stdout as is, then labelled stderr, result and error sections."""
    parts: list[str] = []
    if result.stdout:
        parts.append(result.stdout.rstrip("\n"))
    if result.stderr:
        parts.append("[stderr]\n" + result.stderr.rstrip("\n"))
    if result.displayed:  # in the order a cell shows them: streams, displays, the value
        parts.append("[displayed]\n" + result.displayed.rstrip("\n"))
    if result.result_repr is not None:
        parts.append("[result]\n" + result.result_repr)
    if result.error:
        parts.append("[error]\n" + result.error.rstrip("\n"))
    return "\n".join(parts) if parts else "(no output)"


def _content(result: ExecutionResult) -> str | list[JSONObject]:
    text = format_execution(result)
    images = result.images or tuple(  # an executor that only gives the value's bundle
        (media, data) for media in IMAGE_MEDIA_TYPES if isinstance(data := (result.rich or {}).get(media), str))
    if not images:
        return text
    if len(images) > MAX_IMAGES:
        text += (f"\n[{len(images) - MAX_IMAGES} more images the code showed not sent: at most {MAX_IMAGES} per "
                 "python call; show fewer at a time to see them]")
    blocks: list[JSONObject] = [{"type": "text", "text": text}]
    for media, data in images[:MAX_IMAGES]:
        blocks.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
    return blocks


class Python(BuiltinTool):
    """Run Python code; returns stdout, stderr, the last expression's repr, or the traceback."""

    name = "python"
    description = (
        "Run Python code in the session's Python namespace (the live notebook kernel when in "
        "Jupyter): variables persist between calls. Returns printed output, stderr, the repr of a "
        "trailing expression, and the traceback if the code raised."
    )
    read_only = False
    runs_in_kernel = True  # may make credential variables: the loop reads them again before its output is redacted
    Input = PythonInput

    def __init__(self, executor: Executor | None = None) -> None:
        self._fallback = executor

    def executor_for(self, ctx: ToolContext) -> Executor:
        """``ctx.executor`` if set, else this tool's own persistent :class:`NamespaceExecutor`."""
        if ctx.executor is not None:
            return ctx.executor
        if self._fallback is None:
            self._fallback = NamespaceExecutor(capture_limit=ctx.capture_limit)
        return self._fallback

    async def call(self, params: PythonInput, ctx: ToolContext) -> ToolOutput:
        executor = self.executor_for(ctx)
        # ``cwd=`` is optional in the Executor protocol: checked first
        run = executor.execute(params.code, cwd=ctx.cwd) if takes_cwd(executor) else executor.execute(params.code)
        result = await wait_or_abort(run, ctx.abort)
        content = _content(result)
        bound = getattr(executor, "bounded_images", None)
        if callable(bound) and not isinstance(content, str):
            # The kernel's displays can be any size (an 18 MB PNG, more than a request carries): its
            # executor bounds them as notebook_read's, off the loop (downscaling takes a second or two).
            content = await asyncio.to_thread(bound, content, ctx.redact)  # no figure holding a secret either
        # The notebook shows a value with an HTML form (a DataFrame) as that table: the card's
        # text then leaves out the repr the model gets, instead of showing the value twice.
        # The same for what the code displayed: the card draws those outputs themselves.
        display = None
        shown_value = bool(result.rich and "text/html" in result.rich and result.result_repr is not None)
        if shown_value or result.displayed:
            display = format_execution(dataclasses.replace(
                result, displayed="", result_repr=None if shown_value else result.result_repr))
            if display == "(no output)":
                display = "(the value is shown below)" if shown_value else "(shown below)"
        return ToolOutput(content, is_error=result.error is not None, display=display)


__all__ = ["Python", "PythonInput", "format_execution", "Executor", "ExecutionResult", "NamespaceExecutor"]
