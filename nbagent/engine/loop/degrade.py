"""Degrade, never break: what happens when an endpoint refuses a request feature or its budget.

Local servers and gateways that speak the Messages API do not all take every parameter Claude
does (prompt caching's ``cache_control``, ``thinking``, ``output_config.effort``, ``tool_choice``,
server tools, ``context_management``). The provider names the feature a clear 4xx refused (``ApiError.rejected``); the
engine then switches it off for this endpoint (the Agent's ``without`` set, which lives as long as
the session), says so once, and sends the request again at once. A second refusal of the same
feature is an ordinary error: the retry happens once, never in a loop.

Kept apart from the retry timing (``request.decide_after_failure``) on purpose: these are not
transient failures, and no backoff applies.
"""

from __future__ import annotations

from typing import MutableSet

from ..contracts.errors import ApiError, ErrorKind
from ..contracts.events import Notice

FEATURES: dict[str, str] = {
    "cache_ttl": "the one-hour prompt cache (cache_control ttl)",
    "cache_control": "prompt caching (cache_control)",
    "thinking": "extended thinking",
    "effort": "the effort setting (output_config)",
    "tool_choice": "tool_choice",
    "server_tools": "server tools (web search, web fetch)",
    "context_management": "server-side context management (nbagent's client-side layers stand in)",
}
"""The request features an endpoint may refuse, with what the notice calls them."""


def switch_off(without: MutableSet[str], error: ApiError) -> Notice | None:
    """When ``error`` is an endpoint's first refusal of a feature: add it to ``without`` and return
    the one notice to show (the caller retries at once); None otherwise."""
    feature = error.rejected
    if feature is None or feature not in FEATURES or feature in without:
        return None
    without.add(feature)
    status = f"{error.status} " if error.status else ""
    return Notice(level="warning", message=(
        f"The endpoint refused {FEATURES[feature]} ({status}{error.message}). It is switched off for this "
        "endpoint from now on, and the request is sent again without it."))


def is_budget_stop(error: ApiError) -> bool:
    """Whether the endpoint (a gateway) refused because its budget for this key is spent: the run
    ends as a budget stop, without retrying or asking."""
    return error.kind is ErrorKind.BUDGET_EXCEEDED


def budget_stop_message(message: str) -> str:
    """The one line a budget stop by the endpoint ends the run with."""
    return f"stopped: the endpoint's budget for this key is spent ({message})"
