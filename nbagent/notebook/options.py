"""Checked values for ``%%agent`` options: a bad value is a ``UsageError`` naming the allowed range.

``--max-budget -1`` used to be accepted silently and ``--window 10`` (smaller than the system
prompt) without a word; argparse turns the ``ArgumentTypeError`` raised here into IPython's
one-line ``UsageError`` that fails the cell.
"""

from __future__ import annotations

import argparse

#: Below this the system prompt and tool definitions (about 1,000 tokens) leave no room to talk.
MIN_WINDOW = 2_000
MAX_WINDOW = 10_000_000


def _number(text: str, kind: type) -> float:
    try:
        return kind(text)  # type: ignore[no-any-return]
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid {kind.__name__} value: {text!r}") from None


def budget_usd(text: str) -> float:
    """``--max-budget``: a positive amount of USD."""
    value = _number(text, float)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive amount of USD, e.g. 0.50 (got {text})")
    return value


def window_tokens(text: str) -> int:
    """``--window``: a context window the system prompt fits in."""
    value = int(_number(text, int))
    if not MIN_WINDOW <= value <= MAX_WINDOW:
        raise argparse.ArgumentTypeError(
            f"must be between {MIN_WINDOW:,} and {MAX_WINDOW:,} tokens (got {value:,}); "
            f"try 4000 to watch truncation")
    return value


def request_count(text: str) -> int:
    """``--max-requests``: at least one request."""
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value


__all__ = ["MAX_WINDOW", "MIN_WINDOW", "budget_usd", "request_count", "window_tokens"]
