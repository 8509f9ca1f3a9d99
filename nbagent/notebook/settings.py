"""``%config AgentMagics.X = …`` and the running session: what reaches it, and what waits.

The ``AgentMagics`` traits are the notebook's settings. A change reaches the running session at
its next prompt when the session can take it (the model, the limits, the allow list, …): before,
``%config AgentMagics.model`` after the first prompt changed nothing, silently, and ``%agent
config`` showed two models. What is fixed when a session starts (its provider, its task folder,
its tools) says so, in one line, when it changes, and ``%agent config`` marks it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, TypeVar

from ..engine.contracts.errors import NbAgentError

T = TypeVar("T")

if TYPE_CHECKING:
    from ..engine.api_facts.models import ModelInfo
    from ..engine.contracts.config import SessionConfig
    from ..providers.endpoints import Endpoint
    from .session import NotebookSession

#: Trait → the ``SessionConfig`` setting it becomes (the session takes these between prompts).
LIVE: dict[str, str] = {
    "model": "model", "max_requests": "max_requests", "max_budget": "max_budget_usd",
    "max_session_budget": "max_session_budget_usd", "context_window": "context_window", "effort": "effort",
    "permission_mode": "permission_mode", "allow": "allow", "web_search": "server_tools", "context": "context",
    "notes": "notes", "token_budget": "token_budget", "session_token_budget": "session_token_budget",
    "kernel_context_tokens": "kernel_context_tokens", "prices": "prices",
}
#: Traits fixed when a session starts: the provider object, its simulated pacing, the tool set and
#: the task folder are made once per Agent (``%agent reset`` starts a session that uses them).
NEW_SESSIONS_ONLY: frozenset[str] = frozenset(
    {"provider", "task_root", "record", "shell_tool", "mcp_json", "tokens_per_second", "first_token_latency",
     "endpoint", "endpoints"})
#: Traits the magics read at every prompt themselves (no session setting behind them).
PER_PROMPT: frozenset[str] = frozenset({"insert_code", "cells", "replay_if_changed"})

SHOWN = ("model", "provider", "endpoint", "max_requests", "max_budget", "max_session_budget", "token_budget",
         "session_token_budget", "context_window", "context", "kernel_context_tokens", "notes", "effort",
         "web_search", "allow", "insert_code", "cells", "record", "replay_if_changed", "task_root", "shell_tool",
         "mcp_json", "tokens_per_second", "first_token_latency", "permission_mode")
"""The traits ``%agent config`` lists, in this order."""


class SettingsHost(Protocol):
    """What is read here of :class:`~nbagent.notebook.magics.AgentMagics` (a protocol: the magics
    module imports this one)."""

    @property
    def current(self) -> "NotebookSession | None": ...

    @property
    def endpoint(self) -> str | None: ...

    @property
    def endpoints(self) -> Mapping[str, object]: ...


def checked_notes(value: object) -> int:
    """The ``notes`` trait's value, or a ``TraitError`` naming the range (the session's own check)."""
    from ..engine.contracts.config import check_notes_bound

    return _as_trait_error(check_notes_bound, value)


def checked_model(value: object) -> str:
    """The ``model`` trait's value, or a ``TraitError`` where it is no model id (the session's own check):
    ``%config AgentMagics.model = ""`` fails at once, not as the API's 400 at the next prompt."""
    from ..engine.contracts.config import check_model_id
    from ..engine.credentials.key_shapes import redact_shapes

    if isinstance(value, str) and redact_shapes(value) != value:  # an AWS key id, a token of another shape
        from traitlets import TraitError

        raise TraitError("AgentMagics.model holds an API key or token, not a model id (it is not shown); set an id "
                         "such as 'claude-sonnet-5-5' and keep the key in its environment variable (see docs/models.md)")
    return _as_trait_error(check_model_id, value)


def checked_prices(value: object) -> object:
    """The ``prices`` trait's value, or a ``TraitError`` where ``Agent(prices=…)`` would refuse it
    (a row without ``output``, a price that is no number): checked as the session checks it."""
    from ..engine.api_facts.models import load_models

    rows = _as_trait_error(load_models, value)  # type: ignore[arg-type]  # the Dict trait let only a dict in
    unpriced = [model for model, row in rows.items() if not _priced(row)]
    lowered = [model for model, row in rows.items() if _below_built_in(model, row)]
    if unpriced or lowered:  # a received notebook's cell made a paid model's spend read $0, under an admin's budget too
        from traitlets import TraitError

        if unpriced:  # a ModelInfo given as a row: the plain rows' check (numbers of 0 or more) did not see it
            raise TraitError(f"AgentMagics.prices: {unpriced[0]!r}: prices are numbers of 0 or more, not NaN, "
                             "infinite or negative (see docs/models.md, 'Your own rows')")
        raise TraitError(f"AgentMagics.prices: {lowered[0]!r} is a Claude model, and a notebook's row may not price "
                         "it below nbagent's built-in prices (of the model, or of its family's cheapest): spend would "
                         "read less than it is, and budgets would count it so; Agent(prices=…) in Python can "
                         "(see docs/models.md, 'Your own rows')")
    return value


