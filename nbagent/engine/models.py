"""Model registry: context windows, output limits and prices, as data.

Prices are USD per million tokens, as published by Anthropic (table taken from the project's
cost-and-tokens spec, figures as of October 2026; checked 2026-11-29 against that spec, the only
price source reachable offline). Users on proxies or special plans pass their own table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


@dataclass(frozen=True)
class PriceTier:
    """USD per million tokens for one prompt-size tier."""

    input: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    output: float


@dataclass(frozen=True)
class ModelInfo:
    """One model's window, output limit and prices.

    ``long_prompt`` applies when the request's total prompt tokens exceed ``long_prompt_threshold``.
    """

    id: str
    context_window: int
    max_output: int
    prices: PriceTier
    long_prompt: PriceTier | None = None
    long_prompt_threshold: int | None = None
    aliases: tuple[str, ...] = field(default_factory=tuple)

    def tier_for(self, prompt_tokens: int) -> PriceTier:
        """The price tier that applies to a request with ``prompt_tokens`` prompt tokens."""
        if self.long_prompt is not None and self.long_prompt_threshold is not None:
            if prompt_tokens > self.long_prompt_threshold:
                return self.long_prompt
        return self.prices


def _p(inp: float, w5: float, w1h: float, read: float, out: float) -> PriceTier:
    return PriceTier(inp, w5, w1h, read, out)


_OPUS_5 = _p(5, 6.25, 10, 0.50, 25)
_SONNET_4 = _p(3, 3.75, 6, 0.30, 15)

MODELS: tuple[ModelInfo, ...] = (
    ModelInfo("claude-opus-5-5", 1_000_000, 128_000, _p(4, 5, 8, 0.20, 20)),
    ModelInfo("claude-opus-5", 1_000_000, 128_000, _OPUS_5),
    ModelInfo("claude-opus-4-8", 1_000_000, 128_000, _OPUS_5),
    ModelInfo("claude-opus-4-7", 1_000_000, 128_000, _OPUS_5),
    ModelInfo("claude-opus-4-6", 1_000_000, 128_000, _OPUS_5),
    ModelInfo("claude-opus-4-5", 200_000, 64_000, _OPUS_5),
    ModelInfo("claude-sonnet-5-5", 1_000_000, 64_000, _p(2, 2.50, 4, 0.10, 10)),
    ModelInfo("claude-sonnet-5", 1_000_000, 64_000, _p(2, 2.50, 4, 0.20, 10)),
    ModelInfo("claude-sonnet-4-6", 200_000, 64_000, _SONNET_4),
    ModelInfo("claude-sonnet-4-5", 200_000, 64_000, _SONNET_4),
    ModelInfo(
        "claude-haiku-5-5",
        1_000_000,
        64_000,
        _p(0.10, 0.125, 0.20, 0.01, 0.50),
        long_prompt=_p(0.50, 0.625, 1.00, 0.05, 2.50),
        long_prompt_threshold=100_000,
    ),
    ModelInfo("claude-haiku-4-5", 200_000, 64_000, _p(1, 1.25, 2, 0.10, 5)),
    ModelInfo("claude-fable-5-1", 1_000_000, 128_000, _p(10, 12.50, 20, 0.25, 50)),
)

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_CONTEXT_WINDOW = 128_000  # what an unknown model is assumed to have (same as Cline)


def _index(models: tuple[ModelInfo, ...]) -> dict[str, ModelInfo]:
    table: dict[str, ModelInfo] = {}
    for m in models:
        table[m.id] = m
        for a in m.aliases:
            table[a] = m
    return table


_BY_ID = _index(MODELS)


def get_model(model_id: str, overrides: Mapping[str, ModelInfo] | None = None) -> ModelInfo | None:
    """Look a model up by id or alias; dated ids (``claude-x-20261001``) match their base id."""
    if overrides and model_id in overrides:
        return overrides[model_id]
    if model_id in _BY_ID:
        return _BY_ID[model_id]
    base, _, suffix = model_id.rpartition("-")
    if suffix.isdigit() and len(suffix) == 8 and base in _BY_ID:
        return _BY_ID[base]
    return None


def context_window_for(model_id: str, override: int | None = None,
                       models: Mapping[str, ModelInfo] | None = None) -> int:
    """The window to plan for: an explicit override, the user's table or the registry's figure,
    or 128,000."""
    if override:
        return override
    info = get_model(model_id, models)
    return info.context_window if info else DEFAULT_CONTEXT_WINDOW
