"""The ``%%agent`` options, declared once, and checked values: a bad value is a ``UsageError``
naming the allowed range.

``cell_options`` declares the options (IPython's ``magic_arguments``, argparse underneath) on the
cell magic and on ``%agent fix``; the help text of both is generated from these declarations.

``--max-budget -1`` used to be accepted silently and ``--window 10`` (smaller than the system
prompt) without a word; argparse turns the ``ArgumentTypeError`` raised here into IPython's
one-line ``UsageError`` that fails the cell.
"""

from __future__ import annotations

import argparse
from typing import Callable, TypeVar

from IPython.core.magic_arguments import argument, magic_arguments

from ..engine.contracts.config import PERMISSION_MODES

F = TypeVar("F", bound=Callable[..., object])

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


def context_policy(text: str) -> str:
    """``--context``: a context policy that parses (the error names the layers and presets)."""
    from ..engine.contracts.context_policy import ContextPolicy, ContextPolicyError

    try:
        ContextPolicy.parse(text)
    except ContextPolicyError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def notes_chars(text: str) -> int:
    """``--notes``: the notes file's bound in characters (0 is off)."""
    from ..engine.contracts.config import check_notes_bound

    try:
        return check_notes_bound(int(_number(text, int)))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc}; e.g. --notes 4000") from None


def request_count(text: str) -> int:
    """``--max-requests``: at least one request."""
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value


def turn_number(text: str) -> int:
    """``rollback TURN`` / ``saw TURN``: a turn number (0 is before the first prompt)."""
    value = int(_number(text, int))
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a turn number, 0 or more (got {value})")
    return value


CELL_OPTIONS = [
    argument("--model", default=None, help="Model id (this and later prompts of the session)."),
    argument("--max-requests", "--max-turns", dest="max_requests", type=request_count, default=None,
             help="Most API requests for this prompt (--max-turns is an alias)."),
    argument("--max-budget", type=budget_usd, default=None,
             help="For this prompt: stop once this prompt has spent USD (earlier prompts do not count)."),
    argument("--max-session-budget", type=budget_usd, default=None,
             help="This and later prompts: stop once the session has spent USD (rolled-back requests included)."),
    argument("--token-budget", type=request_count, default=None, metavar="TOKENS",
             help="For this prompt: stop once this prompt's requests used TOKENS tokens (any model, priced or not)."),
    argument("--session-token-budget", type=request_count, default=None, metavar="TOKENS",
             help="This and later prompts: stop once the session's requests used TOKENS tokens."),
    argument("--endpoint", default=None, metavar="NAME",
             help="Send requests to this endpoint profile (.nbagent/endpoints.json, AgentMagics.endpoints); "
                  "a new session when it changes."),
    argument("--new", action="store_true", help="Start a new conversation."),
    argument("--allow", nargs="+", action="extend", default=None, metavar="TOOL",
             help="Allow these tools without asking (--allow a b, or --allow a --allow b)."),
    argument("--simulated", action="store_true", help="Use the offline simulated Messages API."),
    argument("--anthropic", action="store_true", help="Use the Anthropic API (needs ANTHROPIC_API_KEY)."),
    argument("--window", type=window_tokens, default=None, help="Context window override, e.g. 4000 to see truncation."),
    argument("--context", type=context_policy, default=None, metavar="POLICY",
             help="Context policy: layered (default), cline, summary, server, all, or LAYER[:key=value]+LAYER "
                  "(layers mask, edit, summary, compact, truncate)."),
    argument("--notes", type=notes_chars, default=None, metavar="CHARS",
             help="This and later prompts: give the agent a notes file (notes.md in the task folder) bounded to "
                  "CHARS characters, read at the start of each turn; 0 turns it off."),
    argument("--effort", default=None, help="Effort level: low, medium, high, xhigh or max (as the model takes)."),
    argument("--web-search", action="store_true", help="Offer Anthropic's web search tool (billed per search)."),
    argument("--insert-code", action="store_true",
             help="Put the agent's code into cells even when AgentMagics.cells is off."),
    argument("--no-cells", action="store_true",
             help="This prompt: keep the agent's code in its tool cards only (no new cells)."),
    argument("--live", action="store_true",
             help="Ask the model even when this cell's turn is recorded (the record forks from here)."),
    argument("--if-changed", default=None, choices=("warn", "live", "fail"), metavar="POLICY",
             help="When this cell replays and what its answer depended on changed: warn, live (ask again) or "
                  "fail (default: AgentMagics.replay_if_changed)."),
    argument("--permissions", default=None, choices=PERMISSION_MODES, metavar="MODE",
             help="Permission mode for this and later prompts: " + ", ".join(PERMISSION_MODES) + "."),
    argument("--out", default=None, metavar="NAME", help="Bind the final answer to NAME in the namespace."),
    argument("--schema", default=None, metavar="MODEL",
             help="A pydantic model (or JSON schema dict) in the namespace: the answer is validated data."),
]
"""The options of a ``%%agent`` cell (and of ``%agent fix``, which sends a prompt too)."""


def cell_options(name: str) -> Callable[[F], F]:
    """Declare :data:`CELL_OPTIONS` on a magic function; its parser and help get ``name`` as the
    command (``%agent`` gives ``%%agent``: IPython's help formatter adds one ``%``)."""
    def declare(func: F) -> F:
        for option in reversed(CELL_OPTIONS):  # decorators apply bottom-up: keep the listed order
            func = option(func)
        return magic_arguments(name=name)(func)  # type: ignore[no-any-return]

    return declare


__all__ = ["CELL_OPTIONS", "MAX_WINDOW", "MIN_WINDOW", "budget_usd", "cell_options", "request_count",
           "turn_number", "window_tokens", "context_policy", "notes_chars"]
