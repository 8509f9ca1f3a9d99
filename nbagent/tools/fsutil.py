"""Atomic file writes for the file tools (one implementation, shared with session persistence)."""

from __future__ import annotations

from ..engine.persist import atomic_write_bytes

__all__ = ["atomic_write_bytes"]
