"""A secret that the kernel facts cut short (a long ``_repr_llm_``, a failed cell's long source)
is redacted up to the cut: each cut is marked where it falls, so no head of it reaches the model."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from nbagent.engine.loop.facts import FactsFocus, FactsSnapshot
from nbagent.engine.loop.sanitize import REDACTED, Sanitizer
from nbagent.notebook.kernel_context import KernelContext
from nbagent.notebook.kernel_context.protocol import MAX_REPR_CHARS
from nbagent.notebook.session import LastError
from tests.notebook.kernel_context.support import shell_with

TOKEN = "gw_live_4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"  # an endpoint token: 40 characters, no known shape


class Client:
    """A library object describing itself, its token straddling the 4,000-character cut."""

    def _repr_llm_(self) -> str:
        return "Client config: " + "x" * (MAX_REPR_CHARS - 15 - 36) + TOKEN


def test_a_secret_cut_by_the_repr_llm_limit_is_redacted_in_the_facts() -> None:
    sanitizer = Sanitizer((TOKEN,))
    context = KernelContext(shell_with(client=Client()), None, None)
    state = sanitizer.strings(context.focused(FactsFocus("`client`", (), 3_000)))
    text = FactsSnapshot.of(*state).full_text()
    assert "Client config" in text and f"{REDACTED}…" in text
    assert TOKEN[:16] not in text


def test_a_secret_cut_with_a_failed_cells_long_source_is_redacted() -> None:
    errors = LastError(None)
    source = "cfg = '" + "y" * (1_000 - 7 - 30) + TOKEN + "'\nraise RuntimeError('boom')"
    errors._after_cell(cast(Any, SimpleNamespace(error_in_exec=RuntimeError("boom"), execution_count=3,
                                       info=SimpleNamespace(raw_cell=source))))
    assert errors.text is not None and TOKEN[:30] + "…" in errors.text  # the cut is marked where it falls
    shown = Sanitizer((TOKEN,)).redact(errors.text)
    assert "raised RuntimeError: boom" in shown and TOKEN[:16] not in shown


def _facts_of(secret: str, **variables: object) -> str:
    sanitizer = Sanitizer((secret,))
    context = KernelContext(shell_with(**variables), None, None)
    names = " ".join(f"`{n}`" for n in variables)
    return sanitizer.redact(FactsSnapshot.of(*sanitizer.strings(context.focused(FactsFocus(names, (), 6_000)))).full_text())


def test_a_secret_cut_by_a_description_lines_width_is_redacted() -> None:
    """A column's levels line (and a sample row) is cut at 240 characters, then joined with the next
    line before the boundary redacts it: cut bare, a 30-character token's first 28 characters went to
    the model (attacker pass 10). Each cut line (levels, sample rows, polars' too) now ends with ``…``."""
    import pandas as pd

    token = "Qx7Lm2Vb9Rt4Wz8Kd3Np6Hs1Jc5Fg0"
    levels = [f"v{i:02d}-{'a' * 34}" for i in range(4)] + [token] + [f"zzz-{i}-{'b' * 30}" for i in range(5)]
    frame = pd.DataFrame({"token_col": levels * 3, "n": range(30)})
    text = _facts_of(token, frame=frame)
    assert "token_col" in text and "…" in text
    assert not any(token[i:i + 12] in text for i in range(len(token) - 11)), text
