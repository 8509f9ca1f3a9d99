"""The context policy: ordered layers that keep a conversation inside the window, as one setting.

Layers, cheapest first (the order they act in; truncation is always last and always holds):

``mask``      client-side observation masking: old tool results become a placeholder that keeps the
              ``tool_use``/``tool_result`` pair valid; the last ``keep`` results stay, tools in
              ``exclude`` stay, and it acts only when it clears at least ``clear`` tokens at once
              (clearing breaks the prompt cache from the first cleared block on, so it must pay).
``edit``      server-side context editing (``clear_tool_uses_20250919``, ``clear_thinking_20251015``
              first when the model thinks), on models that take it; ``inputs=1`` also clears the
              cleared tool uses' inputs (``clear_tool_inputs``), ``inputs=python,read_file`` only
              those tools' inputs, ``inputs=0`` (the API's default) none.
``summary``   summary compaction: one summary request once the previous request came within
              ``headroom`` tokens of the room left for output; after ``failures`` failures in a
              row it is switched off for the session (a circuit breaker).
``compact``   server compaction (``compact_20260112``) on models that take it.
``truncate``  Cline's deleted-range truncation (half, then quarter).

A policy is written ``LAYER[:key=value...]+LAYER...`` or as a preset name (:data:`PRESETS`), e.g.
``mask:keep=3:clear=10000+summary+truncate``. The default, ``layered`` (mask, then truncation),
is what ``bench/bench_context_policies.py`` measured cheapest on a long data-analysis session
while keeping at least 80% of the prompt read from the cache; server layers are opt-in because
they are beta and model-dependent.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Mapping, Union

from ..api_facts.context_edits import (
    CLEAR_THINKING,
    CLEAR_TOOL_USES,
    COMPACT,
    DEFAULT_CLEAR_KEEP,
    DEFAULT_CLEAR_TRIGGER,
    DEFAULT_COMPACT_TRIGGER,
    MIN_COMPACT_TRIGGER,
)

if TYPE_CHECKING:  # the kernel's start imports this module (the --context setting): types only
    from ..api_facts.context_edit_types import ClearToolUsesEditParam, ContextEdit, ContextManagementParam

LAYERS = ("mask", "edit", "summary", "compact", "truncate")
"""Every layer, in the order layers act."""
DEFAULT_POLICY = "layered"
PRESETS: dict[str, str] = {
    "layered": "mask+truncate",
    "cline": "truncate",
    "summary": "summary+truncate",
    "server": "edit+compact+truncate",
    "all": "mask+edit+summary+compact+truncate",
}
"""Named policies (``%%agent --context NAME``)."""


OptionValue = Union[int, bool, tuple[str, ...]]
"""The value of one layer option once read (a count, ``edit:inputs``'s flag or tool names, ``exclude``'s names)."""


ACCEPTED = (f"give a preset name ({', '.join(PRESETS)}), the one-line form LAYER[:key=value...]+LAYER "
            "(e.g. 'mask:keep=3+truncate'), or a mapping of layers to their options "
            "({'mask': {'keep': 3}, 'truncate': {}})")
"""The accepted forms, as every error about a policy's form says them."""


def _one_line(layers: Mapping[str, object]) -> str:
    """A mapping of layers to their options as the one-line form (then parsed, checked as any)."""
    if not layers:
        raise ContextPolicyError(f"an empty context policy; {ACCEPTED}")
    parts = []
    for layer, options in layers.items():
        if options is None or options is True:
            options = {}
        if not isinstance(layer, str) or not isinstance(options, Mapping):
            raise ContextPolicyError(f"context layer {layer!r} given {options!r}: each layer takes a mapping of its "
                                     f"options; {ACCEPTED}")
        parts.append(":".join([layer, *(f"{_plain(layer, key, key)}={_option_text(layer, key, value)}"
                                        for key, value in options.items())]))
    return "+".join(parts)


