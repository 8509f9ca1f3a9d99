"""What a :class:`~nbagent.engine.loop.query.QueryEngine` works with besides its settings and session:
its keyword arguments, named once so that ``QueryEngine.resume`` passes them on typed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, TypedDict

from ..contracts.hooks import Hooks
from ..contracts.provider import Provider
from ..contracts.tool_api import ToolLike, ToolSource
from .facts import KernelFacts
from .request_run import Sleep

if TYPE_CHECKING:  # typing.Required is 3.11+
    from typing_extensions import Required


class Collaborators(TypedDict, total=False):
    """The engine's collaborators: the provider (required), tools and tool sources, the python
    tool's executor (passed through to tools), the kernel facts, the sleep retries wait with, the
    hooks and the secret values to redact."""

    provider: Required[Provider]
    tools: Sequence[ToolLike]
    tool_sources: Sequence[ToolSource]
    executor: object
    kernel_facts: KernelFacts | None
    sleep: Sleep
    hooks: Hooks | None
    secrets: Sequence[str | None]
