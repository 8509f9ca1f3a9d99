"""The loop's configuration object and what the loop keeps about each request it sent.

``QueryEngineConfig`` is one frozen object per session (the query-engine spec); make a changed copy
with ``dataclasses.replace``. It never holds an API key: the provider owns its client.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping, Sequence

from .api_request import OnApiFailure, Sleep, cancel_on_failure
from .models import DEFAULT_MODEL, ModelInfo
from .permissions import CanUseTool
from .prompt import IGNORE_FILE, RULES_DIR, RULES_FILES, VariableInfo, read_ignore_patterns, read_rules
from .stream import Provider
from .tool_api import ToolLike

DEFAULT_TOOL_OUTPUT_LIMIT = 30_000
KernelFacts = Callable[[], tuple[Sequence[VariableInfo], Sequence[str]]]


@dataclass(frozen=True)
class QueryEngineConfig:
    """One session's configuration (frozen: make a new one with ``dataclasses.replace``)."""

    provider: Provider
    """Where replies come from: ``nbagent.providers.anthropic`` (real or simulated API)."""
    cwd: Path = field(default_factory=Path.cwd)
    """Working directory: file tools resolve paths here and refuse paths outside it."""
    model: str = DEFAULT_MODEL
    """Model id sent with every request (see ``nbagent.engine.models`` for windows and prices)."""
    fallback_model: str | None = None
    """Used for the rest of a turn when the primary fails with overloaded/not_found after retries."""
    tools: Sequence[ToolLike] = ()
    """Tools offered to the model, in this order."""
    can_use_tool: CanUseTool | None = None
    """Asked about every non-read-only tool call; None (headless) denies them with a clear reason."""
    allow: Sequence[str] = ()
    """Tool names allowed without asking."""
    mcp_servers: Mapping[str, Any] = field(default_factory=dict)
    """MCP server definitions (the tools layer connects them; see ``wait_for_tools``)."""
    initial_messages: Sequence[dict[str, Any]] = ()
    """History to start from (e.g. a conversation carried over); ``resume`` reads a task dir instead."""
    custom_system_prompt: str | None = None
    """Replaces nbagent's base system prompt (the environment section is still added)."""
    append_system_prompt: str | None = None
    """Added at the end of the system prompt."""
    thinking_budget: int | None = None
    """Extended thinking budget in tokens (None: off)."""
    max_turns: int | None = None
    """Most API requests per ``submit_message`` (then ``Done("max_turns")``)."""
    max_budget_usd: float | None = None
    """Session budget: checked before every request; once the session's cost reaches it the loop
    ends with ``Done("max_budget")`` instead of sending another request."""
    max_tokens: int = 8192
    """``max_tokens`` of every request (output limit)."""
    context_window: int | None = None
    """Override of the model table's window (a tiny one makes truncation visible in demos)."""
    auto_condense: bool = False
    """Summarise instead of truncating (off; reserved)."""
    task_dir: Path | None = None
    """Persistence folder (None: in memory only)."""
    on_api_failure: OnApiFailure = cancel_on_failure
    """Asked after retries are exhausted or for a non-retryable error: ``"retry"`` or ``"cancel"``."""
    abort: asyncio.Event | None = None
    """Setting it stops the loop within a second (``Done("aborted")``); one is made when None."""
    prices: Mapping[str, ModelInfo] | None = None
    """Price/window table overriding the built-in one (proxies, special plans)."""
    allowed_paths: Sequence[Path] = ()
    """Paths outside ``cwd`` that file tools may touch."""
    executor: Any = None
    """The python tool's executor (the notebook supplies one on the live namespace)."""
    shell_enabled: bool = False
    """Whether the shell tool may run commands."""
    tool_output_limit: int = DEFAULT_TOOL_OUTPUT_LIMIT
    """Tool output longer than this many characters is cut in the middle before the model sees it."""
    max_retry_delay: float = 60.0
    """Longest automatic retry wait; a server asking for longer is reported to the user instead."""
    sleep: Sleep = asyncio.sleep
    """Injectable for tests (a fake clock instead of real waits)."""
    kernel_facts: KernelFacts | None = None
    """Returns (user variables, recent cell inputs) for the system prompt."""
    in_notebook: bool = False
    """Whether the system prompt says the agent runs inside a notebook kernel."""
    wait_for_tools: Callable[[], Awaitable[list[str]]] | None = None
    """Bounded wait (10 s) for tool servers before each request; returns warnings to show."""
    dynamic_tools: Callable[[], Sequence[ToolLike]] | None = None
    """Tools that come and go during a session (MCP servers), read before each request."""
    tool_wait_s: float = 10.0
    """Longest wait for tool servers before a request (the spec's bound; MCP raises it to its own)."""
    request_timeout_s: float | None = None
    """Per-request timeout passed to the provider (None: the client's default)."""


@dataclass(frozen=True)
class SentRequest:
    """What the model saw at one request (kept in memory for ``%agent saw``)."""

    request: int
    turn: int
    model: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[str]


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class RulesCache:
    """Rules files and ignore patterns of one ``cwd``, re-read only when a file changed (by mtime
    and size), so a request does not re-read the project's rules every time."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._key: tuple[Any, ...] | None = None
        self._value: tuple[str, list[str]] = ("", [])

    def _fingerprint(self) -> tuple[Any, ...]:
        files = tuple(_stat_key(self.cwd / name) for name in RULES_FILES)
        rules_dir = self.cwd / RULES_DIR
        try:
            entries = sorted(e.name for e in os.scandir(rules_dir) if e.name.endswith(".md"))
        except OSError:
            entries = []
        in_dir = tuple((name, _stat_key(rules_dir / name)) for name in entries)
        return files, _stat_key(rules_dir), in_dir, _stat_key(self.cwd / IGNORE_FILE)

    def get(self) -> tuple[str, list[str]]:
        """``(rules text, ignore patterns)``, as ``read_rules`` / ``read_ignore_patterns`` give them."""
        key = self._fingerprint()
        if key != self._key:
            self._value = (read_rules(self.cwd), read_ignore_patterns(self.cwd))
            self._key = key
        return self._value