def _below_built_in(model: str, row: "ModelInfo") -> bool:
    """Whether ``row`` prices a model the built-in table knows below its built-in prices."""
    from ..engine.api_facts.models import get_model

    known = get_model(model)
    if known is None:
        return _below_its_family(model, row)
    ours = (*dataclasses.astuple(row.prices), row.web_search_usd_per_1k)
    theirs = (*dataclasses.astuple(known.prices), known.web_search_usd_per_1k)
    return any(not mine >= built_in for mine, built_in in zip(ours, theirs, strict=True))  # NaN too


def _below_its_family(model: str, row: "ModelInfo") -> bool:
    """Whether ``row`` prices an unknown Claude model (``claude-sonnet-9-9``, a newer one, whose budget
    counts at its family's highest prices without a row) below its family's cheapest built-in input or
    output price: ``{"input": 0, "output": 0}`` made a paid model's spend read $0 and defeated every budget."""
    from ..engine.api_facts.models import MODELS, family_of

    family = [m.prices for m in MODELS if family_of(model) and m.family == family_of(model)]
    return bool(family) and (row.prices.input < min(p.input for p in family)
                             or row.prices.output < min(p.output for p in family))


def _priced(row: "ModelInfo") -> bool:
    """Whether ``row``'s prices are numbers of 0 or more: a ``ModelInfo`` given as a row skips the plain rows' check."""
    import math

    return all(math.isfinite(price) and price >= 0 for price in (*dataclasses.astuple(row.prices),
                                                                  row.web_search_usd_per_1k))


CHECKS: dict[str, Callable[[object], object]] = {"notes": checked_notes, "model": checked_model,
                                                  "prices": checked_prices}
"""The trait checks of :meth:`~nbagent.notebook.magics.AgentMagics._valid_setting`, by trait."""


def _as_trait_error(check: Callable[[object], T], value: object) -> T:
    from traitlets import TraitError

    try:
        return check(value)
    except ValueError as exc:
        raise TraitError(str(exc)) from None


def checked_endpoints(value: Mapping[str, object] | None) -> Mapping[str, object] | None:
    """The ``endpoints`` trait's value, or a ``TraitError``: a literal key or token in a trait is
    printed by ``%config AgentMagics`` (and saved with that cell's output), so a profile set here
    names the variable that holds it (``auth_token_env`` / ``api_key_env``) instead."""
    from traitlets import TraitError

    from ..providers.endpoint_trust import CREDENTIAL_HEADER
    from ..providers.endpoints import is_env_name

    for name, row in (value or {}).items():
        if not isinstance(row, dict):  # {'prod': 'sk-ant-…'} was kept, and %config AgentMagics printed it
            raise TraitError(f"AgentMagics.endpoints[{name!r}]: a profile is a dict of its settings "
                             f"({{\"base_url\": …, \"api_key_env\": \"MY_VARIABLE\"}}), not a {type(row).__name__} "
                             f"(see docs/endpoints.md)")
        named = [key for key in ("auth_token_env", "api_key_env") if row.get(key) and not is_env_name(row[key])]
        if named:  # a key pasted where its variable's name goes was kept, listed, and echoed as "not set"
            raise TraitError(f"AgentMagics.endpoints[{name!r}]: {named[0]} names an environment variable (letters, "
                             f"digits, _, - and ., e.g. \"MY_VARIABLE\"), and this value is not one or is shaped as a "
                             f"key (the key itself? it is not shown): put the key in a variable and name that "
                             f"(see docs/endpoints.md)")
        literal = [key for key in ("auth_token", "api_key") if isinstance(row, dict) and row.get(key)]
        if literal:
            key = literal[0]
            raise TraitError(f"AgentMagics.endpoints[{name!r}]: a literal {key} would be shown by %config and "
                             f"saved in the notebook; put it in an environment variable and name it: "
                             f"{{\"{key}_env\": \"MY_VARIABLE\"}} (or write the profile in "
                             f"~/.nbagent/endpoints.json, see docs/endpoints.md)")
        headers = row.get("headers") if isinstance(row, dict) else None
        secret = [h for h in (headers if isinstance(headers, dict) else {}) if CREDENTIAL_HEADER.search(str(h))]
        if secret:
            raise TraitError(f"AgentMagics.endpoints[{name!r}]: the header {secret[0]!r} carries a credential, "
                             f"which %config would show and the notebook would save; write the profile with its "
                             f"headers in ~/.nbagent/endpoints.json (see docs/endpoints.md)")
    return value



