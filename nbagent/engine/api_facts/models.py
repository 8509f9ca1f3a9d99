"""Model registry: windows, output limits, prices and request capabilities, as data.

Prices are USD per million tokens as Anthropic publishes them; docs/models.md names the page each
row came from and the date it was read (2026-11-29). Users on proxies or special plans add or
override rows with ``prices=`` (a mapping, or a TOML/JSON file read by :func:`load_models`).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

CHECKED = "2026-11-29"
"""When the built-in table was last checked against Anthropic's pages."""
WEB_SEARCH_USD_PER_1K = 10.0
"""Web search is billed per search on top of tokens ($10 per 1,000 searches)."""


@dataclass(frozen=True)
class PriceTier:
    """USD per million tokens for one prompt-size tier."""

    input: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    output: float


@dataclass(frozen=True)
class Capabilities:
    """What a model accepts in a request. The API answers 400 to a parameter a model refuses, so
    requests are built from this (and the simulator refuses from it)."""

    thinking_budget: bool = True
    """Takes ``thinking: {type: enabled, budget_tokens: N}``."""
    adaptive_thinking: bool = False
    """Takes ``thinking: {type: adaptive}`` (and thinks by default when it is the only mode)."""
    thinking_always_on: bool = False
    """Refuses ``thinking: {type: disabled}``."""
    effort_levels: tuple[str, ...] = ()
    """Values of ``output_config.effort`` it takes (empty: no effort control)."""
    sampling: bool = True
    """Takes non-default ``temperature``/``top_p``/``top_k``."""
    prefill: bool = True
    """Takes a final assistant message (prefill)."""
    forced_tool_choice: bool = True
    """Takes ``tool_choice`` of type ``any``/``tool``."""
    context_editing: bool = True
    """Takes ``context_management`` edits ``clear_tool_uses_20250919`` / ``clear_thinking_20251015``
    (beta ``context-management-2025-06-27``; every current model)."""
    server_compaction: bool = True
    """Takes the ``compact_20260112`` edit (beta ``compact-2026-01-12``; 4.6 models and later)."""

    @property
    def thinks_by_default(self) -> bool:
        """Adaptive-only models think without being asked."""
        return self.adaptive_thinking and not self.thinking_budget


EFFORT_5X = ("low", "medium", "high", "xhigh", "max")
_EXTENDED = Capabilities(server_compaction=False)  # 4.5-era: budgets only, no server compaction
_BUDGET_AND_ADAPTIVE = Capabilities(adaptive_thinking=True, effort_levels=("low", "medium", "high", "max"))
_ADAPTIVE = Capabilities(thinking_budget=False, adaptive_thinking=True, effort_levels=EFFORT_5X, sampling=False)
_ADAPTIVE_5_5 = dataclasses.replace(_ADAPTIVE, prefill=False, forced_tool_choice=False)
_ALWAYS_ON = dataclasses.replace(_ADAPTIVE_5_5, thinking_always_on=True)


@dataclass(frozen=True)
class ModelInfo:
    """One model's window, output limit, prices and request capabilities.

    ``long_prompt`` applies when the request's total prompt tokens exceed ``long_prompt_threshold``.
    """

    id: str
    context_window: int
    max_output: int
    prices: PriceTier
    long_prompt: PriceTier | None = None
    long_prompt_threshold: int | None = None
    aliases: tuple[str, ...] = field(default_factory=tuple)
    capabilities: Capabilities = field(default_factory=Capabilities)
    web_search_usd_per_1k: float = WEB_SEARCH_USD_PER_1K

    def tier_for(self, prompt_tokens: int) -> PriceTier:
        """The price tier that applies to a request with ``prompt_tokens`` prompt tokens."""
        if self.long_prompt is not None and self.long_prompt_threshold is not None:
            if prompt_tokens > self.long_prompt_threshold:
                return self.long_prompt
        return self.prices

    @property
    def family(self) -> str:
        """``opus``, ``sonnet``, ``haiku``, ``fable``... (the word after ``claude-``)."""
        return family_of(self.id)


def _p(inp: float, w5: float, w1h: float, read: float, out: float) -> PriceTier:
    return PriceTier(inp, w5, w1h, read, out)


_OPUS_5 = _p(5, 6.25, 10, 0.50, 25)
_SONNET_4 = _p(3, 3.75, 6, 0.30, 15)
_M = 1_000_000

