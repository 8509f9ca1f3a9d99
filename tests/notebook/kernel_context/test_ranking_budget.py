"""Ranking, not the first 50: what the prompt, the agent's code or the recent cells name comes
first and in full; the rest in a line each, within the token budget; what did not fit is named."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from nbagent.engine.api_facts.tokens import count_text_tokens
from tests.notebook.kernel_context.support import block_of, context_text, shell_with


def frame(cols: int = 50, rows: int = 50) -> pd.DataFrame:
    return pd.DataFrame(np.ones((rows, cols)), columns=[f"col{i}" for i in range(cols)])


def variable_names(text: str) -> list[str]:
    return re.findall(r"^  - (\w+): ", text, flags=re.MULTILINE)


def test_a_variable_named_in_backticks_comes_first_in_full_even_after_100_others() -> None:
    ns = {f"v{i}": i for i in range(100)} | {"target": frame(5)}
    text, _ = context_text(shell_with(**ns), "why does `target` have 5 columns?")
    assert variable_names(text)[0] == "target" and "col4: float64, 0 missing" in block_of(text, "target")


@pytest.mark.parametrize("prompt, code, inputs", [
    ("plot revenue by month", (), ()),  # a word of the prompt that is a name in the namespace
    ("go on", ("print(revenue.describe())",), ()),  # the agent's own code
    ("go on", (), ("revenue.groupby('m').sum()",)),  # a recent cell
])
def test_names_from_the_prompt_the_agent_code_and_recent_cells_are_in_full(prompt: str, code: tuple[str, ...],
                                                                            inputs: tuple[str, ...]) -> None:
    ns = {f"f{i}": frame() for i in range(5)} | {"revenue": frame(3)}
    text, ctx = context_text(shell_with(inputs, **ns), prompt, code=code)
    assert variable_names(text)[0] == "revenue" and "col2: float64" in block_of(text, "revenue")
    assert ctx.last is not None and ctx.last.full == ["revenue"] and "\n" not in block_of(text, "f0")


def test_the_prompt_outranks_the_agent_code_which_outranks_recent_cells() -> None:
    ns = {"a": frame(2), "b": frame(2), "c": frame(2), "d": frame(2)}
    text, _ = context_text(shell_with(("c.sum()",), **ns), "and `b`?", code=("a.head()",))
    assert variable_names(text) == ["b", "a", "c", "d"]


def test_the_budget_holds_and_what_it_left_out_is_named_for_the_model_to_ask() -> None:
    ns = {f"frame{i}": frame() for i in range(40)}
    text, ctx = context_text(shell_with(**ns), "describe `frame39`", budget=1_000)
    assert count_text_tokens(text) <= 1_000
    assert variable_names(text)[0] == "frame39" and ctx.last is not None and ctx.last.left_out
    left = next(line for line in text.splitlines() if line.startswith("Left out"))
    assert "ask the python tool" in left and all(name in left for name in ctx.last.left_out[:10])
    assert not set(ctx.last.left_out) & set(variable_names(text))


def test_a_namespace_of_100000_names_gives_a_bounded_context_with_a_count_of_the_rest() -> None:
    ns = {f"n{i}": i for i in range(100_000)}
    text, ctx = context_text(shell_with(**ns), "what is `n99999`?")
    assert len(variable_names(text)) <= 50 and count_text_tokens(text) <= 3_000
    assert re.search(r"and [\d,]+ more", text) and ctx.last is not None and ctx.last.seconds < 5


async def test_a_secret_in_a_recent_cell_is_redacted_before_the_model_sees_it(tmp_path, monkeypatch) -> None:
    from nbagent.notebook.kernel_context import KernelContext
    from nbagent.providers.simulated import SimulatedAPI, text_reply
    from tests.engine.loop.test_query_support import make_engine, run

    monkeypatch.setenv("MY_TOKEN", "tok-1234567890-secret")
    api = SimulatedAPI(lambda body: text_reply("ok"))
    shell = shell_with(("key = 'tok-1234567890-secret'",), key="tok-1234567890-secret")
    engine = make_engine(api, tmp_path, kernel_facts=KernelContext(shell), secret_env=("MY_TOKEN",))
    await run(engine, "what is `key`?")
    body = str(api.requests[-1].body["messages"])
    assert "tok-1234567890-secret" not in body and "[redacted]" in body and "key: str" in body


def test_long_recent_cells_take_at_most_half_the_budget_oldest_first() -> None:
    cells = tuple(f"x{i} = '{'a' * 480}'" for i in range(5))
    text, _ = context_text(shell_with(cells, df=frame(3)), "`df`?", budget=600)
    assert count_text_tokens(text) <= 600 and "x4 = " in text and "x0 = " not in text
    assert "col2: float64" in text


def test_a_named_frame_the_budget_cannot_hold_in_full_still_gets_its_line() -> None:
    ns = {"big": frame(50), **{f"v{i}": i for i in range(5)}}
    cells = tuple(f"x{i} = '{'a' * 480}'" for i in range(5))  # recent cells take their half of the budget
    text, ctx = context_text(shell_with(cells, **ns), "what is in `big`?", budget=600)
    assert "\n" not in block_of(text, "big") and "columns ['col0'" in block_of(text, "big")
    assert ctx.last is not None and "big" in ctx.last.brief


def test_a_variable_left_out_later_is_not_told_as_removed() -> None:
    from nbagent.engine.loop.facts import FactsFocus, FactsSnapshot
    from nbagent.notebook.kernel_context import KernelContext

    shell = shell_with(**{f"v{i}": i for i in range(30)})
    ctx = KernelContext(shell)
    first = FactsSnapshot.of(*ctx.focused(FactsFocus("", (), 3_000)))
    later = FactsSnapshot.of(*ctx.focused(FactsFocus("", (), 150)))
    diff = later.diff_text(first) or ""
    assert "Removed variables" not in diff and "Left out" in diff
    assert ctx.last is not None and "v29" in ctx.last.left_out and "v29" in later.left_out_names


def test_the_budget_setting_is_checked_and_reaches_a_running_session() -> None:
    from nbagent.engine.contracts.config import DEFAULT_KERNEL_CONTEXT_TOKENS, SessionConfig

    assert SessionConfig().kernel_context_tokens == DEFAULT_KERNEL_CONTEXT_TOKENS == 3_000
    with pytest.raises(ValueError, match="kernel_context_tokens must be a positive integer"):
        SessionConfig(kernel_context_tokens=0)
    from nbagent.notebook.settings import LIVE

    assert LIVE["kernel_context_tokens"] == "kernel_context_tokens"
