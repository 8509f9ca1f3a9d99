"""The truncation explorer's simulation core: replay a conversation request by request.

Pure functions, no widgets. Every range comes from the engine's own functions (``ContextManager``,
``get_next_truncation_range``, ``get_truncated_messages``, ``should_compact_context_window``);
nothing here re-implements a truncation rule. What the replay adds is only what the live loop
gets from the API: token figures, which are tiktoken *estimates* here.

Replay, as the loop does it: a request is sent whenever the history ends with a user message, and
the assistant message that follows is its reply. Before request *k* the strategy decides on the
history so far, the current range and the previous request's usage, which is the estimated prompt
of request *k − 1* plus the estimated tokens of its reply (``RequestUsage.total``).

Cache-read share: the cache-read tokens over the tokens sent, with the simulated Messages API's
prompt-cache rules (:class:`~nbagent.engine.api_facts.caching.PromptCache`): a breakpoint on the
last block of the last message (and on the system prompt, if any), as nbagent's Anthropic provider
sends it, on a simulated clock (``seconds_between_requests`` apart, 5-minute TTL, 1,024-token
minimum). By default :class:`~.cache.PrefixCache` computes it: the same rules, but
hashing each message once instead of the whole prompt per request (tests check that both give the
same figures); ``cache_model="prompt_cache"`` runs PromptCache itself. Tool definitions
(``extra_tokens``) are only a token count here, but they head every cached prefix as they do at
the API (tools, then system, then messages).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypedDict, cast

from ..display.format import fmt_range, hidden_count
from ..engine.api_facts.caching import MIN_CACHEABLE_TOKENS, CacheUsage, PromptCache
from ..engine.api_facts.tokens import MESSAGE_OVERHEAD, TokenCounter
from ..engine.context import (
    ContextManager,
    ContextWindowInfo,
    RequestUsage,
    get_context_window_info,
    get_next_truncation_range,
    should_compact_context_window,
)
from ..engine.context.as_sent import results_omitted_in
from ..engine.context.window import start_of_rest
from ..engine.contracts.json_types import JSONObject
from ..engine.contracts.messages import Message
from ..engine.loop.compaction import COMPACT_KEEP, hidden_end
from ..engine.state.compactions import compacted, folded, summary_text
from .cache import PrefixCache, markable

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from typing_extensions import Unpack

Strategy = Literal["cline", "last_two", "none", "auto_condense", "baseline"]
STRATEGIES: tuple[Strategy, ...] = ("cline", "last_two", "none", "auto_condense", "baseline")
STRATEGY_LABELS: dict[str, str] = {
    "cline": "Cline automatic (half/quarter)",
    "last_two": "keep last two",
    "none": "keep none",
    "auto_condense": "auto-condense (summary)",
    "baseline": "no truncation (baseline)",
}
Summarize = Callable[[Sequence[Message]], str]
TABLE_COLUMNS = ["request", "history", "messages", "deleted range", "keep", "replaced reads",
                 "tokens sent", "cache-read share"]
_EPHEMERAL = {"type": "ephemeral"}


def placeholder_summary(messages: Sequence[Message]) -> str:
    """The default summariser: an honest placeholder, not a fake summary."""
    return f"[simulated summary of {len(messages)} messages]"


class SimulateOptions(TypedDict, total=False):
    """The keywords :func:`simulate_all` passes on to :func:`simulate`."""

    summarize: Summarize | None
    counter: TokenCounter | None
    system: str | None
    extra_tokens: int
    condense_threshold: float | None
    seconds_between_requests: float
    cache_min_tokens: int
    cache_model: Literal["prefix", "prompt_cache"]


@dataclass(frozen=True)
class RequestRecord:
    """One replayed request under one strategy.

    ``deleted_range`` is the range in force for this request (None: nothing hidden yet);
    ``keep`` the keep that fired *at this request* (None when nothing new was hidden);
    ``replaced_reads`` the history indices still sent whose file read is replaced by the notice;
    ``newly_replaced`` those replaced at this request; ``results_omitted`` the history index sent
    without its tool results (their calls were hidden), if any. ``sent`` is the exact request
    (read-only; it shares message objects with the history).
    """

    request: int
    history_len: int
    deleted_range: tuple[int, int] | None
    keep: str | None
    condensed: bool
    tokens_sent: int
    output_tokens: int
    messages_sent: int
    cache_read_tokens: int
    cache_write_tokens: int
    previous_total: int | None
    over_window: bool
    replaced_reads: frozenset[int] = frozenset()
    newly_replaced: frozenset[int] = frozenset()
    file_read_saving: float | None = None
    summary: str | None = None
    results_omitted: int | None = None
    sent: tuple[Message, ...] = field(default=(), repr=False, compare=False)

    @property
    def hidden(self) -> int:
        """How many history messages the range hides."""
        return hidden_count(self.deleted_range)

    @property
    def cache_read_share(self) -> float:
        """Cache-read tokens as a share of the tokens sent (0 when nothing was sent)."""
        return self.cache_read_tokens / self.tokens_sent if self.tokens_sent else 0.0


@dataclass(frozen=True)
class SimulationResult:
    """A whole replay under one strategy: one :class:`RequestRecord` per request."""

    strategy: Strategy
    window: ContextWindowInfo
    records: tuple[RequestRecord, ...]
    history: tuple[Message, ...] = field(repr=False, compare=False)
    seconds: float = 0.0

    @property
    def label(self) -> str:
        """The strategy's display name."""
        return STRATEGY_LABELS[self.strategy]

    def record(self, request: int) -> RequestRecord:
        """The record of request ``request`` (1-based; clamped to the replayed ones)."""
        if not self.records:
            raise ValueError("no requests were replayed")
        return self.records[min(max(request, 1), len(self.records)) - 1]

    def ranges(self) -> list[tuple[int, int] | None]:
        """The range in force at each request, in order."""
        return [r.deleted_range for r in self.records]

    def table(self) -> "pd.DataFrame":
        """One row per request: the range chosen and what it cost (columns :data:`TABLE_COLUMNS`;
        ``cache-read share`` is a fraction in [0, 1])."""
        import pandas as pd


        rows = [{
            "request": r.request,
            "history": r.history_len,
            "messages": r.messages_sent,
            "deleted range": fmt_range(r.deleted_range),
            "keep": r.keep or "",
            "replaced reads": len(r.replaced_reads),
            "tokens sent": r.tokens_sent,
            "cache-read share": round(r.cache_read_share, 3),
        } for r in self.records]
        return pd.DataFrame(rows, columns=TABLE_COLUMNS)

    def summary_row(self) -> dict[str, object]:
        """Totals for the comparison table: truncations, peak and total tokens, cache reads."""
        sent = sum(r.tokens_sent for r in self.records)
        read = sum(r.cache_read_tokens for r in self.records)
        return {
            "strategy": self.label,
            "requests": len(self.records),
            "truncations": sum(1 for r in self.records if r.keep is not None),
            "hidden at end": self.records[-1].hidden if self.records else 0,
            "peak tokens sent": max((r.tokens_sent for r in self.records), default=0),
            "total tokens sent": sent,
            "cache-read share": round(read / sent, 3) if sent else 0.0,
            "over window": sum(1 for r in self.records if r.over_window),
        }


