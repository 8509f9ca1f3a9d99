"""The server's layers in a policy replay: ``edit`` (context editing, ``clear_tool_uses_20250919``
and ``clear_thinking_20251015``) and ``compact`` (server compaction, ``compact_20260112``) applied
to the request the client sent, by the simulated Messages API's own function
(:func:`~nbagent.engine.api_facts.server_context.apply`), with the ``context_management`` the
engine would send for the policy (:func:`~nbagent.engine.loop.request_context.server_edits`).

How the replay charges them, from Anthropic's documentation:

- Context editing "is applied server-side before the prompt reaches Claude"; the client keeps and
  sends its full, unmodified history (context-editing page, "Context editing happens
  server-side"). So the client's layers go on acting on the full history, the server's on what
  they sent, and the next request's trigger checks see what the server reported.
- "Tool result clearing invalidates cached prompt prefixes when content is cleared [...] You will
  incur cache write costs each time content is cleared, but subsequent requests can reuse the newly
  cached prefix" (same page, "Context editing and prompt caching"). So the cache is accounted on the
  prompt the server processed, after its edits, not on the one the client sent.
- Compaction at a token threshold: the summary is an extra sampling step, billed apart as the
  ``compaction`` entry of ``usage.iterations`` (the top-level usage is the message iteration's);
  the API ignores everything before the ``compaction`` block, which the client sends back verbatim
  (compaction pages, "Compaction at a token threshold"). The simulator bills that step as the whole
  pre-compaction prompt read uncached plus its summary as output; so does the replay.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from ..display.format import is_hidden
from ..engine.api_facts import context_edits
from ..engine.api_facts.context_edits import CLEARED_PLACEHOLDER, unsupported_edits
from ..engine.api_facts.cost import Usage, price_of
from ..engine.api_facts.models import ModelInfo
from ..engine.api_facts.server_context import apply, blocks_of
from ..engine.api_facts.tokens import TokenCounter, count_text_tokens
from ..engine.contracts.config import SessionConfig
from ..engine.contracts.context_policy import ContextPolicyError
from ..engine.contracts.messages import Message, has_compaction, is_tool_result
from ..engine.loop.request_context import server_edits

SERVER_LAYERS = ("edit", "compact")


@dataclass(frozen=True)
class ServerStep:
    """What the server did to one request: ``messages`` the model saw, the layers that acted
    (``edit``, ``compact``), tokens they removed, the tool results they cleared (by ``tool_use_id``),
    how many messages of the request it dropped (those before the compaction block in force), the
    block it made, if any, and the dollars of its summarising iteration."""

    messages: list[Message]
    actions: tuple[str, ...] = ()
    tokens_removed: int = 0
    cleared: frozenset[str] = frozenset()
    dropped: int = 0
    compaction: Mapping[str, object] | None = None
    compaction_usd: float = 0.0


class ServerLayers:
    """The server side of one policy's replay (``None`` from :meth:`of` when it has no server layer)."""

    def __init__(self, config: SessionConfig, info: ModelInfo, counter: TokenCounter, system: str | None,
                 extra_tokens: int) -> None:
        self.info, self.counter = info, counter
        self.body: dict[str, object] = {"model": info.id, "context_management": server_edits(config, info.id)}
        self.fixed = (count_text_tokens(system) if system else 0) + extra_tokens
        # Edited copies by content: the same edit on the same messages yields the same objects, so
        # the prompt cache and the token counter find them by identity (O(new messages) per request).
        self._interned: dict[tuple[object, ...], Message] = {}

    @classmethod
    def of(cls, config: SessionConfig, info: ModelInfo, counter: TokenCounter, system: str | None,
           extra_tokens: int) -> "ServerLayers | None":
        """The server layers of ``config.context``, or None; a model that does not take them is
        refused (the engine would leave them out and let the client-side layers stand in)."""
        policy = config.context
        if not any(policy.has(layer) for layer in SERVER_LAYERS):  # type: ignore[union-attr]
            return None
        refused = unsupported_edits(info.id, policy.server_edits(thinks=True))  # type: ignore[union-attr]
        if refused:
            raise ContextPolicyError(
                f"{info.id} does not take the server-side edit(s) {', '.join(refused)} of the context policy "
                f"{policy}; nbagent would send only its client-side layers: replay those, or pick a model that "
                "takes them")
        return cls(config, info, counter, system, extra_tokens)

    def count(self, messages: Sequence[Mapping[str, object]]) -> int:
        """Prompt tokens as the replay's cache counts them (system prompt and tools included)."""
        return self.counter.count_messages(messages) + self.fixed

    def apply(self, sent: Sequence[Message]) -> ServerStep:
        """The server's layers on the request ``sent`` (see the module docstring)."""
        managed = apply({**self.body, "messages": list(sent)}, self.count)
        seen = self._intern(sent, cast("list[Message]", managed.messages))
        actions: list[str] = []
        removed = 0
        cleared: frozenset[str] = frozenset()
        edits = [e for e in managed.applied if _clears_tool_uses(e)]
        if edits:
            actions.append("edit")
            removed += sum(int(e.get("cleared_input_tokens") or 0) for e in edits)
            cleared = frozenset(str(b.get("tool_use_id")) for m in seen for b in blocks_of(m)
                                if is_tool_result(b) and b.get("content") == CLEARED_PLACEHOLDER)
        dropped = next((j for j in range(len(sent) - 1, -1, -1) if has_compaction([sent[j]])), 0)
        usd = 0.0
        if managed.compaction is not None:
            actions.append("compact")
            use = managed.compaction_usage or {}
            removed += max(int(use.get("input_tokens", 0)) - self.count(seen), 0)
            usd = price_of(Usage(input_tokens=int(use.get("input_tokens", 0)),
                                 output_tokens=int(use.get("output_tokens", 0))), self.info)
            dropped = len(sent) - 1  # the model saw the summary and the latest message
        return ServerStep(seen, tuple(actions), removed, cleared, dropped, managed.compaction, usd)

    def _intern(self, sent: Sequence[Message], messages: list[Message]) -> list[Message]:
        originals = {id(m) for m in sent}
        blocks = {id(b) for m in sent for b in blocks_of(m)}
        out = []
        for m in messages:
            if id(m) in originals:
                out.append(m)
                continue
            key = (m.get("role"), *(("=", id(b)) if id(b) in blocks else
                                    ("+", json.dumps(b, sort_keys=True, default=str)) for b in blocks_of(m)))
            out.append(self._interned.setdefault(key, m))
        return out


