"""``Agent``: wires a config into provider + tools + ``QueryEngine``; used by the magics and scripts.

>>> import asyncio, nbagent
>>> agent = nbagent.Agent(allow=["python"])          # no API key: the offline simulated model
>>> async def main():
...     async for event in agent.run("what is 17 * 23?"):
...         ...
>>> asyncio.run(main())
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Literal, Mapping, Sequence

from .engine.api_request import OnApiFailure, cancel_on_failure
from .engine.errors import MissingApiKeyError
from .engine.events import Done, Event, Notice, TextDelta
from .engine.models import DEFAULT_MODEL, ModelInfo
from .engine.permissions import CanUseTool
from .engine.query import QueryEngine, QueryEngineConfig
from .engine.stream import Provider
from .providers.anthropic import SIMULATED_NOTICE, anthropic_provider, api_key_from_env, simulated_provider

ProviderChoice = Literal["auto", "simulated", "anthropic"]
_announced_simulated = False


@dataclass(frozen=True)
class AgentConfig:
    """User-facing settings of one agent session (the magics map their options onto this).

    ``api_key`` is never shown in ``repr`` and never persisted.
    """

    model: str = DEFAULT_MODEL
    provider: ProviderChoice = "auto"
    api_key: str | None = field(default=None, repr=False)
    cwd: Path | None = None
    allow: Sequence[str] = ()
    max_turns: int | None = 25
    max_budget_usd: float | None = None
    max_tokens: int = 8192
    context_window: int | None = None
    task_dir: Path | None = None
    thinking_budget: int | None = None
    shell: bool = False
    fallback_model: str | None = None
    prices: Mapping[str, ModelInfo] | None = None
    mcp_servers: Mapping[str, Any] = field(default_factory=dict)
    """MCP servers, ``{"name": {"command", "args", "env"} | {"url", "headers"}}``; merged over ``.mcp.json`` in cwd."""
    mcp_wait_timeout: float = 10.0
    """Longest wait before a request for MCP servers that are still connecting."""
    custom_system_prompt: str | None = None
    append_system_prompt: str | None = None
    allowed_paths: Sequence[Path] = ()
    tool_output_limit: int = 30_000
    request_timeout_s: float | None = None
    """Per-request timeout (None: the SDK's default, 10 minutes)."""
    simulated_options: Mapping[str, Any] = field(default_factory=dict)
    """Options for the simulated API (``tokens_per_second``, ``first_token_latency``, ``faults``…)."""


def make_provider(config: AgentConfig) -> Provider:
    """The provider the config asks for: a real key → Anthropic; no key (``auto``) → simulated."""
    key = config.api_key or api_key_from_env()
    if config.provider == "anthropic":
        if not key:
            raise MissingApiKeyError()
        return anthropic_provider(key)
    if config.provider == "auto" and key:
        return anthropic_provider(key)
    return simulated_provider(**dict(config.simulated_options))


def _default_tools(config: AgentConfig) -> list[Any]:
    from .tools import builtin_tools

    return list(builtin_tools(shell=config.shell))


class Agent:
    """One agent session: a provider, tools and a :class:`QueryEngine` built from an :class:`AgentConfig`."""

    def __init__(
        self,
        config: AgentConfig | None = None,
        *,
        provider: Provider | None = None,
        tools: Sequence[Any] | None = None,
        can_use_tool: CanUseTool | None = None,
        on_api_failure: OnApiFailure | None = None,
        executor: Any = None,
        kernel_facts: Any = None,
        sleep: Any = None,
        in_notebook: bool = False,
        engine: QueryEngine | None = None,
        **overrides: Any,
    ) -> None:
        config = config or AgentConfig()
        if overrides:
            if "cwd" in overrides and overrides["cwd"] is not None:
                overrides["cwd"] = Path(overrides["cwd"])
            config = dataclasses.replace(config, **overrides)
        self.config = config
        self.provider = provider or make_provider(config)
        self.tools = list(tools) if tools is not None else _default_tools(config)
        self._announce = self.provider.name == "simulated"
        qcfg = QueryEngineConfig(
            provider=self.provider, cwd=(config.cwd or Path.cwd()).resolve(), model=config.model,
            fallback_model=config.fallback_model, tools=self.tools, can_use_tool=can_use_tool,
            allow=tuple(config.allow), mcp_servers=dict(config.mcp_servers),
            custom_system_prompt=config.custom_system_prompt, append_system_prompt=config.append_system_prompt,
            thinking_budget=config.thinking_budget, max_turns=config.max_turns,
            max_budget_usd=config.max_budget_usd, max_tokens=config.max_tokens,
            context_window=config.context_window, task_dir=config.task_dir,
            on_api_failure=on_api_failure or cancel_on_failure, prices=config.prices,
            allowed_paths=tuple(Path(p) for p in config.allowed_paths), executor=executor,
            shell_enabled=config.shell, tool_output_limit=config.tool_output_limit,
            request_timeout_s=config.request_timeout_s,
            sleep=sleep or asyncio.sleep, kernel_facts=kernel_facts, in_notebook=in_notebook,
        )
        from .tools.mcp import build_mcp_manager  # no mcp import unless servers are configured

        # Connecting starts now, in the background; None when no server is configured.
        self.mcp = None if engine is not None else build_mcp_manager(
            config.mcp_servers, qcfg.cwd, wait_timeout=config.mcp_wait_timeout)
        if self.mcp is not None:
            # The manager is a ToolSource: its bounded wait before each request, its tools. It
            # bounds the wait itself; the engine's tool_wait_s is only a safety net behind it.
            qcfg = dataclasses.replace(qcfg, wait_for_tools=self.mcp.ready, dynamic_tools=self.mcp.tools,
                                       tool_wait_s=max(qcfg.tool_wait_s, self.mcp.wait_timeout + 2.0))
            self.mcp.close_with(self)  # a dropped agent does not leave servers running
        self.engine = engine or QueryEngine(qcfg)

    def __repr__(self) -> str:
        return f"Agent(model={self.config.model!r}, provider={self.provider.name!r}, turns={self.engine.turn})"

    @classmethod
    def resume(cls, task_dir: str | Path, config: AgentConfig | None = None, **kwargs: Any) -> "Agent":
        """Continue a persisted session from its task folder."""
        config = dataclasses.replace(config or AgentConfig(), task_dir=Path(task_dir))
        fresh = cls(config, **kwargs)
        fresh.engine = QueryEngine.resume(task_dir, fresh.engine.config)
        return fresh

    # ----- running ----------------------------------------------------------------------
    async def run(self, prompt: str) -> AsyncIterator[Event]:
        """Stream the events of one user prompt (the loop runs until the model ends its turn)."""
        global _announced_simulated
        if self._announce and not _announced_simulated:
            _announced_simulated = True
            yield Notice(level="info", message=SIMULATED_NOTICE)
        async for event in self.engine.submit_message(prompt):
            yield event

    async def ask(self, prompt: str) -> str:
        """Run ``prompt`` and return the assistant's text (all requests of the turn, joined)."""
        parts: list[str] = []
        async for event in self.run(prompt):
            if isinstance(event, TextDelta):
                parts.append(event.text)
        return "".join(parts)

    def run_sync(self, prompt: str) -> list[Event]:
        """Blocking convenience: run ``prompt`` and return all its events.

        Inside a running loop (a notebook cell) the run gets a private loop on a worker thread and
        this thread waits with a 0.1 s tick, so an interrupt aborts it cleanly. (``nest_asyncio``
        was measured to break ipykernel 7: its shell tasks share one ``Context``, which a nested
        loop cannot re-enter.) Permission clicks reach a blocked cell through the nbagent kernel's
        shell-channel fast path.
        """
        async def collect() -> list[Event]:
            return [e async for e in self.run(prompt)]

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(collect())
        from .blocking import run_blocking

        return run_blocking(collect, on_interrupt=self.abort, name="nbagent-run-sync")

    # ----- controls and state ------------------------------------------------------------
    def abort(self) -> None:
        """Stop the running loop within a second (thread-safe)."""
        self.engine.abort()

    def retry_now(self) -> None:
        """Skip the current retry wait (thread-safe)."""
        self.engine.retry_now()

    def rollback(self, turn: int) -> None:
        """Return the session to the end of ``turn``."""
        self.engine.rollback(turn)

    @property
    def history(self) -> list[dict[str, Any]]:
        return self.engine.history

    @property
    def records(self) -> list[Any]:
        return self.engine.records

    @property
    def totals(self) -> Any:
        return self.engine.totals

    @property
    def events(self) -> list[Event]:
        return self.engine.events

    @property
    def denials(self) -> list[Any]:
        return self.engine.denials

    @property
    def simulated_api(self) -> Any:
        """The simulated Messages API behind this agent (None with a real key)."""
        return getattr(self.provider, "api", None)

    def mcp_status(self) -> list[str]:
        """One line per MCP server: name, transport, state and tools (empty without servers)."""
        return self.mcp.status_lines() if self.mcp is not None else []

    async def aclose(self) -> None:
        """Release the session's background resources: MCP connections and server processes."""
        if self.mcp is not None:
            await self.mcp.aclose()


def last_done(events: Sequence[Event]) -> Done | None:
    """The ``Done`` event of a run, if it finished."""
    for e in reversed(events):
        if isinstance(e, Done):
            return e
    return None
