"""Cline's context manager (``shared/spec/context-manager.md``): what the model sees on the next request.

The parts: ``window`` (sizes and ranges), ``updates`` (stored, timestamped edits of messages),
``request`` (building a request), ``file_reads`` (de-duplicating superseded file reads),
``file_state`` (what a file looked like when the model last read it) and ``manager``
(:class:`ContextManager`, the per-session face of the above).
"""

from __future__ import annotations

from .manager import (
    CONTEXT_HISTORY_FILE,
    CONTINUE_NOTICE,
    DUPLICATE_FILE_READ_NOTICE,
    FILE_READ_SAVING_THRESHOLD,
    ORPHANED_RESULTS_NOTICE,
    RESULT_MISSING,
    TRUNCATION_NOTICE,
    ContextHistoryUpdates,
    ContextManager,
    ContextResult,
    ContextUpdate,
    ContextWindowInfo,
    DeletedRange,
    EditType,
    Keep,
    RequestUsage,
    ensure_tool_results_follow_tool_use,
    get_context_window_info,
    get_next_truncation_range,
    get_truncated_messages,
    should_compact_context_window,
)

__all__ = [
    "CONTEXT_HISTORY_FILE",
    "CONTINUE_NOTICE",
    "DUPLICATE_FILE_READ_NOTICE",
    "FILE_READ_SAVING_THRESHOLD",
    "ORPHANED_RESULTS_NOTICE",
    "RESULT_MISSING",
    "TRUNCATION_NOTICE",
    "ContextHistoryUpdates",
    "ContextManager",
    "ContextResult",
    "ContextUpdate",
    "ContextWindowInfo",
    "DeletedRange",
    "EditType",
    "Keep",
    "RequestUsage",
    "ensure_tool_results_follow_tool_use",
    "get_context_window_info",
    "get_next_truncation_range",
    "get_truncated_messages",
    "should_compact_context_window",
]
