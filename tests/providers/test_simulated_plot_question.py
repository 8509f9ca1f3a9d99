""""Why is this plot empty?" (notebook 08's plot lesson): the offline model answers from the kernel facts it
was sent (a figure whose axes are EMPTY, the DataFrame with no rows), not with its "no rule matched" text."""

from __future__ import annotations

from typing import Any

from nbagent.providers.simulated.brain import DemoBrain
from nbagent.providers.simulated.script import TextBlock

FIRST = """<kernel-state>
User variables:
  - sales: DataFrame (shape (1000, 4), 1 column with missing values, columns ['day', 'region', 'price', 'units'])
    first 3 rows:
  - targets: dict (len 2)
</kernel-state>"""

# As 08's turn 3 sends it: a diff naming the new variables.
PLOT = """<kernel-state changes-since-previous-prompt>
New or changed variables:
  - june: DataFrame (shape (0, 4), 0 columns with missing values, columns ['day', 'region', 'price', 'units'])
    index: RangeIndex, empty; memory 132 B (without object contents)
    (no rows)
  - fig: Figure (500x300 px, 1 axes)
    axes 0: title 'price in June', x '' 1969-12-31 22:48..1970-01-02 01:12, y '' -0.055..0.055; AXES_END
  - ax: Axes
</kernel-state>""".replace("AXES_END", "1 lines (0 points): EMPTY, the lines have no data")

TOOLS: list[Any] = [{"name": "python", "input_schema": {"type": "object", "properties": {"code": {"type": "string"}}}}]


def _answer(facts: list[str], prompt: str) -> str:
    messages: list[Any] = [{"role": "user", "content": [{"type": "text", "text": f} for f in facts[:1]] + [
        {"type": "text", "text": "Which columns have missing values?"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "(simulated model) done."}]},
                {"role": "user", "content": [{"type": "text", "text": f} for f in facts[1:]] + [
                    {"type": "text", "text": prompt}]}]
    reply = DemoBrain()({"model": "claude-sonnet-5-5", "max_tokens": 1000, "messages": messages, "tools": TOOLS})
    return " ".join(b.text for b in reply.content if isinstance(b, TextBlock))


def test_why_is_this_plot_empty_is_answered_from_the_facts():
    text = _answer([FIRST, PLOT], "Why is this plot empty?")
    assert "I understood your message as" not in text  # the "no rule matched" explanation
    assert "`fig` (axes 0: title 'price in June'" in text and "EMPTY, the lines have no data" in text
    assert "`june` has no rows" in text


def test_a_plot_the_facts_do_not_call_empty_gets_no_made_up_reason():
    full = PLOT.replace(" (0 points): EMPTY, the lines have no data", " (240 points)").replace(
        "    (no rows)\n", "").replace("shape (0, 4)", "shape (240, 4)")
    assert "EMPTY" not in _answer([FIRST, full], "Why is this plot empty?")
