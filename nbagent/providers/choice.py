"""Which provider an :class:`~nbagent.agent.Agent` talks to: the auto choice (a key → Anthropic,
none → the simulated API), or an endpoint profile and what it brings to the session's settings.

Nothing here imports the SDK: :mod:`.anthropic` loads when a provider is made.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Mapping

from ..engine.contracts.config import SessionConfig
from ..engine.contracts.errors import MissingApiKeyError, NbAgentError
from ..engine.contracts.provider import Provider

if TYPE_CHECKING:
    from .endpoints import Endpoint

ProviderChoice = Literal["auto", "simulated", "anthropic"]


def make_provider(choice: ProviderChoice = "auto", *, api_key: str | None = None,
                  simulated_options: Mapping[str, Any] | None = None) -> Provider:
    """The provider asked for: a real key → Anthropic; no key (``auto``) → the simulated API."""
    from ..engine.loop.sanitize import hidden  # here: the kernel's start imports this module, not the loop
    from .anthropic import anthropic_provider, api_key_from_env, simulated_provider

    if choice not in ("auto", "simulated", "anthropic"):
        raise ValueError(f"provider must be 'auto', 'simulated', 'anthropic' or a Provider, got {choice!r}")
    key = hidden(api_key or api_key_from_env())  # shown as <secret> in a Verbose traceback
    if choice == "anthropic" and not key:
        raise MissingApiKeyError()
    if choice != "simulated" and key:
        return anthropic_provider(key)
    return simulated_provider(**dict(simulated_options or {}))


class UnknownWindowError(NbAgentError):
    """A model nbagent does not know, on an endpoint that does not report its context window."""

    def __init__(self, model: str, where: str) -> None:
        super().__init__(
            f"nbagent does not know the context window of {model!r}, and the endpoint {where} did not report "
            "it (GET /v1/models/{id} with max_input_tokens). Pass it: %%agent --window N, "
            "Agent(context_window=N), or \"context_window\" in the endpoint's profile.")


def endpoint_of(endpoint: str | Endpoint | None, provider: object, settings: Mapping[str, object]) -> Endpoint | None:
    """The Agent's :class:`~nbagent.providers.endpoints.Endpoint` (a profile name is looked up in
    the ``cwd`` setting's ``.nbagent/endpoints.json`` and the home one), or None."""
    if endpoint is None:
        return None
    if provider != "auto":
        raise ValueError("pass either endpoint= or provider=, not both: an endpoint makes its own provider "
                         "(nbagent.providers.anthropic.endpoint_provider makes one to pass as provider=)")
    from .endpoints import resolve_endpoint

    cwd = settings.get("cwd")
    if isinstance(cwd, os.PathLike) and not isinstance(cwd, Path):
        cwd = Path(cwd)
    return resolve_endpoint(endpoint, cwd if isinstance(cwd, (str, Path)) else None)


def endpoint_settings(config: SessionConfig, endpoint: Endpoint, *, model_chosen: bool) -> SessionConfig:
    """``config`` with what the endpoint brings: its model (unless one was chosen), its model's
    window, and the environment variables its secrets came from (kept from tools)."""
    changes: dict[str, object] = {}
    if endpoint.model and not model_chosen:
        changes["model"] = endpoint.model
    if endpoint.context_window and endpoint.model:
        changes["known_windows"] = {**(config.known_windows or {}), endpoint.model: endpoint.context_window}
    if endpoint.secret_env:
        changes["secret_env"] = tuple(dict.fromkeys((*config.secret_env, *endpoint.secret_env)))
    if endpoint.timeout_s and config.request_timeout_s is None:
        changes["request_timeout_s"] = endpoint.timeout_s
    return config.replace(**changes) if changes else config
