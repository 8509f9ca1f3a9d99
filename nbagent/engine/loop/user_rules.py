"""The user's own rules on a tool call, before anyone is asked: the session's ``pre_tool_use`` hook
and its ``deny`` list. The tool runner hears them as a call's permission begins; a caller from
outside (an MCP client of ``%agent serve``) asks them here, on its own terms."""

from __future__ import annotations

from ..contracts.abort import Aborted
from ..contracts.hooks import Hooks, RewriteInput, ToolCall
from ..contracts.permissions import Deny, PermissionGate


def hook_denied(name: str, reason: str) -> str:
    """What the caller is told when a ``pre_tool_use`` hook denies its ``name`` call."""
    return f"A pre_tool_use hook denied this {name} call: {reason}"


async def refused_by_user_rules(call: ToolCall, gate: PermissionGate, hooks: Hooks) -> str | None:
    """Why the user's own rules refuse ``call`` before anyone is asked, else None: the session's
    ``pre_tool_use`` hook (as the tool runner hears it) and its ``deny`` list, which hold in every
    mode. For a caller that asks on its own terms (an MCP client of ``%agent serve``): a hook's
    Allow does not skip its asking, and a rewrite is refused (the user is shown what the client
    sent, and the call runs as shown or not at all)."""
    try:
        hook = await hooks.pre_tool_use(call)
    except Aborted:  # Ctrl-C while the user's hook ran
        return f"The pre_tool_use hook was interrupted: this {call.name} call was not run."
    if isinstance(hook, Deny):
        return hook_denied(call.name, hook.reason)
    if isinstance(hook, RewriteInput):
        return (f"A pre_tool_use hook would rewrite this {call.name} call's input; a call from outside runs as "
                "the user is shown it or not at all: not run.")
    denied = gate.denied(call.name)
    return denied.reason if denied is not None else None


__all__ = ["hook_denied", "refused_by_user_rules"]
