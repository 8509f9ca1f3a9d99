"""What the model is told about the live kernel before each prompt (see docs/kernel-context.md).

:mod:`.build` ranks and budgets, :mod:`.protocol` describes one object (adapters, ``_repr_llm_``),
:mod:`.frames` holds the schemas of DataFrames, Series and arrays, :mod:`.figures` the figures
and displayed images, :mod:`.guard` the time limits, :mod:`.told` reads back what a turn told.

Imported at kernel start (the watchers are made at ``%load_ext``): the heavy parts load lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the lazy names are, for type checkers
    from .build import ContextRecord as ContextRecord
    from .build import KernelContext as KernelContext
    from .figures import DisplayedImages as DisplayedImages
    from .protocol import LLM_REPR as LLM_REPR
    from .protocol import register_llm_repr as register_llm_repr
    from .told import described_variables as described_variables
    from .told import kernel_context_text as kernel_context_text

_LAZY = {"KernelContext": "build", "ContextRecord": "build", "register_llm_repr": "protocol",
         "LLM_REPR": "protocol", "DisplayedImages": "figures", "described_variables": "told",
         "kernel_context_text": "told"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(name)


__all__ = sorted(_LAZY)
