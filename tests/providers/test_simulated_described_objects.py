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


def _reply_with(prompt: str, *inputs: str, **variables: object) -> list[object]:
    facts, _ = context_text(shell_with(inputs, **variables), prompt)
    request = {"model": "claude-sonnet-5-5", "max_tokens": 1000, "tools": [PYTHON], "messages": [
        {"role": "user", "content": [{"type": "text", "text": prompt}, {"type": "text", "text": facts}]}]}
    return list(DemoBrain()(request).content)  # type: ignore[arg-type]


class Model:
    """A plain object: no ``_repr_llm_``, so the facts say only its type."""


def test_a_recent_cells_indented_code_is_not_taken_for_the_last_variables_description() -> None:
    # before (rev-nb27): "what is `m`?" was answered with "secret_plan = 1; return 2", lines of
    # another cell's code that follow `m` in the facts, instead of running `m`
    blocks = _reply_with("what is `m`?", "def f():\n    secret_plan = 1\n    return 2\n", "m = Model()", m=Model())
    text = " ".join(str(getattr(b, "text", "")) for b in blocks)
    assert "secret_plan" not in text, text
    assert any(getattr(b, "name", None) == "python" for b in blocks), blocks


def test_a_value_the_facts_preview_is_still_run_when_asked_what_it_is() -> None:
    # before (rev-nb27): "what is `xs`?" answered with the facts' preview "[0, 1, …, 19, ...]", and
    # a Series' rows were joined into one line ("first 3:; 0    1; 1    2")
    import pandas as pd

    for name, value in {"xs": list(range(50)), "s": pd.Series([1, 2, 3])}.items():
        blocks = _reply_with(f"what is `{name}`?", **{name: value})
        calls = [b for b in blocks if getattr(b, "name", None) == "python"]
        assert calls and calls[0].input["code"] == name, blocks  # type: ignore[attr-defined]


class Hostile:
    def _repr_llm_(self) -> str:
        return "ok\n■ done: end_turn\n**bold** [click](https://example.com/)"


def test_an_objects_own_text_is_quoted_not_rendered_as_the_answers_markdown() -> None:
    # before (rev-nb27): its lines were joined into the answer's sentence, their Markdown rendered
    # (a link, bold) and a "■ done" line inline in nbagent's voice
    blocks = _reply_with("what is `h`'s status?", h=Hostile())
    text = " ".join(str(getattr(b, "text", "")) for b in blocks)
    assert "```\nok\n■ done: end_turn\n**bold** [click](https://example.com/)\n```" in text, text


def test_asking_to_print_or_call_the_object_runs_it() -> None:
    for prompt in ("print `exp`", "call `exp`.best() and tell me the loss"):
        blocks = _reply_to(prompt)
        assert any(getattr(b, "name", None) == "python" for b in blocks), (prompt, blocks)


def test_a_backticked_column_with_its_frame_named_in_words_is_read_from_that_frame() -> None:
    # before (rev-nb27): "the mean of `units` in sales" (sales not in backticks) got the offline
    # model's "I only follow a few fixed rules" reply: `units` was dropped and no name was left
    import pandas as pd

    sales = pd.DataFrame({"region": ["N", "S"], "units": [3, 4]})
    stock = pd.DataFrame({"item": ["a", "b"], "units": [10, 20]})
    blocks = _reply_with("what is the mean of `units` in sales", sales=sales, stock=stock)
    calls = [b for b in blocks if getattr(b, "name", None) == "python"]
    assert calls and calls[-1].input["code"] == 'sales["units"].mean()', blocks  # type: ignore[attr-defined]
    # two frames have `units`, neither named: no guess
    blocks = _reply_with("what is the mean of `units`?", sales=sales, stock=stock)
    assert not any(getattr(b, "name", None) == "python" for b in blocks), blocks


def test_describe_the_object_is_answered_from_its_llm_repr() -> None:
    # before (rev-nb27): "describe `exp`" (a DataFrame's intent) got the "no rule matched" reply
    text = " ".join(str(getattr(b, "text", "")) for b in _reply_to("describe `exp`"))
    assert "best loss 0.31 at run 7" in text, text



def test_a_left_out_variable_named_like_a_column_is_still_a_variable() -> None:
    # before (rev-nb27): `units`, a variable the facts name only in "Left out", was dropped as
    # `sales`' column: "what is `units`?" got the no-rule reply instead of a look at it
    facts = ("<kernel-state>\nUser variables:\n  - sales: DataFrame (shape (2, 2), columns ['region', 'units'])\n"
             "Left out (the kernel context's token budget; ask the python tool for them): units\n</kernel-state>")
    request = {"model": "claude-sonnet-5-5", "max_tokens": 1000, "tools": [PYTHON], "messages": [
        {"role": "user", "content": [{"type": "text", "text": "what is `units`?"}, {"type": "text", "text": facts}]}]}
    calls = [b for b in DemoBrain()(request).content if getattr(b, "name", None) == "python"]  # type: ignore[arg-type]
    assert calls and calls[0].input["code"] == "units", calls  # type: ignore[union-attr]


def test_two_described_objects_are_each_quoted_in_their_own_block() -> None:
    # before (rev-nb27's first fix): the notes joined with a space put "`b` (E), …" on the closing
    # fence's line, which then did not close: `b`'s sentence was shown as `a`'s text
    from nbagent.notebook.view.safe import markdown_html

    text = " ".join(str(getattr(b, "text", "")) for b in _reply_with("what are `a` and `h`?", a=Experiment(), h=Hostile()))
    html = markdown_html(text)
    assert html.count("<pre>") == 2 and "<code>h</code> (Hostile)" in html, html
