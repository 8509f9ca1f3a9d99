"""The offline model answers a question about an object the kernel context describes by its
``_repr_llm_`` from that description, as a model reading the facts would, instead of running the
name and quoting its default repr (``<__main__.Experiment at 0x…>``)."""

from __future__ import annotations

from nbagent.providers.simulated.brain import DemoBrain
from tests.notebook.kernel_context.support import context_text, shell_with

PYTHON = {"name": "python", "description": "run code", "input_schema": {"type": "object", "properties": {
    "code": {"type": "string"}}, "required": ["code"]}}


class Experiment:
    def _repr_llm_(self) -> str:
        return "Experiment with 12 runs\nbest loss 0.31 at run 7"


def _reply_to(prompt: str) -> list[object]:
    facts, _ = context_text(shell_with(exp=Experiment()), prompt)
    request = {"model": "claude-sonnet-5-5", "max_tokens": 1000, "tools": [PYTHON], "messages": [
        {"role": "user", "content": [{"type": "text", "text": prompt}, {"type": "text", "text": facts}]}]}
    return list(DemoBrain()(request).content)  # type: ignore[arg-type]


def test_a_question_about_an_object_is_answered_from_its_llm_repr() -> None:
    # before (nb27): it ran `exp` and answered with "<__main__.Experiment at 0x7f04…>"
    blocks = _reply_to("what is `exp`'s best loss?")
    text = " ".join(str(getattr(b, "text", "")) for b in blocks)
    assert not any(getattr(b, "name", None) == "python" for b in blocks), blocks
    assert "best loss 0.31 at run 7" in text and "Experiment with 12 runs" in text, text


def test_asking_to_show_the_object_still_runs_it() -> None:
    blocks = _reply_to("show `exp`")
    assert any(getattr(b, "name", None) == "python" for b in blocks), blocks


def test_a_backticked_column_of_a_listed_frame_is_not_run_as_a_variable() -> None:
    # before (nb27): "the total of `units` in `sales`" ran `units.dtypes` and `sum(units)` (two
    # NameErrors) before `sales["units"].sum()`, and the answer quoted both failures under the total
    import pandas as pd

    prompt = "what is the total of `units` in `sales`? use python"
    facts, _ = context_text(shell_with(sales=pd.DataFrame({"region": ["N", "S"], "units": [3, 4]})), prompt)
    request = {"model": "claude-sonnet-5-5", "max_tokens": 1000, "tools": [PYTHON], "messages": [
        {"role": "user", "content": [{"type": "text", "text": prompt}, {"type": "text", "text": facts}]}]}
    calls = [b for b in DemoBrain()(request).content if getattr(b, "name", None) == "python"]  # type: ignore[arg-type]
    assert calls and "sales" in str(calls[0].input["code"]) and "units" in str(calls[0].input["code"]), calls  # type: ignore[union-attr]
