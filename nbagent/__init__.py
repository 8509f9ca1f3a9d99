"""nbagent: an LLM coding/data agent loop inside Jupyter.

``%load_ext nbagent`` registers the ``%%agent`` / ``%agent`` magics; ``nbagent.Agent`` drives the
same loop from a plain script. Importing nbagent imports neither IPython nor ipywidgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# The public names by the module that defines them. Imported on first use (see __getattr__), so
# that importing nbagent.engine does not pull in the providers and the SDK.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "nbagent.agent": ("Agent",),
    "nbagent.engine.contracts.config": ("SessionConfig", "RunLimits"),
    "nbagent.engine.state.session": ("Session",),
    "nbagent.engine.contracts.permissions": ("Asker", "Allow", "Deny"),
    "nbagent.engine.contracts.tool_api": ("Tool", "ToolOutput", "ToolContext", "ToolSource"),
    "nbagent.engine.contracts.provider": ("Provider", "ModelRequest", "MessageComplete", "Chunk"),
    "nbagent.engine.contracts.events": (
        "Event", "TextDelta", "ThinkingDelta", "ToolUseDelta", "ToolUse", "PermissionAsked", "PermissionDenied",
        "ToolResult", "ApiRequestStarted", "RetryScheduled", "RateLimitWait", "StreamInterrupted", "ApiRequestFailed",
        "ContextTruncated", "ServerToolResult", "ModelFallback", "Notice", "RequestCompleted", "Done",
        "RequestRecord", "Totals",
    ),
    "nbagent.engine.api_facts.cost": ("Usage",),
    "nbagent.engine.contracts.hooks": (
        "HookMap", "ToolCall", "RewriteInput", "PreToolDecision", "PreToolUseHook", "PostToolUseHook",
        "PreRequestHook", "PreCompactHook", "OnDoneHook",
    ),
    "nbagent.engine.loop.structured": ("StructuredOutputError",),
    "nbagent.result": ("RunResult",),
    # the errors the docs tell a user to catch, importable from where the user imports the Agent
    "nbagent.engine.contracts.errors": ("NbAgentError",),
    "nbagent.engine.loop.turn": ("RunInProgressError", "SessionClosedError"),
    "nbagent.engine.disk.task_lock": ("TaskFolderLockedError",),
    "nbagent.engine.api_facts.request_params": ("SettingNotSupported",),
    "nbagent.engine.contracts.context_policy": ("ContextPolicyError",),
    "nbagent.providers.endpoint_trust": ("EndpointError",),
    "nbagent.admin.policy": ("AdminLockedError",),
    "nbagent.admin.enforce": ("DailyBudgetSpentError",),
}
_LAZY = {name: module for module, names in _EXPORTS.items() for name in names}

if TYPE_CHECKING:  # the same names for type checkers, which cannot see through __getattr__ (``X as X``:
    # an explicit re-export, in the spelling strict checkers of a py.typed package expect)
    from .admin.enforce import DailyBudgetSpentError as DailyBudgetSpentError
    from .admin.policy import AdminLockedError as AdminLockedError
    from .agent import Agent as Agent
    from .engine.api_facts.cost import Usage as Usage
    from .engine.api_facts.request_params import SettingNotSupported as SettingNotSupported
    from .engine.contracts.config import RunLimits as RunLimits
    from .engine.contracts.config import SessionConfig as SessionConfig
    from .engine.contracts.context_policy import ContextPolicyError as ContextPolicyError
    from .engine.contracts.errors import NbAgentError as NbAgentError
    from .engine.contracts.events import ApiRequestFailed as ApiRequestFailed
    from .engine.contracts.events import ApiRequestStarted as ApiRequestStarted
    from .engine.contracts.events import ContextTruncated as ContextTruncated
    from .engine.contracts.events import Done as Done
    from .engine.contracts.events import Event as Event
    from .engine.contracts.events import ModelFallback as ModelFallback
    from .engine.contracts.events import Notice as Notice
    from .engine.contracts.events import PermissionAsked as PermissionAsked
    from .engine.contracts.events import PermissionDenied as PermissionDenied
    from .engine.contracts.events import RateLimitWait as RateLimitWait
    from .engine.contracts.events import RequestCompleted as RequestCompleted
    from .engine.contracts.events import RequestRecord as RequestRecord
    from .engine.contracts.events import RetryScheduled as RetryScheduled
    from .engine.contracts.events import ServerToolResult as ServerToolResult
    from .engine.contracts.events import StreamInterrupted as StreamInterrupted
    from .engine.contracts.events import TextDelta as TextDelta
    from .engine.contracts.events import ThinkingDelta as ThinkingDelta
    from .engine.contracts.events import ToolResult as ToolResult
    from .engine.contracts.events import ToolUse as ToolUse
    from .engine.contracts.events import ToolUseDelta as ToolUseDelta
    from .engine.contracts.events import Totals as Totals
    from .engine.contracts.hooks import HookMap as HookMap
    from .engine.contracts.hooks import OnDoneHook as OnDoneHook
    from .engine.contracts.hooks import PostToolUseHook as PostToolUseHook
    from .engine.contracts.hooks import PreCompactHook as PreCompactHook
    from .engine.contracts.hooks import PreRequestHook as PreRequestHook
    from .engine.contracts.hooks import PreToolDecision as PreToolDecision
    from .engine.contracts.hooks import PreToolUseHook as PreToolUseHook
    from .engine.contracts.hooks import RewriteInput as RewriteInput
    from .engine.contracts.hooks import ToolCall as ToolCall
    from .engine.contracts.permissions import Allow as Allow
    from .engine.contracts.permissions import Asker as Asker
    from .engine.contracts.permissions import Deny as Deny
    from .engine.contracts.provider import Chunk as Chunk
    from .engine.contracts.provider import MessageComplete as MessageComplete
    from .engine.contracts.provider import ModelRequest as ModelRequest
    from .engine.contracts.provider import Provider as Provider
    from .engine.contracts.tool_api import Tool as Tool
    from .engine.contracts.tool_api import ToolContext as ToolContext
    from .engine.contracts.tool_api import ToolOutput as ToolOutput
    from .engine.contracts.tool_api import ToolSource as ToolSource
    from .engine.disk.task_lock import TaskFolderLockedError as TaskFolderLockedError
    from .engine.loop.structured import StructuredOutputError as StructuredOutputError
    from .engine.loop.turn import RunInProgressError as RunInProgressError
    from .engine.loop.turn import SessionClosedError as SessionClosedError
    from .engine.state.session import Session as Session
    from .notebook.session import NotebookSession
    from .providers.endpoint_trust import EndpointError as EndpointError
    from .result import RunResult as RunResult


if not TYPE_CHECKING:  # hidden from type checkers: a module ``__getattr__`` makes every name resolve
    # for them, as ``Any`` (``from nbagent import Agnet`` passed ``mypy --strict``); they see the
    # names imported above instead.
    def __getattr__(name: str) -> Any:
        if name in _LAZY:
            import importlib

            return getattr(importlib.import_module(_LAZY[name]), name)
        raise AttributeError(f"module 'nbagent' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext nbagent``: the magics, the ``%%agent`` cell transformer, traitlets config."""
    from .notebook.extension import load
    from .notebook.fast_path import install_on_running_kernel

    load(ipython)
    install_on_running_kernel()  # Allow, Deny and Stop act while the agent's code blocks the kernel


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext nbagent``: removes what :func:`load_ipython_extension` registered."""
    from .notebook.extension import unload

    unload(ipython)


def session() -> "NotebookSession":
    """The notebook's active agent session (``turns_df()``, ``cost``, ``rollback(turn)``, …).
    Typed as what it returns, so a type checker knows its methods (it was ``Any``: a misspelt
    ``described_variable()`` or a wrong argument went unnoticed)."""
    from .notebook.magics import active_magics

    return active_magics().session()


def explore(**kwargs: Any) -> Any:
    """The truncation explorer widget (see ``%agent explore``)."""
    from .explorer import explore as _explore

    return _explore(**kwargs)


def explore_policies(session: Any = None, **kwargs: Any) -> Any:
    """Context policies compared on one session: dollars, cache hits, what each kept and which
    planted facts each still shows (see :class:`nbagent.explorer.PolicyExplorer`)."""
    from .explorer import explore_policies as _explore_policies

    return _explore_policies(session, **kwargs)


__all__ = [*_LAZY, "load_ipython_extension", "unload_ipython_extension", "session", "explore", "explore_policies",
           "__version__"]
