"""What a turn told the model about the kernel, read back from what was sent (so it holds after a
resume or a replay too): the variables described, and the text and images of the kernel context.

``described_variables(session, turn)`` is what the replay checks against the live kernel to tell a
stale answer: the names of the variables the model knew about when it answered.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol, Sequence

from ...engine.api_facts.images import image_tokens as engine_image_tokens
from ...engine.api_facts.images import known_image_tokens
from ...engine.contracts.messages import ContentBlock, ImageBlockParam, MessageParam, ToolResultContent, is_text
from ...engine.loop.facts import FACTS_TAG

if TYPE_CHECKING:
    from ...engine.state.sent import SentRequest
    from .build import ContextRecord

_VARIABLE = re.compile(r"^  - ([A-Za-z_]\w*): ")
_REMOVED = "Removed variables: "


class SentLog(Protocol):
    """What is read of a :class:`~nbagent.notebook.session.NotebookSession` here (a protocol: the
    session module imports this one)."""

    @property
    def turn(self) -> int: ...

    @property
    def agent(self) -> object: ...

    def saw(self, turn: int | None = None) -> list[SentRequest]: ...


def _blocks(message: MessageParam) -> list[ContentBlock]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def told_variables(messages: Sequence[MessageParam]) -> dict[str, str]:
    """Variable name -> the lines describing it, as the kernel contexts in ``messages`` left them
    (a full snapshot replaces what came before; a change adds, replaces or removes)."""
    told: dict[str, str] = {}
    for message in messages:
        if message.get("role") != "user":
            continue
        for block in _blocks(message):
            text = str(block.get("text", "")) if is_text(block) else ""
            if not text.startswith(f"<{FACTS_TAG}") or text.startswith(f"<{FACTS_TAG} image"):
                continue
            if text.startswith(f"<{FACTS_TAG}>"):
                told.clear()
            _apply(text, told)
    return told


def _apply(text: str, told: dict[str, str]) -> None:
    current: str | None = None
    for line in text.splitlines():
        m = _VARIABLE.match(line)
        if m:
            current = m.group(1)
            told[current] = line
        elif current is not None and line.startswith("    "):
            told[current] += "\n" + line
        else:
            current = None
            if line.startswith(_REMOVED):
                for name in line[len(_REMOVED):].split(", "):
                    told.pop(name.strip(), None)


def _first_request(session: SentLog, turn: int | None) -> "SentRequest | None":
    sent = session.saw(turn)
    return sent[0] if sent else None


def described_variables(session: SentLog, turn: int | None = None) -> list[str]:
    """The names of the variables the model had been told about when turn ``turn`` (default: the
    latest) was sent: its kernel context and the earlier ones it builds on. ``session`` is a
    :class:`~nbagent.notebook.session.NotebookSession` (``nbagent.session()``)."""
    first = _first_request(session, turn)
    return list(told_variables(first.messages)) if first is not None else []


def image_tokens(block: ImageBlockParam) -> int | None:
    """The API's estimate for an image block, (width x height) / 750 after the API's scaling (None:
    size unknown): :func:`~nbagent.engine.api_facts.images.known_image_tokens`, the estimate the
    context manager counts too."""
    return known_image_tokens(block)


def _images_in(content: str | Sequence[ContentBlock | ToolResultContent] | None) -> list[ImageBlockParam]:
    found: list[ImageBlockParam] = []
    for block in content if isinstance(content, list) else ():
        if block["type"] == "image":
            found.append(block)
        elif block["type"] == "tool_result":
            found += _images_in(block.get("content"))
    return found


def request_image_tokens(sent: Sequence["SentRequest"]) -> dict[int, int]:
    """Request number -> the API's estimate for the images it carried, 0 for none (every request
    sent; an image of unknown size counts as the engine's typical image)."""
    counts: dict[int, int] = {}
    for request in sent:
        images = [b for m in request.messages for b in _images_in(m.get("content"))]
        counts[request.request] = sum(engine_image_tokens(b) for b in images)
    return counts


def kernel_context_text(session: SentLog, turn: int | None = None) -> str | None:
    """The kernel context the turn's prompt carried, as sent (images as one line each), or None
    when no request of that turn was sent."""
    first = _first_request(session, turn)
    if first is None:
        return None
    prompt = first.messages[-1]
    parts = []
    for block in _blocks(prompt):
        if is_text(block) and str(block.get("text", "")).startswith(f"<{FACTS_TAG}"):
            parts.append(str(block["text"]))
        elif block["type"] == "image":
            tokens = image_tokens(block)
            parts.append(f"(image block, ~{tokens:,} tokens)" if tokens else "(image block)")
    return "\n".join(parts)


def _record_lines(record: "ContextRecord") -> list[str]:
    def names(items: list[str]) -> str:
        return ", ".join(items[:30]) + (f" and {len(items) - 30:,} more" if len(items) > 30 else "") or "none"

    return [f"In full: {names(record.full)}", f"In a line: {names(record.brief)}",
            f"Left out: {names(record.left_out)}" + (f" ({'; '.join(record.notes)})" if record.notes else ""),
            f"Images: {names(record.images)}",
            f"~{record.tokens:,} tokens as a whole (a later prompt sends only the change), built in "
            f"{record.seconds * 1000:.0f} ms"]


def kernel_context_lines(session: SentLog, turn: int | None = None) -> list[str]:
    """``%agent context``: the turn's kernel context as sent, and for the latest build what it
    described, in full or in a line, and left out (``session``: a NotebookSession)."""
    text = kernel_context_text(session, turn)
    if text is None:
        return ["No request sent yet." if turn is None else f"No request was sent in turn {turn}."]
    sent = session.saw(turn)
    head = f"Kernel context sent with turn {sent[0].turn}:" if text else \
        f"Turn {sent[0].turn} sent nothing about the kernel (nothing had changed since the previous prompt)."
    lines = [head, *([text] if text else [])]
    record = getattr(getattr(session.agent, "engine", None), "kernel_facts", None)
    last = getattr(record, "last", None)
    if last is not None and (turn is None or turn == session.turn):
        lines += ["", *_record_lines(last)]
    return lines


__all__ = ["described_variables", "image_tokens", "kernel_context_lines", "kernel_context_text", "request_image_tokens",
           "told_variables"]