def request_points(history: Sequence[Mapping[str, object]]) -> list[int]:
    """History index of the last message of every request: each user message that is answered
    by an assistant message, or that ends the history (the request about to be sent)."""
    n = len(history)
    return [i for i, m in enumerate(history)
            if m.get("role") == "user" and (i + 1 == n or history[i + 1].get("role") == "assistant")]


def with_cache_breakpoint(messages: Sequence[Message]) -> list[Mapping[str, object]]:
    """A copy whose last message's last block carries ``cache_control`` (inputs untouched), as
    nbagent's Anthropic provider marks every request."""
    out: list[Mapping[str, object]] = list(messages)
    if not out or not markable(out[-1]):
        return out
    last = messages[-1]
    content = last.get("content")
    blocks: list[dict[str, object]] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else [dict(b) for b in content or ()])
    blocks[-1]["cache_control"] = _EPHEMERAL
    out[-1] = {"role": last.get("role"), "content": blocks}
    return out


@dataclass(frozen=True)
class _Step:
    """What a strategy decided for one request."""

    messages: list[Message]
    keep: str | None = None
    condensed: bool = False
    newly_replaced: frozenset[int] = frozenset()
    file_read_saving: float | None = None


class _Replay:
    """The mutable state of one strategy's replay (the part the loop keeps in the session)."""

    def __init__(self, strategy: Strategy, window: int, summarize: Summarize,
                 condense_threshold: float | None) -> None:
        self.strategy = strategy
        self.window = window
        self.info = get_context_window_info(window)
        self.summarize = summarize
        self.condense_threshold = condense_threshold
        self.manager = ContextManager()  # one per simulated session, like the loop
        self.rng: tuple[int, int] | None = None
        self.summary: str | None = None  # the marked summary text the model sees
        self.view: list[Message] = []  # auto-condense: the history after its compactions
        self.folded = 0

    def step(self, hist: list[Message], previous: RequestUsage | None) -> _Step:
        """Decide on the range and build the request for ``hist`` (which ends on a user message)."""
        s = self.strategy
        if s == "cline":
            res = self.manager.get_new_context_messages_and_metadata(hist, self.rng, previous,
                                                                     context_window=self.window)
            self.rng = res.deleted_range  # what the loop stores (unchanged unless truncation fired)
            return _Step(list(res.truncated_messages), res.keep if res.updated_deleted_range else None,
                         newly_replaced=res.replaced_reads, file_read_saving=res.file_read_saving)
        if s in ("last_two", "none"):
            keep: str | None = None
            # Cline's threshold, but the keep is forced (the ContextManager would pick half/quarter).
            if previous is not None and previous.total >= self.info.max_allowed_size:
                self.manager.apply_truncation_notice(previous.ts, hist)
                self.rng = get_next_truncation_range(hist, self.rng, s)
                keep = s
            return _Step(list(self.manager.get_truncated_messages(hist, self.rng)), keep)
        if s == "auto_condense":
            return self._compact(hist, previous)
        if s == "baseline":
            return _Step(list(self.manager.get_truncated_messages(hist, None)))  # memoised, nothing hidden
        raise ValueError(f"unknown strategy {s!r}; one of {', '.join(STRATEGIES)}")

    def _compact(self, hist: list[Message], previous: RequestUsage | None) -> _Step:
        """Auto-condense through the engine's compaction: ``view`` is the history as the session
        holds it after its compactions (:func:`~nbagent.engine.state.compactions.compacted`, at
        :func:`~nbagent.engine.loop.compaction.hidden_end`), ``folded`` how many source messages fewer it
        has. The range reported is the source messages the summary stands for."""
        self.view.extend(hist[len(self.view) + self.folded:])
        condensed = False
        if previous is not None and should_compact_context_window(previous.total, self.window, self.condense_threshold):
            end = hidden_end(self.view)
            if end is not None:  # None: too little since the task or the last summary (never twice)
                summary = self.summarize(folded(self.view, end))
                self.view = compacted(self.view, end, summary)
                self.summary = summary_text(summary)
                self.folded += end - 2
                self.rng = (2, self.folded + 1)
                condensed = True
        return _Step(list(self.view), COMPACT_KEEP if condensed else None, condensed=condensed)

    def visible_replaced(self, n: int) -> frozenset[int]:
        if self.strategy != "cline":
            return frozenset()
        first = start_of_rest(self.rng)
        return frozenset(i for i in self.manager.replaced_reads() if first <= i < n)


