"""Usage → USD, from the API's own usage figures and the model registry."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Mapping, SupportsInt

from ..contracts.saved import NonNegInt, saved_record
from .models import ModelInfo, PriceTier, get_model


@saved_record
@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one API request, as the API reports it (the truth, not an estimate).

    ``cache_creation_1h`` is the part of ``cache_creation_input_tokens`` written with a 1-hour TTL;
    the rest are 5-minute writes.
    """

    input_tokens: NonNegInt = 0
    output_tokens: NonNegInt = 0
    cache_creation_input_tokens: NonNegInt = 0
    cache_read_input_tokens: NonNegInt = 0
    cache_creation_1h: NonNegInt = 0
    web_search_requests: NonNegInt = 0
    """Server-side web searches (billed per search, on top of tokens)."""
    web_fetch_requests: NonNegInt = 0
    """Server-side web fetches (billed as tokens only)."""

    @property
    def prompt_tokens(self) -> int:
        """Every token of the prompt: uncached input plus cache writes and reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def cache_hit_share(self) -> float | None:
        """The part of the prompt read from the cache (0-1), or None for an empty prompt."""
        prompt = self.prompt_tokens
        return self.cache_read_input_tokens / prompt if prompt else None

    @property
    def total_tokens(self) -> int:
        """Prompt plus output: what Cline's context manager compares with the window."""
        return self.prompt_tokens + self.output_tokens

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.cache_creation_1h + other.cache_creation_1h,
            self.web_search_requests + other.web_search_requests,
            self.web_fetch_requests + other.web_fetch_requests,
        )

    @classmethod
    def from_api(cls, usage: object) -> "Usage":
        """Build from an SDK ``Usage`` object or a plain dict (``cache_creation`` split honoured)."""
        server = _field(usage, "server_tool_use")
        return cls(
            _count(usage, "input_tokens"), _count(usage, "output_tokens"),
            _count(usage, "cache_creation_input_tokens"), _count(usage, "cache_read_input_tokens"),
            _count(_field(usage, "cache_creation"), "ephemeral_1h_input_tokens"),
            _count(server, "web_search_requests"), _count(server, "web_fetch_requests"),
        )


def _field(obj: object, key: str) -> object:
    """``obj[key]`` or ``obj.key`` (SDK objects and dicts alike), None when absent."""
    if obj is None:
        return None
    return obj.get(key) if isinstance(obj, (dict, Mapping)) else getattr(obj, key, None)


def _count(obj: object, key: str) -> int:
    """The count ``obj`` holds at ``key``, 0 when absent (or None, as the API sends a missing one)."""
    value = _field(obj, key)
    if not value:
        return 0
    if type(value) is int:  # nearly always: a check against the SupportsInt protocol costs microseconds
        return value
    if isinstance(value, (SupportsInt, str)):
        return int(value)
    raise TypeError(f"usage.{key} is not a count: {value!r}")


_warned: set[str] = set()


class UnpricedModelWarning(UserWarning):
    """A request's model has no prices: its cost is unknown (shown as –), never guessed."""


def cost_of(usage: Usage, model: str, prices: Mapping[str, ModelInfo] | None = None) -> float | None:
    """USD cost of one request, or ``None`` for a model with no known prices.

    Exact arithmetic (integers over a power of ten), returned as a float; the long-prompt tier is
    chosen by the request's total prompt tokens; web searches are added at the model's per-search
    price. An unknown model warns once and never gets a guessed price.
    """
    info = get_model(model, prices)
    if info is None:
        if model not in _warned:
            _warned.add(model)
            # Said as nbagent's, not at a line of its source: reached from deep in the agent loop
            # (in a notebook, on the cell's own thread), any stacklevel pointed into nbagent, and a
            # %%agent cell showed ".../engine/loop/completion.py:59" and that line's code, as a crash.
            warnings.warn_explicit(
                f"nbagent has no prices for model {model!r}; cost is shown as – (unknown). "
                "In Python, pass its row as Agent(prices={...}); in a notebook, %config AgentMagics.prices = "
                "{...} (see docs/models.md, 'Your own rows').",
                UnpricedModelWarning, filename="nbagent", lineno=0, module="nbagent", registry={},
            )
        return None
    (p_input, p_5m, p_1h, p_read, p_output), p_search, scale = _integer_prices(
        info.tier_for(usage.prompt_tokens), info.web_search_usd_per_1k)
    one_hour = min(usage.cache_creation_1h, usage.cache_creation_input_tokens)
    five_min = usage.cache_creation_input_tokens - one_hour
    micro = (usage.input_tokens * p_input + five_min * p_5m + one_hour * p_1h
             + usage.cache_read_input_tokens * p_read + usage.output_tokens * p_output
             + usage.web_search_requests * p_search * 1000)  # per 1,000 searches vs per 1,000,000 tokens
    return micro / (1_000_000 * scale)  # int / int: rounded once, correctly


@lru_cache(maxsize=64)
def _integer_prices(tier: PriceTier, per_1k_searches: float) -> tuple[tuple[int, ...], int, int]:
    """A tier's prices per million tokens and the price per 1,000 searches as integers over one
    power of ten (``scale``), from their shortest decimal repr: a request's cost is then an exact
    integer sum and one correctly rounded division (what exact decimals gave, without their
    per-operation cost)."""
    exact = [Decimal(str(p)) for p in (tier.input, tier.cache_write_5m, tier.cache_write_1h, tier.cache_read,
                                       tier.output, per_1k_searches)]
    places = max(0, *(-int(d.as_tuple().exponent) for d in exact))
    scale = 10 ** places
    ints = [int(d * scale) for d in exact]
    return tuple(ints[:5]), ints[5], scale


def price_of(usage: Usage, info: ModelInfo) -> float:
    """USD cost of ``usage`` at ``info``'s prices (no lookup, no warning)."""
    return cost_of(usage, info.id, {info.id: info}) or 0.0
