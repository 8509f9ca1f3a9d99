"""Where the admin policy meets an :class:`~nbagent.agent.Agent`: its starting settings, its
``reconfigure``, each prompt's limits and the day's spend, and a guard on tool calls."""

from __future__ import annotations

import dataclasses
from typing import Awaitable, Mapping, cast

from ..engine.contracts.config import RunLimits, SessionConfig
from ..engine.contracts.errors import NbAgentError
from ..engine.contracts.hooks import HOOK_NAMES, HookMap, Hooks, PreToolDecision, ToolCall
from ..engine.contracts.permissions import Deny
from .ledger import DailyLedger
from .policy import AdminPolicy


class DailyBudgetSpentError(NbAgentError):
    """Today's admin budget is spent: no prompt is sent until tomorrow."""


def session_config(policy: AdminPolicy | None, config: SessionConfig | None, settings: Mapping[str, object]) -> SessionConfig:
    """The session's settings: the admin's values as defaults (when no ``config`` is given), then
    ``settings``; raises :class:`~.policy.AdminLockedError` when they exceed the policy."""
    if config is None:
        config = SessionConfig(**policy.defaults()) if policy is not None else SessionConfig()
    config = config.replace(**settings) if settings else config
    if policy is not None:
        policy.check_config(config)
    return config


def guarded_hooks(policy: AdminPolicy | None, hooks: HookMap | Hooks | None) -> HookMap | Hooks | None:
    """``hooks`` with a ``pre_tool_use`` guard in front that denies tools outside ``allowed_tools``."""
    if policy is None or policy.allowed_tools is None:
        return hooks
    by_name = dict(Hooks.from_mapping(hooks).by_name)
    theirs = by_name.get("pre_tool_use")
    allowed = ", ".join(policy.allowed_tools) or "none"

    def admin_guard(call: ToolCall) -> PreToolDecision | Awaitable[PreToolDecision]:
        if not policy.tool_allowed(call.name):
            return Deny(f"the administrator allows only these tools here: {allowed} (allowed_tools in {policy.source})")
        if theirs is None:
            return None
        # by_name["pre_tool_use"] has PreToolUse's signature (Hooks.from_mapping checked the name).
        return cast("PreToolDecision | Awaitable[PreToolDecision]", theirs(call))

    by_name["pre_tool_use"] = admin_guard
    return Hooks.from_mapping({name: by_name[name] for name in HOOK_NAMES if name in by_name})


def _usd(amount: float) -> str:
    """``$5.00`` for whole cents, else to four decimals: a day's budget of $0.005 read "$0.01 … is
    spent ($0.0050)", a budget larger than what it said was spent."""
    return f"${amount:.2f}" if round(amount, 2) == amount else f"${amount:.4f}"


class DayCount:
    """Adds to the day's ledger what a session was billed, as each request is billed (``update``
    after each): added once at the prompt's end, a kernel restarted or killed in the middle of a
    long prompt had counted none of it, and the next kernel's prompt got the whole day's budget again."""

    def __init__(self, ledger: DailyLedger | None, billed: float) -> None:
        self.ledger, self.counted = ledger, billed

    def update(self, billed: float, *, final: bool = False) -> None:
        """``billed``: what the session has been billed so far (``Spent.budget_usd``). Mid-prompt a
        ledger that cannot be written is left for the ``final`` update to add (and raise): raised
        between two requests, it cut the turn off and left the agent refusing every later prompt
        ("a run is already in progress")."""
        if self.ledger is None or not billed > self.counted:
            return
        try:
            self.ledger.add(billed - self.counted)
        except OSError:
            if final:
                raise
            return
        self.counted = billed


def prompt_limits(policy: AdminPolicy | None, limits: RunLimits | None,
                  config: SessionConfig) -> tuple[RunLimits | None, DailyLedger | None]:
    """A prompt's limits within the policy, and the ledger to add its spend to (None: no day cap).

    The day's cap becomes this prompt's budget when less of it is left than the prompt's own."""
    if policy is None:
        return limits, None
    policy.check_limits(limits)
    if policy.max_daily_budget_usd is None:
        return limits, None
    ledger = DailyLedger(policy.ledger_dir)
    left = policy.max_daily_budget_usd - ledger.spent()
    if left <= 0:
        raise DailyBudgetSpentError(
            f"today's budget of {_usd(policy.max_daily_budget_usd)} set by the administrator (max_daily_budget_usd "
            f"in {policy.source}) is spent (${ledger.spent():.4f}); it resets tomorrow.")
    limits = limits or RunLimits()
    own = limits.max_budget_usd if limits.max_budget_usd is not None else config.max_budget_usd
    if own is None or own > left:
        limits = dataclasses.replace(limits, max_budget_usd=left)  # the prompt's other limits hold
    return limits, ledger
