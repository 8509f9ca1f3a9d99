"""Deterministic synthetic conversations for the truncation explorer.

A conversation is a list of Anthropic-format messages shaped exactly like a history the loop
builds: user, assistant, user, … where every assistant message is the reply to one API request.
With tool calls on, each user prompt starts a short agentic turn (assistant ``tool_use`` → user
``tool_result`` → … → a final answer); with repeated reads on, the ``read_file`` calls cycle over
a few paths, so later reads supersede earlier ones and the context manager's file-read pass has
something to replace. The same shape always gives the same messages (no randomness), so a lesson
can be re-run and a test can pin numbers.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from ..engine.contracts.messages import Message, TextBlockParam, ToolUseBlockParam

# Short common words that cl100k encodes as one token each (with their leading space), so a
# message of N words is close to N tokens; the explorer's sizes are meant in tokens.
_WORDS = (
    "the", "data", "file", "value", "row", "column", "model", "result", "check", "next",
    "table", "mean", "sum", "test", "code", "list", "plot", "read", "line", "name",
)


@dataclass(frozen=True)
class ConversationShape:
    """How to build a synthetic conversation.

    ``requests`` is the number of API requests (= assistant messages; the history has twice as
    many messages). Sizes are approximate token counts: user prompts and Python results use
    ``user_tokens``, assistant messages ``assistant_tokens``, file reads ``file_tokens``. With
    ``tool_calls`` each user prompt is followed by ``tools_per_turn`` tool calls before the answer;
    every ``python_every``-th call runs Python (0: never), the others are ``read_file``. With
    ``repeated_reads`` the reads cycle over ``read_paths`` (same path, same content), otherwise
    every read is a different file, so nothing can be de-duplicated. The defaults, at an 8,000
    window, show both truncation and the file-read pass skipping a truncation.
    """

    requests: int = 60
    user_tokens: int = 300
    assistant_tokens: int = 150
    tool_calls: bool = True
    repeated_reads: bool = True
    file_tokens: int = 800
    tools_per_turn: int = 3
    python_every: int = 3
    read_paths: tuple[str, ...] = ("src/app.py", "data/sales.csv")

    def __post_init__(self) -> None:
        if self.requests < 1:
            raise ValueError("a conversation needs at least one request")
        if self.user_tokens < 1 or self.assistant_tokens < 1:
            raise ValueError("message sizes must be at least one token")
        if self.file_tokens < 1:
            raise ValueError("file_tokens must be at least one token")
        if self.python_every < 0:
            raise ValueError("python_every must be 0 (never) or more")
        if self.tools_per_turn < 1:
            raise ValueError("tools_per_turn must be at least 1")
        if not self.read_paths:
            raise ValueError("read_paths must name at least one path")


def filler(tokens: int, seed: int) -> str:
    """About ``tokens`` tokens of deterministic filler text (``seed`` varies the word order)."""
    n = len(_WORDS)
    return " ".join(_WORDS[(seed * 7 + k * (1 + seed % 5)) % n] for k in range(max(tokens, 1)))


def _file_body(path: str, tokens: int) -> str:
    # The same path always has the same content: a re-read returns exactly what was read before.
    seed = sum(map(ord, path))
    return f"File {path}:\n{filler(max(tokens - 6, 1), seed)}"


def _text(text: str) -> TextBlockParam:
    return {"type": "text", "text": text}


def synthetic_history(shape: ConversationShape = ConversationShape()) -> list[Message]:
    """A conversation of ``2 * shape.requests`` messages (see :class:`ConversationShape`).

    Every ``tool_use`` but possibly the very last is answered by a ``tool_result`` in the next
    message, the first message is the task, and roles alternate, so every prefix that ends in a
    user message is a valid request and the message after it is that request's reply.
    """
    history: list[Message] = []
    target = 2 * shape.requests
    for message in _messages(shape):
        history.append(message)
        if len(history) >= target:
            return history
    raise AssertionError("unreachable: _messages is endless")  # pragma: no cover


def _messages(shape: ConversationShape) -> Iterator[Message]:
    """The endless conversation that :func:`synthetic_history` cuts to length."""
    u, a = shape.user_tokens, shape.assistant_tokens
    call = read = 0
    for turn in itertools.count(1):
        yield {"role": "user", "content": [_text(f"Task {turn}: {filler(u - 3, turn)}")]}
        for _ in range(shape.tools_per_turn if shape.tool_calls else 0):
            call += 1
            tool_id = f"toolu_{call:05d}"
            if not (shape.python_every and call % shape.python_every == 0):  # a file read
                read += 1
                path = (shape.read_paths[(read - 1) % len(shape.read_paths)] if shape.repeated_reads
                        else f"notes/part_{read:04d}.md")
                use: ToolUseBlockParam = {"type": "tool_use", "id": tool_id, "name": "read_file", "input": {"path": path}}
                output = _file_body(path, shape.file_tokens)
            else:
                use = {"type": "tool_use", "id": tool_id, "name": "python",
                       "input": {"code": f"df.describe()  # step {call}"}}
                output = f"Out[{call}]:\n{filler(u - 4, call)}"
            yield {"role": "assistant", "content": [_text(f"Step {call}: {filler(max(a - 12, 1), call)}"), use]}
            yield {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output}]}
        yield {"role": "assistant", "content": [_text(f"Answer {turn}: {filler(a - 3, turn + 1)}")]}
