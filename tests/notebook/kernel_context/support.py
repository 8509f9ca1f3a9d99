"""A namespace the kernel context reads, without a kernel: what the builder needs of a shell."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from nbagent.engine.loop.facts import FactsFocus, FactsSnapshot
from nbagent.notebook.kernel_context import KernelContext


def shell_with(inputs: tuple[str, ...] = (), /, **variables: Any) -> Any:
    # ``inputs`` is positional-only: a namespace spread as ``**ns`` fills only the variables.
    return SimpleNamespace(user_ns={"In": ["", *inputs], **variables}, user_ns_hidden={}, execution_count=1)


def context_text(shell: Any, prompt: str = "", *, budget: int = 3_000, code: tuple[str, ...] = (),
                 images: Any = None) -> tuple[str, KernelContext]:
    """The kernel context a prompt gets, as the model reads it, and the builder (its ``last``)."""
    ctx = KernelContext(shell, None, images)
    state = ctx.focused(FactsFocus(prompt, code, budget))
    return FactsSnapshot.of(*state).full_text(), ctx


def block_of(text: str, name: str) -> str:
    """The lines describing variable ``name`` (its line and the indented ones under it)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  - {name}: "))
    end = next((j for j in range(start + 1, len(lines)) if not lines[j].startswith("    ")), len(lines))
    return "\n".join(lines[start:end])