def _option_text(layer: str, key: object, value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return ",".join(_plain(layer, key, str(v), ",") for v in value)
    return _plain(layer, key, str(value))


SEPARATORS = "+:="
"""What the one-line form splits on: a mapping's key or value holding one would be read as more
layers or options (``{"mask": {"exclude": "a:keep=0"}}`` set keep=0, ``"x+summary"`` added a layer)."""


def _plain(layer: str, key: object, text: str, also: str = "") -> str:
    if any(c in text for c in SEPARATORS + also):
        raise ContextPolicyError(f"context layer {layer!r} given {key}={text!r}: an option's name or value "
                                 f"holds none of {' '.join(SEPARATORS + also)}; {ACCEPTED}")
    return text


class ContextPolicyError(ValueError):
    """A context policy that cannot be read; the message names the part and what is accepted."""


@dataclass(frozen=True)
class LayerOptions:
    """Every layer's knobs, with the defaults the bench measured (see the module docstring)."""

    keep: int = 3
    """mask: tool results kept whole (the newest). 3, as the API's own ``clear_tool_uses`` default;
    on the bench's session keep 2 costs 1% less and keep 5 3% more, and keep 1 leaves no room for
    the cache anchor (the first result still sent whole is among the last three messages), so
    every masking rewrites the whole prompt (0.88× Cline at clear 10k)."""
    clear: int = 10_000
    """mask: the fewest tokens one masking clears (else it waits: each masking rewrites the cache
    from the first cleared result on). Measured on the bench's session with the cache anchors
    (a one-hour breakpoint where the next masking starts, so a masking rewrites only what follows
    it), × Cline's truncation: 0.49 at 5k, 0.51 at 10k, 0.55 at 20k, 0.58 at 30k, 0.60 at 40k.
    10k is within 3% of the cheapest while masking half as often as 5k, which matters when results
    are smaller than the bench's: every masking is a cache rewrite."""
    trigger: int = 0
    """mask: act only once the previous request had this many tokens (0: as soon as ``clear`` is met)."""
    exclude: tuple[str, ...] = ()
    """mask and edit: tools whose results are never cleared."""
    edit_trigger: int = DEFAULT_CLEAR_TRIGGER
    edit_keep: int = DEFAULT_CLEAR_KEEP
    edit_clear: int = 20_000
    edit_inputs: bool | tuple[str, ...] = False
    """edit: ``clear_tool_inputs``: also clear the inputs of the tool uses it clears (True), only
    those of these tools (names), or none (False, the API's default: not sent)."""
    headroom: int = 13_000
    """summary: summarise once the previous request reached window − max_tokens − headroom (Claude
    Code's rule, about 83% of a 200k window)."""
    summary_tokens: int = 4_000
    """summary: the bound on the summary's size (its request's ``max_tokens``)."""
    failures: int = 3
    """summary: failures in a row that switch it off for the session."""
    compact_trigger: int = DEFAULT_COMPACT_TRIGGER


_KEYS: dict[str, dict[str, str]] = {
    "mask": {"keep": "keep", "clear": "clear", "trigger": "trigger", "exclude": "exclude"},
    "edit": {"trigger": "edit_trigger", "keep": "edit_keep", "clear": "edit_clear", "exclude": "exclude",
             "inputs": "edit_inputs"},
    "summary": {"headroom": "headroom", "tokens": "summary_tokens", "failures": "failures"},
    "compact": {"trigger": "compact_trigger"},
    "truncate": {},
}


@dataclass(frozen=True)
class ContextPolicy:
    """Ordered layers and their options; :meth:`parse` reads the one-line form."""

    layers: tuple[str, ...] = ("mask", "truncate")
    options: LayerOptions = field(default_factory=LayerOptions)
    name: str = DEFAULT_POLICY

    @classmethod
    def parse(cls, spec: "str | Mapping[str, object] | ContextPolicy | None") -> "ContextPolicy":
        """A policy from its name, its one-line form, or a mapping of layers to their options
        (``{"mask": {"keep": 2}, "summary": {}}``, read as ``mask:keep=2+summary``); None: the
        default. Anything else is a :class:`ContextPolicyError` naming the accepted forms."""
        if isinstance(spec, ContextPolicy):
            return spec
        if isinstance(spec, Mapping):
            spec = _one_line(spec)
        elif spec is not None and not isinstance(spec, str):
            raise ContextPolicyError(f"a context policy of type {type(spec).__name__}; {ACCEPTED}")
        text = (spec if spec is not None else DEFAULT_POLICY).strip()
        if not text:
            raise ContextPolicyError(f"an empty context policy; use one of {', '.join(PRESETS)} or LAYER+LAYER")
        expanded = PRESETS.get(text, text)
        layers: list[str] = []
        written: dict[str, str] = {}  # layer -> its part as typed
        # Any: each option has its own type, and dataclasses.replace checks keyword by keyword.
        changes: dict[str, Any] = {}
        for part in expanded.split("+"):
            layer, *pairs = [p.strip() for p in part.split(":")]
            if layer not in LAYERS:
                raise ContextPolicyError(f"unknown context layer {layer!r} in {text!r}; layers are "
                                         f"{', '.join(LAYERS)} and presets {', '.join(PRESETS)}")
            if layer in layers:
                raise ContextPolicyError(f"context layer {layer!r} given twice in {text!r}")
            layers.append(layer)
            written[layer] = ":".join([layer, *pairs])
            changes.update(_options(layer, pairs))
        if "truncate" not in layers:
            layers.append("truncate")  # the last resort always holds
        ordered = tuple(sorted(layers, key=LAYERS.index))
        # Named in the order the layers act (``truncate+mask`` runs, and is shown, as ``mask+truncate``)
        name = text if text in PRESETS else "+".join(written[layer] for layer in ordered if layer in written)
        return cls(layers=ordered, options=_checked(replace(LayerOptions(), **changes)), name=name)

    def has(self, layer: str) -> bool:
        """Whether ``layer`` is part of this policy."""
        return layer in self.layers

    def __str__(self) -> str:
        return self.name

    def server_edits(self, *, thinks: bool) -> ContextManagementParam | None:
        """The ``context_management`` parameter for the server layers (None: no server layer)."""
        o = self.options
        edits: list[ContextEdit] = []
        if self.has("edit"):
            if thinks:  # listed first when combined, as the API requires
                edits.append({"type": CLEAR_THINKING, "keep": {"type": "thinking_turns", "value": 1}})
            clear: ClearToolUsesEditParam = {
                "type": CLEAR_TOOL_USES, "trigger": {"type": "input_tokens", "value": o.edit_trigger},
                "keep": {"type": "tool_uses", "value": o.edit_keep},
                "clear_at_least": {"type": "input_tokens", "value": o.edit_clear}}
            if o.exclude:
                clear["exclude_tools"] = list(o.exclude)
            if o.edit_inputs is True:
                clear["clear_tool_inputs"] = True
            elif o.edit_inputs:  # False is the API's default: left out, so requests stay as before
                clear["clear_tool_inputs"] = list(o.edit_inputs)
            edits.append(clear)
        if self.has("compact"):
            edits.append({"type": COMPACT, "trigger": {"type": "input_tokens", "value": o.compact_trigger}})
        return {"edits": edits} if edits else None


def _options(layer: str, pairs: list[str]) -> Mapping[str, OptionValue]:
    out: dict[str, OptionValue] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        known = _KEYS[layer]
        if not sep or key not in known:
            accepted = ", ".join(f"{k}=…" for k in known) or "no options"
            raise ContextPolicyError(f"context layer {layer!r} takes {accepted}; got {pair!r}")
        target = known[key]
        if target in out:  # "mask:keep=3:keep=0" read as keep=0, the policy's name saying both
            raise ContextPolicyError(f"context option {layer}:{key} given twice")
        if target == "exclude":
            out[target] = tuple(t for t in value.split(",") if t)  # "exclude=python" or several
            continue
        if target == "edit_inputs":
            out[target] = _inputs(value)
            continue
        try:
            out[target] = int(value.replace("_", "").replace("k", "000"))
        except ValueError:
            raise ContextPolicyError(f"{layer}:{key} must be a whole number, got {value!r}") from None
    return out


def _inputs(value: str) -> bool | tuple[str, ...]:
    """``edit:inputs=``: 1 (every cleared tool use's input), 0 (none) or tool names; true/false
    and yes/no read as 1/0, never as a tool of that name."""
    flag = value.strip().lower()
    if flag in ("0", "1", "true", "false", "yes", "no"):
        return flag in ("1", "true", "yes")
    names = tuple(t for t in value.split(",") if t)
    if not names:
        raise ContextPolicyError("edit:inputs takes 1 (clear the cleared tool uses' inputs too), 0 (keep them) "
                                 f"or tool names such as inputs=python,read_file; got {value!r}")
    return names


def _checked(o: LayerOptions) -> LayerOptions:
    for name in ("keep", "clear", "trigger", "edit_trigger", "edit_keep", "edit_clear", "headroom"):
        if getattr(o, name) < 0:
            raise ContextPolicyError(f"context option {name} must be >= 0, got {getattr(o, name)}")
    if o.summary_tokens < 1 or o.failures < 1:
        raise ContextPolicyError("summary:tokens and summary:failures must be >= 1")
    if o.compact_trigger < MIN_COMPACT_TRIGGER:
        raise ContextPolicyError(f"compact:trigger must be >= {MIN_COMPACT_TRIGGER:,} (the API's minimum), "
                                 f"got {o.compact_trigger:,}")
    return o


__all__ = ["ContextPolicy", "ContextPolicyError", "DEFAULT_POLICY", "LAYERS", "LayerOptions", "PRESETS"]