MODELS: tuple[ModelInfo, ...] = (
    ModelInfo("claude-fable-5-2", _M, 128_000, _p(8, 10, 16, 0.20, 40), capabilities=_ALWAYS_ON),
    ModelInfo("claude-fable-5-1", _M, 128_000, _p(10, 12.50, 20, 0.25, 50), capabilities=_ALWAYS_ON),
    ModelInfo("claude-fable-5", _M, 128_000, _p(10, 12.50, 20, 1.00, 50), capabilities=_ALWAYS_ON),
    ModelInfo("claude-opus-5-5", _M, 128_000, _p(4, 5, 8, 0.20, 20), capabilities=_ALWAYS_ON),
    ModelInfo("claude-opus-5", _M, 128_000, _OPUS_5, capabilities=dataclasses.replace(_ADAPTIVE, prefill=False)),
    ModelInfo("claude-opus-4-8", _M, 128_000, _OPUS_5, capabilities=_ADAPTIVE),
    ModelInfo("claude-opus-4-7", _M, 128_000, _OPUS_5, capabilities=_ADAPTIVE),
    ModelInfo("claude-opus-4-6", _M, 128_000, _OPUS_5, capabilities=_BUDGET_AND_ADAPTIVE),
    ModelInfo("claude-opus-4-5", 200_000, 64_000, _OPUS_5,
              capabilities=Capabilities(effort_levels=("low", "medium", "high"), server_compaction=False)),
    ModelInfo("claude-sonnet-5-5", _M, 128_000, _p(2, 2.50, 4, 0.10, 10), capabilities=_ALWAYS_ON),
    ModelInfo("claude-sonnet-5", _M, 128_000, _p(2, 2.50, 4, 0.20, 10), capabilities=_ADAPTIVE),
    ModelInfo("claude-sonnet-4-6", _M, 64_000, _SONNET_4, capabilities=_BUDGET_AND_ADAPTIVE),
    ModelInfo("claude-sonnet-4-5", 200_000, 64_000, _SONNET_4, capabilities=_EXTENDED),
    ModelInfo(
        "claude-haiku-5-5", _M, 128_000,
        _p(0.10, 0.125, 0.20, 0.01, 0.50),
        long_prompt=_p(0.50, 0.625, 1.00, 0.05, 2.50),
        long_prompt_threshold=100_000,
        capabilities=_ADAPTIVE_5_5,
    ),
    ModelInfo("claude-haiku-4-5", 200_000, 64_000, _p(1, 1.25, 2, 0.10, 5), capabilities=_EXTENDED),
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


def _base_id(model_id: str) -> str:
    base, _, suffix = model_id.rpartition("-")
    return base if suffix.isdigit() and len(suffix) == 8 else model_id


def get_model(model_id: str, overrides: Mapping[str, ModelInfo] | None = None) -> ModelInfo | None:
    """Look a model up by id or alias; dated ids (``claude-x-20261001``) match their base id.
    A user's row (``overrides``) wins over the built-in one."""
    if overrides and model_id in overrides:
        return overrides[model_id]
    info = _BY_ID.get(model_id)
    if info is not None:  # looked up several times a request: the base id only when needed
        return info
    base = _base_id(model_id)
    if base == model_id:
        return None
    if overrides and base in overrides:
        return overrides[base]
    return _BY_ID.get(base)


def context_window_for(model_id: str, override: int | None = None,
                       models: Mapping[str, ModelInfo] | None = None,
                       known: Mapping[str, int] | None = None) -> int:
    """The window to plan for: an explicit override, the user's table or the registry's figure,
    a window an endpoint reported (``known``), or 128,000."""
    if override:
        return override
    info = get_model(model_id, models)
    if info is not None:
        return info.context_window
    return (known or {}).get(model_id, DEFAULT_CONTEXT_WINDOW)


def is_priced(model_id: str, models: Mapping[str, ModelInfo] | None = None) -> bool:
    """Whether nbagent knows ``model_id``'s prices (built-in table or the user's rows)."""
    return get_model(model_id, models) is not None


def has_stand_in_price(model_id: str, models: Mapping[str, ModelInfo] | None = None) -> bool:
    """Whether a dollar budget can be enforced for ``model_id``: it is priced, or it is an unknown
    Claude model whose family's highest price stands in. Any other model (a local or gateway model)
    has no honest price, so a dollar budget on it is refused rather than counted at Claude's."""
    return is_priced(model_id, models) or bool(family_of(model_id)) and any(
        m.family == family_of(model_id) for m in MODELS)


def family_of(model_id: str) -> str:
    """The family word of a Claude model id (``claude-opus-4-1-20250805`` -> ``opus``), else ''."""
    parts = model_id.split("-")
    return parts[1] if len(parts) > 1 and parts[0] == "claude" else ""


def most_expensive_of_family(model_id: str) -> ModelInfo:
    """The priciest known model of ``model_id``'s family (all models when the family is unknown):
    the conservative price a budget is enforced at when a model has no prices."""
    family = family_of(model_id)
    pool = [m for m in MODELS if m.family == family] or list(MODELS)
    return max(pool, key=lambda m: (m.prices.output, m.prices.input))


class ModelTableError(ValueError):
    """A user's model table (``prices=`` or its file) could not be read."""


def load_models(source: str | Path | Mapping[str, object]) -> dict[str, ModelInfo]:
    """User rows from a TOML/JSON file or a mapping, keyed by model id.

    Each row: ``context_window``, ``max_output``, ``input``, ``output`` and optionally
    ``cache_write_5m``, ``cache_write_1h``, ``cache_read`` (defaults: 1.25x, 2x, 0.1x input),
    ``web_search_usd_per_1k``, and ``base`` (a built-in id whose capabilities it shares)::

        [models."my-proxy-sonnet"]
        base = "claude-sonnet-5-5"
        context_window = 1000000
        max_output = 128000
        input = 2.2
        output = 11
    """
    raw = _read_table(source) if isinstance(source, (str, Path)) else dict(source)
    rows = raw.get("models", raw)
    if not isinstance(rows, Mapping):
        raise ModelTableError(f"the model table's 'models' must be a table of rows by model id, got {rows!r:.80}")
    out: dict[str, ModelInfo] = {}
    for model_id, row in rows.items():
        if isinstance(row, ModelInfo):
            out[model_id] = row
        elif isinstance(row, Mapping):
            out[model_id] = _row(str(model_id), row)
        else:
            raise ModelTableError(f"model {model_id!r}: a row is a table of prices and sizes, got {row!r:.80}")
    return out


def _read_table(path: str | Path) -> dict[str, object]:
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
        if p.suffix == ".json":
            table: dict[str, object] = json.loads(text)  # untyped; _row checks each row
            return table
        try:  # tomllib is in the standard library from Python 3.11 on
            import tomllib
        except ModuleNotFoundError as exc:
            raise ModelTableError(f"reading {p} needs Python 3.11+ (tomllib); use a .json table") from exc
        parsed: dict[str, object] = tomllib.loads(text)
        return parsed
    except (OSError, ValueError) as exc:
        raise ModelTableError(f"cannot read the model table {p}: {exc}") from exc


def _number(row: Mapping[str, object], key: str, default: float | None = None) -> float:
    """The number at ``key`` (``default`` when absent; KeyError without one, TypeError if not a number)."""
    value = row[key] if default is None else row.get(key, default)
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and number >= 0:  # "nan": no cost ever reached a budget; -1 subtracted spend
            return number
    raise TypeError(f"{key} is not a number of 0 or more")


def _row(model_id: str, row: Mapping[str, object]) -> ModelInfo:
    base = get_model(str(row.get("base", model_id)))
    try:
        inp, out = _number(row, "input"), _number(row, "output")
        tier = PriceTier(inp, _number(row, "cache_write_5m", inp * 1.25), _number(row, "cache_write_1h", inp * 2),
                         _number(row, "cache_read", inp * 0.1), out)
        return ModelInfo(
            model_id, int(_number(row, "context_window", base.context_window if base else DEFAULT_CONTEXT_WINDOW)),
            int(_number(row, "max_output", base.max_output if base else 64_000)), tier,
            capabilities=base.capabilities if base else Capabilities(),
            web_search_usd_per_1k=_number(row, "web_search_usd_per_1k", WEB_SEARCH_USD_PER_1K))
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelTableError(f"model {model_id!r}: every row needs numeric input and output prices "
                              f"of 0 or more (USD per million tokens); got {dict(row)!r}") from exc
