"""How an :class:`~nbagent.agent.Agent` is put together from its arguments: the settings in force
(the admin's, an endpoint profile's, the caller's), the provider, and the tools with the MCP
servers that bring more (see ``Agent.__init__`` for what each argument means)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from .admin import admin_policy
from .admin.enforce import guarded_hooks, session_config
from .engine.contracts.config import SessionConfig
from .engine.contracts.hooks import HookMap, Hooks
from .engine.contracts.provider import Provider
from .engine.contracts.tool_api import ToolLike, ToolSource
from .engine.loop.sanitize import SecretValues, secret_values
from .providers.choice import ProviderChoice, endpoint_of, endpoint_settings

if TYPE_CHECKING:
    from .tools.mcp import McpManager, ProjectMcpJson


@dataclass(frozen=True)
class Settings:
    """What an Agent's settings arguments come to."""

    config: SessionConfig
    provider: ProviderChoice | Provider
    """The provider asked for (a choice still to be made, or one made for an endpoint's profile)."""
    endpoint: Any
    """The endpoint the provider talks to (None: the simulated API, or Anthropic's)."""
    hooks: HookMap | Hooks | None
    """The caller's hooks, with the admin policy's guard in front of them."""


def settings_in_force(config: SessionConfig | None, provider: ProviderChoice | Provider, endpoint: Any,
                      hooks: HookMap | Hooks | None, settings: dict[str, Any]) -> Settings:
    """The config from the admin's defaults and limits, ``config`` or the keyword ``settings``,
    and an endpoint profile's settings where the caller chose none (a config names its model:
    an endpoint's model does not replace it)."""
    chosen = config is not None
    resolved = endpoint_of(endpoint, provider, settings)
    if resolved is not None:
        from .providers.anthropic import endpoint_provider

        provider = endpoint_provider(resolved, timeout_s=settings.get("request_timeout_s") or 600.0)
    endpoint = getattr(provider, "endpoint", None)
    policy = admin_policy()
    config = session_config(policy, config, settings)  # the admin's defaults and limits hold
    config = _with_profile_secrets(config)
    if endpoint is not None:
        config = endpoint_settings(config, endpoint, model_chosen="model" in settings or chosen)
        if policy is not None:
            policy.check_config(config)
    return Settings(config, provider, endpoint, guarded_hooks(policy, hooks))


def _with_profile_secrets(config: SessionConfig) -> SessionConfig:
    """``config`` whose ``secret_env`` names the variables your endpoint profiles read keys from,
    whichever endpoint this session uses (:func:`~nbagent.providers.endpoints.profile_secret_env`)."""
    from .providers.endpoints import profile_secret_env

    names = tuple(dict.fromkeys((*config.secret_env, *profile_secret_env())))
    return config if names == config.secret_env else config.replace(secret_env=names)


@dataclass(frozen=True)
class ToolWiring:
    """The tools an Agent's engine gets, where more come from, and the secrets to keep from the model."""

    tools: Sequence[ToolLike]
    sources: Sequence[ToolSource]
    mcp: "McpManager | None"
    """The MCP servers' manager (None: no server configured)."""
    project: "ProjectMcpJson | None"
    """The folder's ``.mcp.json`` as checked once (None: not read)."""
    secrets: SecretValues
    """The Agent's secrets and the MCP servers' credentials (a server echoing its token in a tool
    result must not hand it to the model)."""


def tool_wiring(config: SessionConfig, tools: Sequence[ToolLike] | None, tool_sources: Sequence[ToolSource],
                mcp_servers: Mapping[str, Any] | None, *, start_mcp: bool, read_mcp_json: bool,
                secrets: SecretValues) -> ToolWiring:
    """The built-in tools unless ``tools`` are given, and the MCP servers (``mcp_servers``, and the
    folder's ``.mcp.json`` when ``read_mcp_json``): connecting starts now, in the background, or
    with the first request when not ``start_mcp``."""
    if tools is None:
        from .tools import builtin_tools

        tools = list(builtin_tools(shell=config.shell))
    from .tools.mcp import build_mcp_manager, project_mcp_json  # no mcp SDK import unless servers are configured

    project = project_mcp_json(config.cwd) if read_mcp_json else None  # checked once: servers and notice
    mcp = build_mcp_manager(dict(mcp_servers or {}), config.cwd, start=start_mcp, read_mcp_json=read_mcp_json,
                            project=project, wait_timeout=config.tool_wait_s, call_timeout=config.mcp_call_timeout_s,
                            secrets=secret_values(config.secret_env, secrets))
    sources = [*tool_sources, *([mcp] if mcp is not None else [])]
    secrets = SecretValues((*secrets, *(mcp.credentials if mcp is not None else ())))
    return ToolWiring(tools, sources, mcp, project, secrets)


__all__ = ["Settings", "ToolWiring", "settings_in_force", "tool_wiring"]
