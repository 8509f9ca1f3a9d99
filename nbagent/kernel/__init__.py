"""The ``nbagent`` Jupyter kernel: an IPython kernel that loads nbagent and answers prompt clicks
on the shell-channel thread.

``NbAgentKernel`` is imported lazily, so ``python -m nbagent.kernel install`` does not import
ipykernel's kernel machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .kernel import NbAgentKernel

__all__ = ["NbAgentKernel", "install", "KERNEL_NAME"]

KERNEL_NAME = "nbagent"


def __getattr__(name: str) -> object:
    if name == "NbAgentKernel":
        from .kernel import NbAgentKernel

        return NbAgentKernel
    if name == "install":
        from .install import install

        return install
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
