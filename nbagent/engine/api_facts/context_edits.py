"""Server-side context management as the Messages API defines it: the ``context_management``
parameter's edits, their beta headers, and which model takes which.

Shapes follow the SDK's beta types (``BetaClearToolUses20250919EditParam``,
``BetaClearThinking20251015EditParam``, ``BetaCompact20260112EditParam``,
``BetaContextManagementResponse``); tests compare them. The rules the API enforces, and the
simulator with it:

- an edit needs its beta header: ``clear_*`` edits ``context-management-2025-06-27``,
  ``compact_20260112`` ``compact-2026-01-12``;
- a ``compaction`` block in ``messages`` needs ``compact-2026-01-12`` too (it goes back verbatim);
- ``clear_thinking_20251015`` comes first when combined with other edits;
- a model that does not take an edit answers 400.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from .models import ModelInfo, get_model

if TYPE_CHECKING:  # the kernel's start imports this module for its constants alone
    from .context_edit_types import ContextManagementParam

CONTEXT_MANAGEMENT_BETA: Final = "context-management-2025-06-27"
COMPACTION_BETA: Final = "compact-2026-01-12"
CLEAR_TOOL_USES: Final = "clear_tool_uses_20250919"
CLEAR_THINKING: Final = "clear_thinking_20251015"
COMPACT: Final = "compact_20260112"
EDIT_BETAS: dict[str, str] = {CLEAR_TOOL_USES: CONTEXT_MANAGEMENT_BETA, CLEAR_THINKING: CONTEXT_MANAGEMENT_BETA,
                              COMPACT: COMPACTION_BETA}
DEFAULT_CLEAR_TRIGGER = 100_000
"""The API's default trigger of ``clear_tool_uses_20250919`` (input tokens)."""
DEFAULT_CLEAR_KEEP = 3
"""The API's default ``keep`` of ``clear_tool_uses_20250919`` (tool uses)."""
DEFAULT_COMPACT_TRIGGER = 150_000
"""The API's default trigger of ``compact_20260112`` (input tokens)."""
MIN_COMPACT_TRIGGER = 50_000
"""The smallest ``compact_20260112`` trigger the API takes."""
CLEARED_PLACEHOLDER = "[cleared to save context]"
"""What a cleared tool result reads (the simulator writes it; a real server's wording may differ)."""


def edit_type(edit: object) -> str | None:
    """The ``type`` of one edit (None for a non-mapping or an edit without a string type)."""
    match edit:
        case {"type": str() as kind}:
            return kind
    return None


def edit_types(context_management: Mapping[str, object] | None) -> list[str]:
    """The ``type`` of each edit, in order (any ``context_management`` mapping, a received one included)."""
    edits = context_management.get("edits") if context_management else None
    return [edit_type(e) or "" for e in (edits if isinstance(edits, (list, tuple)) else ()) if isinstance(e, Mapping)]


def required_betas(messages: Sequence[Mapping[str, object]], context_management: Mapping[str, object] | None,
                   compaction: Callable[[Sequence[Mapping[str, object]]], bool] | None = None) -> list[str]:
    """The beta headers a request needs for its edits and for the compaction blocks it sends back
    (looked for by ``compaction``, e.g. a :class:`~nbagent.engine.contracts.messages.CompactionScan`)."""
    from ..contracts.messages import has_compaction  # not at import: the kernel's start reads only the constants

    needed = {EDIT_BETAS[t] for t in edit_types(context_management) if t in EDIT_BETAS}
    if (compaction or has_compaction)(messages):
        needed.add(COMPACTION_BETA)
    return sorted(needed)


def unsupported_edits(model: str, context_management: Mapping[str, object] | None,
                      prices: Mapping[str, ModelInfo] | None = None) -> list[str]:
    """The edits ``model`` refuses (a model missing from the table refuses them all: unknown)."""
    info = get_model(model, prices)
    out = []
    for kind in edit_types(context_management):
        if info is None:
            out.append(kind)
        elif kind == COMPACT and not info.capabilities.server_compaction:
            out.append(kind)
        elif kind in (CLEAR_TOOL_USES, CLEAR_THINKING) and not info.capabilities.context_editing:
            out.append(kind)
    return out


def without_edits(context_management: ContextManagementParam | None,
                  drop: Sequence[str]) -> ContextManagementParam | None:
    """``context_management`` without the edits of types ``drop`` (None when none is left)."""
    edits = [e for e in (context_management or {}).get("edits") or () if e["type"] not in drop]
    return {"edits": edits} if edits else None


def cleared_tokens(applied_edits: Sequence[Mapping[str, object]]) -> int:
    """Input tokens the server's edits cleared on one request (as received: a missing count is 0)."""
    counts = (e.get("cleared_input_tokens") for e in applied_edits)
    return sum(int(n) for n in counts if isinstance(n, (int, float)))


__all__ = [
    "CLEARED_PLACEHOLDER", "CLEAR_THINKING", "CLEAR_TOOL_USES", "COMPACT", "COMPACTION_BETA",
    "CONTEXT_MANAGEMENT_BETA", "DEFAULT_CLEAR_KEEP", "DEFAULT_CLEAR_TRIGGER", "DEFAULT_COMPACT_TRIGGER",
    "EDIT_BETAS", "MIN_COMPACT_TRIGGER", "cleared_tokens", "edit_type", "edit_types", "required_betas", "unsupported_edits",
    "without_edits",
]