_TOOLS_STANDIN: JSONObject = {"name": "tool_definitions"}


class _ToolsCounted(TokenCounter):
    """A counter for PromptCache's prefixes in which the one stand-in tool (``_TOOLS_STANDIN``)
    weighs the ``extra_tokens`` of the session's real tool definitions (only their size is known)."""

    def __init__(self, inner: TokenCounter, extra_tokens: int) -> None:
        super().__init__()
        self._inner, self._extra = inner, extra_tokens

    def count_request(self, messages: Sequence[Mapping[str, object]],
                      system: str | Sequence[Mapping[str, object]] | None = None,
                      tools: Sequence[Mapping[str, object]] | None = None) -> int:
        return self._inner.count_request(messages, system) + (self._extra if tools else 0)


def _cache_accounting(cache_model: str, counter: TokenCounter, system: str | None, extra_tokens: int,
                      min_tokens: int, clock: Callable[[], float]) -> Callable[[list[Message]], tuple[int, CacheUsage]]:
    """What counts each simulated request's tokens and cache use: the explorer's fast
    :class:`~.cache.PrefixCache` (``"prefix"``) or the simulated API's own PromptCache."""
    if cache_model == "prefix":
        fast = PrefixCache(counter, min_tokens=min_tokens)

        def by_prefix(messages: list[Message]) -> tuple[int, CacheUsage]:
            counted = fast.account(messages, system, clock(), extra_tokens)
            return counted.tokens, counted.cache
        return by_prefix
    if cache_model != "prompt_cache":
        raise ValueError(f"cache_model must be 'prefix' or 'prompt_cache', not {cache_model!r}")
    reference = PromptCache(clock, _ToolsCounted(counter, extra_tokens), min_tokens=min_tokens)
    system_blocks = [{"type": "text", "text": system, "cache_control": _EPHEMERAL}] if system else None

    def as_the_api(messages: list[Message]) -> tuple[int, CacheUsage]:
        tokens = counter.count_request(messages, system) + extra_tokens
        body: dict[str, object] = {"model": "explorer", "messages": with_cache_breakpoint(messages)}
        if extra_tokens:
            body["tools"] = [_TOOLS_STANDIN]
        if system_blocks:
            body["system"] = system_blocks
        return tokens, reference.account(body, tokens)
    return as_the_api


