"""The simulated API as another endpoint: a server that refuses some request features (as local
servers and gateways do) and serves models Claude's table does not know, with their windows.

``SimulatedAPI(rejects=("cache_control",), models={"llama-local": 32_768})`` answers a request
carrying ``cache_control`` with the 400 such a server sends ("Extra inputs are not permitted"),
accepts ``model: "llama-local"`` with a 32,768-token window, and answers ``GET /v1/models/{id}``
with ``max_input_tokens`` as the LiteLLM proxy does (an unlisted, unknown model is a 404 there).
"""

from __future__ import annotations

import json
from typing import Mapping

from nbagent.engine.api_facts.models import get_model

from ...engine.contracts.json_types import JSONObject
from .validation import ApiError, RequestBody

REJECTABLE = ("cache_control", "cache_ttl", "thinking", "effort", "tool_choice", "server_tools", "context_management")
"""Features a simulated endpoint can be told to refuse."""


def check_rejectable(rejects: tuple[str, ...]) -> tuple[str, ...]:
    unknown = sorted(set(rejects) - set(REJECTABLE))
    if unknown:
        raise ValueError(f"rejects: unknown feature(s) {', '.join(unknown)}; known: {', '.join(REJECTABLE)}")
    return rejects


def _carries(body: RequestBody, feature: str) -> str | None:
    """Where ``body`` carries ``feature`` (the field path a server names), or None."""
    if feature == "cache_control":
        return "system.0.cache_control" if '"cache_control"' in json.dumps(body) else None
    if feature == "cache_ttl":  # a server that takes only the default five-minute cache
        return "system.0.cache_control.ttl" if '"ttl"' in json.dumps(body) else None
    if feature == "thinking":
        return "thinking" if "thinking" in body else None
    if feature == "effort":
        return "output_config" if "output_config" in body else None
    if feature in ("tool_choice", "context_management"):
        return feature if feature in body else None
    for i, tool in enumerate(body.get("tools") or ()):
        match tool:
            case {"type": str(kind)} if kind.startswith(("web_search", "web_fetch")):
                return f"tools.{i}.type: server tool {kind}"
    return None


def refuse_features(body: RequestBody, rejects: tuple[str, ...]) -> None:
    """Raise the 400 a server that does not take one of ``rejects`` answers for ``body``."""
    for feature in rejects:
        where = _carries(body, feature)
        if where is not None:
            raise ApiError(400, "invalid_request_error", f"{where}: Extra inputs are not permitted")


def model_info(model: str, models: Mapping[str, int], window: int | None) -> JSONObject:
    """``GET /v1/models/{id}``: the model's id and ``max_input_tokens``; 404 for an unknown model."""
    if model not in models and get_model(model) is None:
        raise ApiError(404, "not_found_error", f"model: {model}")
    return {"type": "model", "id": model, "display_name": model, "created_at": "2026-01-01T00:00:00Z",
            "max_input_tokens": window}
