"""Money, token counts and the hidden range, each formatted in one place.

Used by the agent view, the tables, the ``%agent`` commands and the truncation explorer, so a
figure reads the same wherever it is shown. Pure functions over numbers and tuples.

A hidden range is the engine's ``deleted_range``: ``(first, last)`` history indices, inclusive;
``None`` or an empty range such as ``(2, 1)`` hides nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

Range = tuple[int, int] | None


def fmt_usd(x: float | None) -> str:
    """``$0.0123`` (USD to 4 decimals), or ``–`` for an unpriced amount (never $0)."""
    return "–" if x is None else f"${x:.4f}"


def fmt_total_cost(cost_usd: float, unpriced_requests: int, requests: int) -> str:
    """A session's or run's cost: never ``$0.0000`` for requests nobody could price — ``unknown``
    when none was priced, ``≥ $0.0123 (2 requests unpriced)`` when some were."""
    if unpriced_requests and unpriced_requests >= requests:
        return f"unknown ({unpriced_requests} request(s) without prices)"
    if unpriced_requests:
        return f"≥ {fmt_usd(cost_usd)} ({unpriced_requests} request(s) without prices)"
    return fmt_usd(cost_usd)


def status_text(status: int | None) -> str:
    """`` (529)`` after an error's kind; an error event in a stream that began ``200 OK`` has no
    failing status: "overloaded (200)" read a success code as the failure's."""
    if status is None:
        return ""
    return " (in the stream)" if status < 400 else f" ({status})"


def fmt_tokens(n: float | None) -> str:
    """``172,310``; floats like 104857.6 keep one decimal; ``?`` when unknown."""
    if n is None:
        return "?"
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:,.1f}"


def fmt_tokens_short(n: float) -> str:
    """An axis label: ``1.5M``, ``172k``, ``800``."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:g}M"
    if n >= 1_000:
        return f"{n / 1_000:g}k"
    return f"{n:g}"


def live_range(deleted_range: Range) -> Range:
    """``deleted_range`` if it hides at least one message, else ``None``."""
    if deleted_range is None or deleted_range[1] < deleted_range[0]:
        return None
    return (deleted_range[0], deleted_range[1])


def hidden_count(deleted_range: Range) -> int:
    """How many messages the range hides."""
    rng = live_range(deleted_range)
    return 0 if rng is None else rng[1] - rng[0] + 1


def is_hidden(index: int, deleted_range: Range) -> bool:
    """Whether history message ``index`` lies inside the range."""
    rng = live_range(deleted_range)
    return rng is not None and rng[0] <= index <= rng[1]


def fmt_range(deleted_range: Range, none: str = "") -> str:
    """``"2–41"`` for a range that hides messages, ``none`` (default ``""``) otherwise."""
    rng = live_range(deleted_range)
    return none if rng is None else f"{rng[0]}–{rng[1]}"


def fmt_saving(saving: float) -> str:
    """A file-read saving fraction as the tables' ``file-read saving`` cell reads: ``12.3%``."""
    return f"{round(100.0 * saving, 1):g}%"


def truncation_line(deleted_range: Range, keep: str | None, previous_tokens: int,
                    max_allowed: float, file_read_saving: float | None, reason: str) -> str:
    """e.g. ``previous request tokens 172,310 (input + output) ≥ max allowed 160,000 → hid messages
    2–41 (keep half)``. Each figure is a cell of the run table shown under the notice, under the
    same label (the row of the request that acted): ``previous request tokens`` is input + output,
    which is why it is more than that request's ``context tokens``."""
    tokens = f"previous request tokens {fmt_tokens(previous_tokens)} (input + output)"
    head = f"{tokens} ≥ max allowed {fmt_tokens(max_allowed)}"
    if reason == "overflow":
        head = f"context window exceeded ({tokens})"
    if live_range(deleted_range) is not None:
        action = f"hid messages {fmt_range(deleted_range)}"
        if keep:
            action += f" (keep {keep})"
    else:
        action = "nothing hidden"
    line = f"{head} → {action}"
    if file_read_saving:  # 0% saved (no duplicate reads) is nothing to report
        line += f"; duplicate file reads replaced (file-read saving {fmt_saving(file_read_saving)})"
    return line


# The bidi controls that reorder a run of text (embeddings, overrides, isolates: "Trojan Source").
# Not the marks (U+200E/U+200F/U+061C): Hebrew, Arabic and Persian prose holds them (a Wikipedia
# text, a reply), where a terminal draws nothing for them, and they reorder no letters.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# What else a line of a table must not hold: a line or paragraph break, a tab, a direction mark (a
# file name holds none; one would move the columns). Not the joiners of a Persian name
# (``گزارش\u200cنهایی.csv``) or an emoji family, nor a no-break or ideographic space: a terminal
# draws those as they are.
_BREAKS = frozenset("\n\t\u2028\u2029\u061c\u200e\u200f")


def _marks(chars: Iterable[str]) -> dict[int, str]:
    return {ord(ch): f"⟦U+{ord(ch):04X}⟧" for ch in chars}


_CONTROLS = _marks([*(chr(c) for c in (*range(0x20), *range(0x7F, 0xA0)) if chr(c) not in "\n\t"), *_BIDI])
_LINE_CONTROLS = {**_CONTROLS, **_marks(_BREAKS)}


def terminal_text(text: str) -> str:
    r"""``text`` as a terminal shows it without acting on it: each control character but the line
    feed and the tab (an escape, an 8-bit CSI, a lone carriage return) and each bidi override,
    embedding or isolate written ``⟦U+001B⟧``, as nbagent's cards mark them. The model's text, a
    tool's result and an error are untrusted: a file the model read holding ``\x1b]52;c;…\x07`` set
    the terminal's clipboard (what the user pastes next) and ``\x1b[2K\x1b[1A`` erased the lines
    above it."""
    return text.replace("\r\n", "\n").translate(_CONTROLS)


def terminal_line(text: str) -> str:
    """``text`` as one line of a table a terminal shows: :func:`terminal_text`'s marks, and also for
    a line break, a tab and a direction mark (``⟦U+000A⟧``), which would break or reorder the row
    (a submitted file's name in batch's table of results)."""
    return text.translate(_LINE_CONTROLS)


__all__ = [
    "fmt_range",
    "fmt_saving",
    "fmt_tokens",
    "fmt_tokens_short",
    "fmt_usd",
    "hidden_count",
    "is_hidden",
    "live_range",
    "terminal_line",
    "terminal_text",
    "truncation_line",
]