def simulate(
    strategy: Strategy,
    history: Sequence[Mapping[str, object]],
    window: int | None,
    *,
    summarize: Summarize | None = None,
    counter: TokenCounter | None = None,
    system: str | None = None,
    extra_tokens: int = 0,
    condense_threshold: float | None = None,
    seconds_between_requests: float = 10.0,
    cache_min_tokens: int = MIN_CACHEABLE_TOKENS,
    cache_model: Literal["prefix", "prompt_cache"] = "prefix",
) -> SimulationResult:
    """Replay ``history`` request by request under ``strategy`` (see the module docstring).

    ``window`` is the context window (None or 0: 128,000). ``summarize(messages) -> str`` makes
    auto-condense's summary (default :func:`placeholder_summary`). ``system`` and ``extra_tokens``
    (e.g. tool definitions) are counted in every request. Pass one ``counter`` to several calls to
    share cached token counts. ``cache_model="prompt_cache"`` runs the simulated API's own
    PromptCache instead of the equivalent, faster :class:`~.cache.PrefixCache`.
    """
    started = time.perf_counter()
    counter = counter or TokenCounter()
    info = get_context_window_info(window)
    replay = _Replay(strategy, info.context_window, summarize or placeholder_summary, condense_threshold)
    now = [0.0]
    account = _cache_accounting(cache_model, counter, system, extra_tokens, cache_min_tokens, lambda: now[0])
    source = cast("list[Message]", list(history))  # messages of a file or the caller, read as the engine's
    records: list[RequestRecord] = []
    previous: tuple[int, int] | None = None  # (prompt tokens, reply tokens) of the last request
    for k, last in enumerate(request_points(source), start=1):
        now[0] = k * seconds_between_requests
        ts = k * seconds_between_requests * 1000.0  # ms, strictly increasing like the loop's
        hist = source[: last + 1]
        usage = RequestUsage(ts=ts, input_tokens=previous[0], output_tokens=previous[1]) if previous else None
        step = replay.step(hist, usage)
        messages = step.messages
        tokens, cached = account(messages)
        reply = source[last + 1] if last + 1 < len(source) else None
        output = max(counter.count_message(reply) - MESSAGE_OVERHEAD, 0) if reply is not None else 0
        records.append(RequestRecord(
            request=k, history_len=len(hist), deleted_range=replay.rng, keep=step.keep,
            condensed=step.condensed, tokens_sent=tokens, output_tokens=output,
            messages_sent=len(messages), cache_read_tokens=cached.read, cache_write_tokens=cached.write,
            previous_total=usage.total if usage else None, over_window=tokens > info.context_window,
            replaced_reads=replay.visible_replaced(len(hist)), newly_replaced=step.newly_replaced,
            file_read_saving=step.file_read_saving, summary=replay.summary,
            results_omitted=results_omitted_in(hist, replay.rng, messages), sent=tuple(messages),
        ))
        previous = (tokens, output)
    return SimulationResult(strategy, info, tuple(records), tuple(source), time.perf_counter() - started)


def simulate_all(
    history: Sequence[Mapping[str, object]],
    window: int | None,
    strategies: Sequence[Strategy] = STRATEGIES,
    **options: Unpack[SimulateOptions],
) -> dict[Strategy, SimulationResult]:
    """:func:`simulate` for each strategy, sharing one token counter (same options for all)."""
    options.setdefault("counter", TokenCounter())
    return {s: simulate(s, history, window, **options) for s in strategies}
