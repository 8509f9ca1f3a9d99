"""A ``%config AgentMagics.X = …`` value the magics refuse is not kept in the shell's config.

IPython's ``%config`` hands one ``Config`` to every configurable in turn, sorted by class name:
``AgentMagics`` refuses the value (its validators raise ``TraitError``), then the shell merges the
same ``Config`` into its own config all the same. So the refused value stayed there, and every later
``AgentMagics(shell=…)`` (``%reload_ext nbagent``) read it and failed to load. Here a refused name
is taken out of that ``Config`` before the shell merges it (and out of the shell's config, where an
earlier nbagent let it in), with a line naming it; the other names of the line still apply.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from traitlets import TraitError
from traitlets.config import Config

REFUSED = ("%config {names} refused, not kept: {why}. nbagent keeps its current value, and a later "
           "%reload_ext nbagent loads without it; set it again with an allowed value.")
MIN_SECRET_CHARS = 4
"""Shorter strings are left in a refusal (a profile's name, a word): none is a key or token."""
LOAD_REFUSED = ("nbagent: the shell's config held a value nbagent refuses ({names}: {why}); it was dropped "
                "and nbagent loaded with its current value. Set it again with %config and an allowed value.")


def load_or_refuse(magics: Any, load: Callable[[Config], None], cfg: Config, *, loading: bool) -> None:
    """Load ``cfg`` into ``magics`` with ``load`` (the Configurable's own); each name of the magics'
    section that it refuses is dropped from ``cfg`` and from the shell's config. At load (``loading``:
    ``%load_ext`` / ``%reload_ext``) said on stderr and the rest loaded; at ``%config`` raised as one
    ``TraitError`` line (the value is never echoed: an endpoint's literal key must not be shown)."""
    try:
        load(cfg)
        return
    except TraitError as exc:
        first = exc
    section = type(magics).__name__
    mine = cfg[section] if section in cfg else Config()
    refused: list[tuple[str, str]] = []
    for name in list(mine):
        try:
            load(Config({section: {name: mine[name]}}))
        except TraitError as exc:
            refused.append((f"{section}.{name}", scrubbed(str(exc), mine[name])))
            _drop(mine, name)
            shell_config = getattr(getattr(magics, "shell", None), "config", None)
            if isinstance(shell_config, Config) and section in shell_config:
                _drop(shell_config[section], name)
    if not refused:
        raise first
    names, why = ", ".join(n for n, _ in refused), "; ".join(w for _, w in refused)
    if loading:
        print(LOAD_REFUSED.format(names=names, why=why), file=sys.stderr)
        return
    raise TraitError(REFUSED.format(names=names, why=why))


class RefusesConfig:
    """Mixed into :class:`~nbagent.notebook.magics.AgentMagics` (before ``Magics``): a ``%config`` value
    it refuses is not kept in the shell's config, where it failed every later reload."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._config_loaded = True  # later loads are %config's: a refusal raises

    def _load_config(self, cfg: Any, section_names: Any = None, traits: Any = None) -> None:
        load = super()._load_config  # type: ignore[misc]  # the Configurable's, after this in the MRO
        load_or_refuse(self, lambda c: load(c, section_names, traits), cfg,
                       loading=not self.__dict__.get("_config_loaded", False))


def scrubbed(message: str, value: object) -> str:
    """``message`` without the text of ``value``: traitlets' own refusal quotes it ("expected an int,
    not the str 'sk-ant-…'"), and a key pasted into the wrong setting was printed, then saved with
    the cell's output."""
    for text in sorted(set(_texts(value)), key=len, reverse=True):
        message = message.replace(repr(text)[1:-1], "…").replace(text, "…")
    return message


def _texts(value: object) -> list[str]:
    """The strings in ``value`` (its items too), long enough to be a secret; not a dict's keys, the
    names nbagent's own refusals quote (``api_key``, a header's name: "the header 'X-Api-Key' …")."""
    if isinstance(value, str):
        return [value] if len(value) >= MIN_SECRET_CHARS else []
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [t for v in value for t in _texts(v)]
    return _texts(str(value)) if isinstance(value, bytes) else []


def _drop(section: Config, name: str) -> None:
    if name in section:
        del section[name]


__all__ = ["LOAD_REFUSED", "REFUSED", "RefusesConfig", "load_or_refuse", "scrubbed"]