def _clears_tool_uses(edit: Mapping[str, object]) -> bool:
    match edit:
        case {"type": context_edits.CLEAR_TOOL_USES}:
            return True
        case _:
            return False


def with_compaction(reply: Mapping[str, object], block: Mapping[str, object]) -> Message:
    """The reply as the client keeps it: the server's compaction block first (sent back verbatim)."""
    content = reply.get("content")
    rest = list(content) if isinstance(content, list) else ([{"type": "text", "text": content}] if content else [])
    return cast("Message", {**reply, "content": [dict(block), *rest]})


def overlay_strip(strip: str, view: Sequence[Message], folded: int, rng: tuple[int, int] | None,
                  step: ServerStep) -> str:
    """``strip`` with what the server did: ``e`` for a message whose tool result it cleared, ``c``
    for one it no longer reads (before the compaction block in force)."""
    shown = [v for v in range(len(view)) if not is_hidden(v, rng)]
    cut = shown[step.dropped] if step.dropped < len(shown) else 0
    chars = list(strip)
    for i, c in enumerate(chars):
        v = i if i < 2 else max(i - folded, 2)  # the message's index in the replay's view (2: a summary)
        if 0 <= v < cut and c != ".":
            chars[i] = "c"
        elif c in "Kr" and 0 <= v < len(view) and step.cleared and any(
                is_tool_result(b) and str(b.get("tool_use_id")) in step.cleared for b in blocks_of(view[v])):
            chars[i] = "e"
    return "".join(chars)


__all__ = ["SERVER_LAYERS", "ServerLayers", "ServerStep", "overlay_strip", "with_compaction"]