def session_value(name: str, value: object, config: "SessionConfig") -> object:
    """What the trait ``name`` set to ``value`` becomes in a session whose settings are ``config``."""
    if name == "allow" and isinstance(value, (list, tuple)):  # the trait is a list of tool names
        return tuple(dict.fromkeys((*config.allow, *value)))
    if name == "prices":  # no rows: the session's own table only
        return value or None
    if name == "web_search":
        others = tuple(t for t in config.server_tools if t != "web_search")
        return (*others, "web_search") if value else others
    return value


def _trait_in_session(name: str, config: "SessionConfig") -> object:
    """The session's value of a live trait, in the trait's terms (for comparison and display)."""
    value = getattr(config, LIVE[name])
    if name == "web_search":
        return "web_search" in value
    if name == "allow":
        return list(value)
    if name == "context":
        return str(value)
    return value


def apply_change(magics: SettingsHost, name: str, old: object, new: object) -> str | None:
    """Carry one trait change to the running session; returns the line to show, if any."""
    sess = getattr(magics, "current", None)  # None too while IPython's config loads the traits
    if sess is None or name in PER_PROMPT:
        return None
    if name in NEW_SESSIONS_ONLY:
        return (f"nbagent: AgentMagics.{name} applies to new sessions only; the running session keeps its "
                "setting (%agent reset starts a new one).")
    if name not in LIVE:
        return None
    config = sess.agent.config
    if name == "allow":  # what the trait used to allow goes; what a cell's --allow added stays
        allowed_before = old if isinstance(old, (list, tuple)) else ()
        config = config.replace(allow=tuple(t for t in config.allow if t not in allowed_before))
    try:
        sess.agent.reconfigure(**{LIVE[name]: session_value(name, new, config)})
    except (ValueError, TypeError, NbAgentError) as exc:
        return f"nbagent: AgentMagics.{name} was not applied to the running session: {exc}"
    return None


def _session_note(name: str, trait: object, sess: "NotebookSession") -> str:
    """What ``%agent config`` adds after a trait when a session runs ('' when nothing to add)."""
    if name in NEW_SESSIONS_ONLY:
        provider = f"; this session: {sess.agent.provider.name}" if name in ("provider", "endpoint") else ""
        return f"   (new sessions only{provider})"
    if name not in LIVE:
        return ""
    mine = _trait_in_session(name, sess.agent.config)
    if mine == trait:
        return ""
    if name == "allow" and isinstance(trait, list) and isinstance(mine, list) and set(trait) <= set(mine):
        return f"   (this session also allows: {', '.join(t for t in mine if t not in trait)})"
    return f"   (this session: {mine!r}, set in a cell or by a command)"


def endpoint_for(magics: SettingsHost, name: str | None, provider: str) -> "Endpoint | None":
    """The endpoint of a new session: a cell's ``--endpoint``, else the ``endpoint`` trait unless
    the cell asked for ``--simulated`` / ``--anthropic``; profiles as in docs/endpoints.md."""
    name = name or (magics.endpoint if provider == "auto" else None)
    if name is None:
        return None
    if provider != "auto":
        from IPython.core.error import UsageError

        raise UsageError("--endpoint picks where requests go: leave out --simulated / --anthropic with it")
    from ..providers.endpoints import resolve_endpoint

    return resolve_endpoint(name, Path.cwd(), magics.endpoints)


def config_lines(magics: SettingsHost) -> list[str]:
    """``%agent config``: each trait once, with the running session's value only where it differs
    (a cell option such as ``--model`` changed it), and which settings wait for a new session."""
    sess = magics.current
    lines = []
    for name in SHOWN:
        trait = getattr(magics, name)
        lines.append(f"AgentMagics.{name} = {trait!r}" + (_session_note(name, trait, sess) if sess else ""))
    # Profiles may hold literal secrets: their names only, never their rows.
    lines.append(f"AgentMagics.endpoints: {', '.join(sorted(magics.endpoints)) or '(none)'} (names only)")
    if sess is not None:
        covered = set(LIVE.values())
        rest = ", ".join(f"{f.name}={getattr(sess.agent.config, f.name)!r}"
                         for f in dataclasses.fields(sess.agent.config) if f.name not in covered)
        lines.append(f"session: {rest}")
    return lines


__all__ = ["LIVE", "NEW_SESSIONS_ONLY", "PER_PROMPT", "apply_change", "checked_notes", "config_lines", "endpoint_for",
           "session_value"]
