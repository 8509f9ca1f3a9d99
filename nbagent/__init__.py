"""nbagent: an LLM coding/data agent loop inside Jupyter.

``%load_ext nbagent`` registers the ``%%agent`` / ``%agent`` magics; ``nbagent.Agent`` drives the
same loop from a plain script. Importing nbagent imports neither IPython nor ipywidgets.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Agent": "nbagent.agent", "SessionConfig": "nbagent.engine.contracts.config", "RunLimits": "nbagent.engine.contracts.config",
    "Session": "nbagent.engine.state.session", "Asker": "nbagent.engine.contracts.permissions",
    "ToolSource": "nbagent.engine.contracts.tool_api", "Allow": "nbagent.engine.contracts.permissions",
    "Deny": "nbagent.engine.contracts.permissions", "RewriteInput": "nbagent.engine.contracts.hooks",
    "StructuredOutputError": "nbagent.engine.loop.structured",
}


def __getattr__(name: str) -> Any:
    # Lazy, so that importing nbagent.engine does not pull in the providers and the SDK.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'nbagent' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext nbagent``: the magics, the ``%%agent`` cell transformer, traitlets config."""
    from .notebook.fast_path import install_on_running_kernel
    from .notebook.magics import load

    load(ipython)
    install_on_running_kernel()  # Allow, Deny and Stop act while the agent's code blocks the kernel


def unload_ipython_extension(ipython: Any) -> None:
    from .notebook.magics import unload

    unload(ipython)


def session() -> Any:
    """The notebook's active agent session (``turns_df()``, ``cost``, ``rollback(turn)``, …)."""
    from .notebook.magics import active_magics

    return active_magics().session()


def explore(**kwargs: Any) -> Any:
    """The truncation explorer widget (see ``%agent explore``)."""
    from .explorer import explore as _explore

    return _explore(**kwargs)


__all__ = [*_LAZY, "load_ipython_extension", "session", "explore", "__version__"]
