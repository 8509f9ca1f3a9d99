"""The ``AgentMagics`` traits under the admin policy (:mod:`nbagent.admin`): they start from the
admin's values, and ``%config`` beyond them fails at once with the admin setting's name."""

from __future__ import annotations

from typing import Protocol, TypeVar

from traitlets import TraitError

from ..admin import AdminLockedError, admin_policy

#: Trait → the ``SessionConfig`` setting the policy checks.
CHECKED = {"permission_mode": "permission_mode", "allow": "allow", "max_budget": "max_budget_usd",
           "web_search": "server_tools"}


T = TypeVar("T")


class AdminTraits(Protocol):
    """The traits set here (of :class:`~nbagent.notebook.magics.AgentMagics`, which imports this module)."""

    @property
    def max_budget(self) -> float | None: ...

    def set_trait(self, name: str, value: object) -> None: ...


def checked(trait: str, value: T) -> T:
    """``value`` for ``trait``, or a ``TraitError`` naming the admin setting it would exceed."""
    policy = admin_policy()
    if policy is not None:
        try:
            checked_value = (("web_search",) if value else ()) if trait == "web_search" else value
            policy.check_setting(CHECKED[trait], checked_value)
        except AdminLockedError as exc:
            raise TraitError(str(exc)) from None
    return value


def start_from_admin_values(magics: AdminTraits) -> None:
    """Set the traits the admin file sets (bypass is never a notebook default)."""
    policy = admin_policy()
    if policy is None:
        return
    if policy.permission_mode is not None and policy.permission_mode != "bypass":
        magics.set_trait("permission_mode", policy.permission_mode)  # as setting it: validated, observed
    if policy.max_budget_usd is not None and (magics.max_budget is None or magics.max_budget > policy.max_budget_usd):
        magics.set_trait("max_budget", policy.max_budget_usd)
