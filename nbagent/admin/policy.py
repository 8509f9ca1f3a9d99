"""The admin policy file and the checks every session's settings pass.

``admin.json`` (all keys optional; unknown keys are refused, so a typo cannot silently unlock)::

    {
      "permission_mode": "default",          // the default and the most permissive mode allowed
      "allowed_tools": ["python", "read_file", "list_files"],  // the only tools that may run
      "max_budget_usd": 0.50,                // per prompt: the default and the cap
      "max_daily_budget_usd": 5.00,          // per user and calendar day, across sessions
      "ledger_dir": "~/.local/state/nbagent" // where the day's spend is kept (default shown)
    }

Permission modes are ordered ``plan`` < ``default`` < ``accept_edits`` < ``bypass``: a session may
choose a stricter mode than the admin's, never a looser one. ``allowed_tools`` is a list of tool
names (MCP tools by their full ``mcp__server__tool`` name): a call to any other tool is denied
before it runs, and ``allow`` (run without asking) may only name listed tools.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, TypedDict

from ..engine.contracts.config import PERMISSION_MODES, PermissionMode, RunLimits, SessionConfig
from ..engine.contracts.errors import NbAgentError

ADMIN_CONFIG_ENV = "NBAGENT_ADMIN_CONFIG"
DEFAULT_ADMIN_CONFIG = Path("/etc/nbagent/admin.json")
DEFAULT_LEDGER_DIR = "~/.local/state/nbagent"
_MODE_RANK = {"plan": 0, "default": 1, "accept_edits": 2, "bypass": 3}
assert set(_MODE_RANK) == set(PERMISSION_MODES)


class AdminPolicyError(NbAgentError):
    """The admin file cannot be used (unreadable, not JSON, an unknown key or a bad value)."""


class AdminLockedError(NbAgentError, ValueError):
    """A setting would exceed what the admin allows; the message names the admin setting."""

    def __init__(self, setting: str, asked: object, admin_key: str, admin_value: object, source: str) -> None:
        self.setting, self.admin_key = setting, admin_key
        super().__init__(f"{setting}={asked!r} is not allowed here: the administrator locked {admin_key} to "
                         f"{admin_value!r} in {source}; ask them to change it, or choose a value within it.")


class AdminDefaults(TypedDict, total=False):
    """The settings the admin file gives a new session (:meth:`AdminPolicy.defaults`)."""

    permission_mode: PermissionMode
    max_budget_usd: float


@dataclass(frozen=True)
class AdminPolicy:
    """The admin's settings (None: not locked) and the file they came from."""

    permission_mode: PermissionMode | None = None
    allowed_tools: tuple[str, ...] | None = None
    max_budget_usd: float | None = None
    max_daily_budget_usd: float | None = None
    ledger_dir: str = DEFAULT_LEDGER_DIR
    source: str = "the admin config"

    def __post_init__(self) -> None:
        if self.permission_mode is not None and self.permission_mode not in _MODE_RANK:
            raise AdminPolicyError(f"{self.source}: permission_mode must be one of {', '.join(_MODE_RANK)}, "
                                   f"got {self.permission_mode!r}")
        for name in ("max_budget_usd", "max_daily_budget_usd"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0):
                raise AdminPolicyError(f"{self.source}: {name} must be a number >= 0 (USD), got {value!r}")
        if self.allowed_tools is not None and not all(isinstance(t, str) for t in self.allowed_tools):
            raise AdminPolicyError(f"{self.source}: allowed_tools must be a list of tool names")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str) -> "AdminPolicy":
        known = {f.name for f in fields(cls)} - {"source"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise AdminPolicyError(f"{source}: unknown key(s) {', '.join(unknown)}; keys are: {', '.join(sorted(known))}")
        values = dict(data)
        if values.get("allowed_tools") is not None:
            if not isinstance(values["allowed_tools"], list):
                raise AdminPolicyError(f"{source}: allowed_tools must be a list of tool names")
            values["allowed_tools"] = tuple(values["allowed_tools"])
        return cls(**values, source=source)

    @property
    def locks_anything(self) -> bool:
        return any(getattr(self, f.name) is not None for f in fields(self) if f.name not in ("ledger_dir", "source"))

    # -- defaults and checks ------------------------------------------------------------------

    def defaults(self) -> AdminDefaults:
        """The settings a new session starts from (the admin's values where they are set)."""
        out: AdminDefaults = {}
        if self.permission_mode is not None:
            out["permission_mode"] = self.permission_mode
        if self.max_budget_usd is not None:
            out["max_budget_usd"] = self.max_budget_usd
        return out

    def check_config(self, config: SessionConfig) -> None:
        """Raise :class:`AdminLockedError` when ``config`` exceeds the policy."""
        self.check_setting("permission_mode", config.permission_mode)
        self.check_setting("allow", config.allow)
        self.check_setting("max_budget_usd", config.max_budget_usd)
        self.check_setting("server_tools", config.server_tools)

    def check_limits(self, limits: RunLimits | None) -> None:
        """A prompt's own limits (``--max-budget``, ``RunLimits``) within the policy."""
        if limits is not None and limits.max_budget_usd is not None:
            self.check_setting("max_budget_usd", limits.max_budget_usd)

    def check_setting(self, name: str, value: Any) -> None:
        """One setting by its ``SessionConfig`` name (``allow``, ``permission_mode``, ``max_budget_usd``)."""
        if name == "permission_mode" and self.permission_mode is not None and \
                _MODE_RANK.get(str(value), 99) > _MODE_RANK[self.permission_mode]:
            raise AdminLockedError(name, value, "permission_mode", self.permission_mode, self.source)
        if name == "allow" and self.allowed_tools is not None:
            outside = [t for t in value if t not in self.allowed_tools]
            if outside:
                raise AdminLockedError(name, list(value), "allowed_tools", list(self.allowed_tools), self.source)
        if name == "server_tools" and self.allowed_tools is not None:
            # Anthropic's server tools (web_search) run at Anthropic, where no permission check can
            # stop a call: one outside allowed_tools is never offered.
            names = [t.get("name") if isinstance(t, Mapping) else t for t in value]
            if any(n not in self.allowed_tools for n in names):
                raise AdminLockedError(name, names, "allowed_tools", list(self.allowed_tools), self.source)
        if name == "max_budget_usd" and self.max_budget_usd is not None and (value is None or value > self.max_budget_usd):
            raise AdminLockedError(name, value, "max_budget_usd", self.max_budget_usd, self.source)

    def tool_allowed(self, name: str) -> bool:
        return self.allowed_tools is None or name in self.allowed_tools


def _at_process_start(name: str) -> str | None:
    """``name`` in the environment the process started with (Linux keeps it in /proc, where a later
    ``os.environ`` change does not reach); elsewhere, as it is when nbagent is first imported."""
    try:
        raw = Path("/proc/self/environ").read_bytes()
    except OSError:
        return os.environ.get(name)
    prefix = name.encode() + b"="
    found = [item[len(prefix):] for item in raw.split(b"\0") if item.startswith(prefix)]
    return os.fsdecode(found[0]) if found else None


ADMIN_CONFIG_AT_START: str | None = _at_process_start(ADMIN_CONFIG_ENV)
"""``$NBAGENT_ADMIN_CONFIG`` as the process started: a cell that sets ``os.environ[...]`` later
(``"mine.json"``) must not choose which file locks it (issue 33)."""


def admin_config_path() -> Path:
    """``$NBAGENT_ADMIN_CONFIG`` as set when the kernel started, else ``/etc/nbagent/admin.json``."""
    return Path(ADMIN_CONFIG_AT_START or DEFAULT_ADMIN_CONFIG).expanduser()


def admin_policy() -> AdminPolicy | None:
    """The policy of the admin file, or None when there is none (read once per path and mtime)."""
    path = admin_config_path()
    try:
        stat = path.stat()
    except FileNotFoundError:
        if ADMIN_CONFIG_AT_START:  # named explicitly: a missing file is a mistake, not "no policy"
            raise AdminPolicyError(f"{path} (from ${ADMIN_CONFIG_ENV}) does not exist") from None
        return None
    return _load(str(path), stat.st_mtime_ns)


@lru_cache(maxsize=4)
def _load(path: str, _mtime: int) -> AdminPolicy | None:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AdminPolicyError(f"{path} cannot be read as JSON ({exc}); nbagent will not start without it") from exc
    if not isinstance(data, dict):
        raise AdminPolicyError(f"{path} must hold a JSON object")
    policy = AdminPolicy.from_mapping(data, source=path)
    return policy if policy.locks_anything else None
