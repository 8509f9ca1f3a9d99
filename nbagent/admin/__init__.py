"""Admin-locked settings: a system-wide file whose values are every session's defaults and limits.

On a shared JupyterHub the operator writes ``/etc/nbagent/admin.json`` (or the file named by
``$NBAGENT_ADMIN_CONFIG``); see :mod:`.policy` for its fields and docs/classroom.md for a deployment.
A notebook (``%config``, ``%%agent`` options) or ``Agent(...)`` keywords that would raise one of them
fail with :class:`AdminLockedError`, naming the admin setting and the file.
"""

from __future__ import annotations

from .ledger import DailyLedger
from .policy import ADMIN_CONFIG_ENV, DEFAULT_ADMIN_CONFIG, AdminLockedError, AdminPolicy, AdminPolicyError, admin_policy

__all__ = ["ADMIN_CONFIG_ENV", "DEFAULT_ADMIN_CONFIG", "AdminLockedError", "AdminPolicy", "AdminPolicyError",
           "DailyLedger", "admin_policy"]
