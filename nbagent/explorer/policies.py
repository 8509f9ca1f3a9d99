"""Context policies replayed side by side on one session: tokens, cache hits, dollars, what each
kept, and the recall probe (which planted facts each request still shows the model).

Pure functions, no widgets; ``bench/bench_context_policies.py`` and notebook 07 call
:func:`compare_policies`, so their tables are the same numbers. Each policy's client-side layers
act through the engine's own code, in the loop's order: ``summary`` when the previous request
reached the engine's trigger (:func:`~nbagent.engine.loop.summary_layer.summary_trigger`), the
history folded with :func:`~nbagent.engine.state.compactions.compacted` where the engine cuts
(:func:`~nbagent.engine.loop.compaction.hidden_end`: the latest prompt, or in one long turn
mid-turn before the latest call, as Claude Code does), then ``mask``
(:func:`~nbagent.engine.context.mask.mask_old_results`, and truncation judges what masking left,
as the loop does), then ``truncate`` (:class:`~nbagent.engine.context.ContextManager`). Server
layers (``edit``, ``compact``) then act on the request the client sent, through the simulated
API's own function, with the ``context_management`` the engine sends (:mod:`.server_layers`):
the model sees, the cache is charged on and the recall probe reads what the server processed; a
server compaction's block goes first in the reply and is sent back verbatim afterwards.

Money follows the documented prompt-cache rules (:class:`~.cache.PrefixCache`: a breakpoint on
the last block, 5-minute TTL, 20-block lookback, and with a mask layer the engine's one-hour cache
anchors (:func:`~nbagent.engine.loop.request_context.mask_anchors`); a read needs a cached
breakpoint, so a change early in the prompt rewrites everything after it) at the model's prices
(:func:`~nbagent.engine.api_facts.cost.price_of`). A summary is as long as its bound
(``summary:tokens``) and its request costs the summarised prompt as uncached input plus the
summary as output; a server compaction costs what the simulator bills for it (its ``usage.iterations``
entry: the prompt before it as uncached input, its summary as output). Tokens are tiktoken estimates.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict, cast

from ..display.format import is_hidden
from ..engine.api_facts.cost import Usage, price_of
from ..engine.api_facts.models import DEFAULT_MODEL, ModelInfo, get_model
from ..engine.api_facts.tokens import MESSAGE_OVERHEAD, TokenCounter
from ..engine.context import ContextManager, RequestUsage
from ..engine.context.as_sent import results_omitted_index
from ..engine.context.mask import mask_old_results, masked_blocks
from ..engine.contracts.config import DEFAULT_MAX_TOKENS, SessionConfig
from ..engine.contracts.context_policy import ContextPolicy
from ..engine.contracts.messages import Message
from ..engine.loop.compaction import hidden_end
from ..engine.loop.request_context import mask_anchors, reread_after
from ..engine.loop.request_run import Reread
from ..engine.loop.summary_layer import summary_trigger
from ..engine.state.compactions import compacted
from .cache import PrefixCache
from .server_layers import SERVER_LAYERS, ServerLayers, ServerStep, overlay_strip, with_compaction
from .simulate import request_points
from .synth import filler

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from typing_extensions import Unpack

DEFAULT_POLICIES = ("layered", "cline", "summary", "mask:keep=3:clear=20000")
"""What :func:`compare_policies` compares unless told otherwise: the default, Cline's truncation
alone, summary compaction, and masking that clears less at once."""
STRIP = {"P": "first pair (never hidden)", "K": "kept (sent whole)", "m": "tool result masked (placeholder sent)",
         "r": "file read replaced by a notice", "o": "sent without its tool results (their calls hidden)",
         ".": "hidden by truncation", "s": "folded into the summary",
         "e": "tool result cleared by the server (context editing)",
         "c": "summarised by the server (before its compaction block)"}
"""Strip characters, one per history message, and what they mean."""


class PolicyOptions(TypedDict, total=False):
    """The keywords :func:`compare_policies` passes on to :func:`simulate_policy`."""

    facts: Sequence[str]
    model: str
    max_tokens: int | None
    system: str | None
    extra_tokens: int
    counter: TokenCounter | None
    seconds_between_requests: float


@dataclass(frozen=True)
class PolicyRecord:
    """One request under one policy: what was sent, what it cost, what acted, what the model saw.

    ``usd`` includes the summary request made just before it and the server's compaction
    iteration, if any; ``actions`` names the layers that acted on it (``mask``, ``summary``,
    ``truncate``, and at the API ``edit``, ``compact``) and ``tokens_removed`` what mask, summary and
    the server's layers removed (estimated); ``tokens_sent`` counts what the model was sent after
    the server's layers (what is billed); ``strip`` has one :data:`STRIP` character per history
    message; ``facts_seen[k]`` says whether planted fact ``k`` is in what the model saw. ``sent`` is
    the request the client sent, ``seen`` what the model saw (the same without server layers).
    """

    request: int
    history_len: int
    messages_sent: int
    tokens_sent: int
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    usd: float
    actions: tuple[str, ...]
    tokens_removed: int
    strip: str
    facts_seen: tuple[bool, ...]
    sent: tuple[Message, ...] = field(default=(), repr=False, compare=False)
    cache_anchors: tuple[int, ...] = ()
    """The mask layer's one-hour cache breakpoints in ``sent`` (message indices), as nbagent's
    provider places them."""
    seen: tuple[Message, ...] = field(default=(), repr=False, compare=False)

    @property
    def cache_hit_share(self) -> float:
        """Cache-read tokens over tokens sent."""
        return self.cache_read_tokens / self.tokens_sent if self.tokens_sent else 0.0


@dataclass(frozen=True)
class PolicyResult:
    """One policy's replay: a :class:`PolicyRecord` per request; ``history`` is the session as the
    client kept it (with a server compaction's block first in the reply that carried it)."""

    policy: ContextPolicy
    window: int
    model: str
    facts: tuple[str, ...]
    records: tuple[PolicyRecord, ...]
    history: tuple[Message, ...] = field(repr=False, compare=False)

    @property
    def label(self) -> str:
        """The policy as the user wrote it."""
        return self.policy.name

    @property
    def usd(self) -> float:
        """Dollars of the whole replay (summary requests included)."""
        return sum(r.usd for r in self.records)

    @property
    def cache_hit_share(self) -> float:
        """Cache-read tokens over all tokens sent."""
        sent = sum(r.tokens_sent for r in self.records)
        return sum(r.cache_read_tokens for r in self.records) / sent if sent else 0.0

    def record(self, request: int) -> PolicyRecord:
        """Request ``request`` (1-based, clamped to the replayed ones)."""
        if not self.records:
            raise ValueError("no requests were replayed")
        return self.records[min(max(request, 1), len(self.records)) - 1]

    def facts_seen(self, request: int) -> int:
        """How many planted facts request ``request`` shows the model."""
        return sum(self.record(request).facts_seen)

    def lost_at(self) -> list[int | None]:
        """Per planted fact, the first request after it appeared that no longer shows it (None:
        never lost, or never planted in this session)."""
        out: list[int | None] = []
        for k in range(len(self.facts)):
            seen = False
            lost = None
            for r in self.records:
                if r.facts_seen[k]:
                    seen, lost = True, None
                elif seen and lost is None:
                    lost = r.request
            out.append(lost)
        return out

    def summary_row(self, server: bool = False) -> dict[str, object]:
        """One row of the comparison table (:func:`comparison_df`); ``server`` adds the server
        layers' columns (``edit``, ``compact``)."""
        recs = self.records
        mid = len(recs) // 2 or 1
        n = len(self.facts)
        layers = ("mask", "edit", "summary", "compact", "truncate") if server else ("mask", "summary", "truncate")
        return {
            "policy": self.label, "requests": len(recs), "usd": round(self.usd, 4),  # as every money column
            "cache hit %": round(100 * self.cache_hit_share, 1),
            "peak tokens": max((r.tokens_sent for r in recs), default=0),
            "tokens sent": sum(r.tokens_sent for r in recs),
            **{layer: sum(layer in r.actions for r in recs) for layer in layers},
            "facts mid": f"{self.facts_seen(mid)}/{n}" if recs else "", "facts end": f"{self.facts_seen(len(recs))}/{n}"
            if recs else "",
        }

    def table(self) -> "pd.DataFrame":
        """One row per request: tokens, cache, dollars (and cumulative), layers acted, facts seen."""
        import pandas as pd

        rows, total = [], 0.0
        for r in self.records:
            total += r.usd
            rows.append({"request": r.request, "messages": r.messages_sent, "tokens sent": r.tokens_sent,
                         "cache read": r.cache_read_tokens, "cache write": r.cache_write_tokens,
                         "cache hit %": round(100 * r.cache_hit_share, 1), "usd": round(r.usd, 4),
                         "cumulative usd": round(total, 4), "acted": "+".join(r.actions),
                         "tokens removed": r.tokens_removed, "facts seen": sum(r.facts_seen)})
        return pd.DataFrame(rows)


def comparison_df(results: Sequence[PolicyResult]) -> "pd.DataFrame":
    """One row per policy: dollars, dollars relative to the first policy, cache-hit %, peak and
    total tokens, how often each layer acted (the server's too when a policy has one), planted
    facts shown mid-session and at the end."""
    import pandas as pd

    server = any(r.policy.has(layer) for r in results for layer in SERVER_LAYERS)
    df = pd.DataFrame([r.summary_row(server) for r in results])
    if len(df):
        first = results[0].usd or 1.0
        df.insert(3, f"× {results[0].label}", [round(r.usd / first, 2) for r in results])
    return df


def recall_df(results: Sequence[PolicyResult]) -> "pd.DataFrame":
    """The recall probe: per planted fact, the request at which each policy stopped showing it
    (blank: still shown at the end)."""
    import pandas as pd

    facts = results[0].facts if results else ()
    data = {"fact": [f.split(":")[0] for f in facts]}
    for r in results:
        data[r.label] = ["" if at is None else str(at) for at in r.lost_at()]
    return pd.DataFrame(data)


class _FactProbe:
    """Which planted facts a message contains, computed once per message object."""

    def __init__(self, facts: Sequence[str]) -> None:
        self.facts = tuple(facts)
        self._seen: dict[int, tuple[Message, frozenset[int]]] = {}

    def of(self, message: Message) -> frozenset[int]:
        hit = self._seen.get(id(message))
        if hit is None or hit[0] is not message:
            text = json.dumps(message, ensure_ascii=False, default=str)
            hit = (message, frozenset(k for k, f in enumerate(self.facts) if f in text))
            self._seen[id(message)] = hit
        return hit[1]

    def seen(self, messages: Sequence[Message]) -> tuple[bool, ...]:
        found: set[int] = set()
        for m in messages:
            found |= self.of(m)
        return tuple(k in found for k in range(len(self.facts)))


class _PolicyReplay:
    """The mutable state of one policy's replay (what the loop keeps in the session)."""

    def __init__(self, policy: ContextPolicy, window: int, trigger: int, summary_tokens: int) -> None:
        self.policy, self.window, self.trigger, self.summary_tokens = policy, window, trigger, summary_tokens
        self.manager = ContextManager()
        self.rng: tuple[int, int] | None = None
        self.view: list[Message] = []  # the history after its compactions
        self.folded = 0  # source messages fewer in ``view`` than in the history
        self.reread: Reread | None = None  # where this request's masking started (as the engine keeps it)

    def step(self, hist: list[Message], previous: RequestUsage | None, ts: float) -> tuple[list[Message], list[str], int, int]:
        """The request for ``hist``: (messages, layers acted, tokens removed, summarised prompt tokens)."""
        self.view.extend(hist[len(self.view) + self.folded:])
        actions: list[str] = []
        removed = summarised = 0
        end = hidden_end(self.view) if self.policy.has("summary") and previous is not None else None
        if end is not None and previous is not None and previous.total >= self.trigger:
            summarised = previous.input_tokens
            self.view = compacted(self.view, end, filler(self.summary_tokens, 1))
            self.folded += end - 2
            self.manager, self.rng, previous = ContextManager(), None, None
            actions.append("summary")
            removed = max(summarised - self.summary_tokens, 0)
        done = None
        if self.policy.has("mask") and previous is not None:
            done = mask_old_results(self.view, self.manager.updates, self.rng, self.policy.options, ts, previous.total)
            if done is not None:
                actions.append("mask")
                removed += done.tokens_removed
                left = max(previous.input_tokens - done.tokens_removed, 0)
                previous = RequestUsage(previous.ts, left, previous.output_tokens)
        ctx = self.manager.get_new_context_messages_and_metadata(self.view, self.rng, previous, context_window=self.window)
        if ctx.updated_deleted_range:
            actions.append("truncate")
        self.rng = ctx.deleted_range
        self.reread = reread_after(done, None, self.rng, ctx.updated_deleted_range)
        return list(ctx.truncated_messages), actions, removed, summarised

    def strip(self, n: int) -> str:
        """One :data:`STRIP` character per history message (source indices ``0..n-1``)."""
        masked = masked_blocks(self.manager.updates)
        replaced = self.manager.replaced_reads()
        omitted = results_omitted_index(self.view, self.rng)
        chars = []
        for i in range(n):
            v = i - self.folded  # the message's index in ``view`` (the summary message holds source folded+2)
            if i < 2:
                chars.append("P")
            elif self.folded and i < self.folded + 2:
                chars.append("s")
            elif is_hidden(v, self.rng):
                chars.append(".")
            elif v == omitted:
                chars.append("o")
            elif v in masked:
                chars.append("m")
            elif v in replaced:
                chars.append("r")
            else:
                chars.append("K")
        return "".join(chars)


def simulate_policy(
    policy: "str | ContextPolicy",
    history: Sequence[Mapping[str, object]],
    window: int = 200_000,
    *,
    facts: Sequence[str] = (),
    model: str = DEFAULT_MODEL,
    max_tokens: int | None = None,
    system: str | None = None,
    extra_tokens: int = 0,
    counter: TokenCounter | None = None,
    seconds_between_requests: float = 10.0,
) -> PolicyResult:
    """Replay ``history`` request by request under ``policy`` (see the module docstring)."""
    parsed = ContextPolicy.parse(policy)
    info = _model(model)
    config = SessionConfig(model=info.id, context=parsed, max_tokens=max_tokens or DEFAULT_MAX_TOKENS)
    replay = _PolicyReplay(parsed, window, summary_trigger(config, window), parsed.options.summary_tokens)
    counter = counter or TokenCounter()
    server = ServerLayers.of(config, info, counter, system, extra_tokens)
    cache, probe = PrefixCache(counter), _FactProbe(facts)
    source = cast("list[Message]", list(history))
    records: list[PolicyRecord] = []
    previous: RequestUsage | None = None
    for k, last in enumerate(request_points(source), start=1):
        now = k * seconds_between_requests
        sent, actions, removed, summarised = replay.step(source[: last + 1], previous, now * 1000.0)
        at_api = server.apply(sent) if server is not None else ServerStep(sent)
        anchors = mask_anchors(config, replay.view, replay.manager.updates, replay.rng, len(sent), replay.reread)
        if len(at_api.messages) != len(sent):  # the server dropped what preceded its compaction
            anchors = ()
        counted = cache.account(at_api.messages, system, now, extra_tokens, anchors=anchors)
        reply = source[last + 1] if last + 1 < len(source) else None
        output = max(counter.count_message(reply) - MESSAGE_OVERHEAD, 0) if reply is not None else 0
        if reply is not None and at_api.compaction is not None:
            source[last + 1] = with_compaction(reply, at_api.compaction)
        read, write = counted.cache.read, counted.cache.write
        usd = price_of(Usage(max(counted.tokens - read - write, 0), output, write, read, counted.cache.write_1h),
                       info) + at_api.compaction_usd
        if summarised:
            usd += price_of(Usage(summarised, replay.summary_tokens), info)
        strip = replay.strip(last + 1)
        records.append(PolicyRecord(
            request=k, history_len=last + 1, messages_sent=len(sent), tokens_sent=counted.tokens,
            cache_read_tokens=read, cache_write_tokens=write, output_tokens=output, usd=usd,
            actions=(*actions, *at_api.actions), tokens_removed=removed + at_api.tokens_removed,
            strip=overlay_strip(strip, replay.view, replay.folded, replay.rng, at_api) if server else strip,
            facts_seen=probe.seen(at_api.messages), sent=tuple(sent), seen=tuple(at_api.messages),
            cache_anchors=anchors))
        previous = RequestUsage(now * 1000.0, counted.tokens, output)
    return PolicyResult(parsed, window, info.id, tuple(facts), tuple(records), tuple(source))


def compare_policies(
    history: Sequence[Mapping[str, object]],
    policies: Sequence["str | ContextPolicy"] = DEFAULT_POLICIES,
    window: int = 200_000,
    **options: Unpack[PolicyOptions],
) -> list[PolicyResult]:
    """:func:`simulate_policy` for each policy, in order, sharing one token counter."""
    if not policies:
        raise ValueError("name at least one context policy to compare")
    options.setdefault("counter", TokenCounter())
    return [simulate_policy(p, history, window, **options) for p in policies]


def _model(model: str) -> ModelInfo:
    info = get_model(model)
    if info is None:
        raise ValueError(f"unknown model {model!r}: the replay needs its prices (see nbagent's model table)")
    return info


__all__ = ["DEFAULT_POLICIES", "PolicyRecord", "PolicyResult", "STRIP", "compare_policies", "comparison_df",
           "recall_df", "simulate_policy"]
