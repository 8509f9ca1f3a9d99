"""truncate_middle / truncate_output: cut in the middle, say how much, keep the full text."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from nbagent.engine.contracts.config import DEFAULT_TOOL_OUTPUT_LIMIT as DEFAULT_LIMIT
from nbagent.engine.contracts.tool_api import ToolOutput, truncate_middle
from nbagent.engine.contracts.tool_api import limit_output as truncate_output


def test_short_text_is_untouched() -> None:
    assert truncate_middle("abc", 3) == "abc"
    assert truncate_middle("", 0) == ""


def test_long_text_keeps_head_and_tail_with_marker() -> None:
    text = "H" * 20_000 + "M" * 32_345 + "T" * 20_000
    out = truncate_middle(text)
    assert len(out) <= DEFAULT_LIMIT
    assert out.startswith("H" * 1000) and out.endswith("T" * 1000)
    m = re.search(r"\n\.\.\. \[([\d,]+) characters omitted\] \.\.\.\n", out)
    assert m is not None
    omitted = int(m.group(1).replace(",", ""))
    assert len(out) - len(m.group(0)) + omitted == len(text)


def test_cut_snaps_to_line_breaks() -> None:
    text = "".join(f"line {i:05d}\n" for i in range(10_000))
    out = truncate_middle(text, 2_000)
    head, tail = out.split("\n... [", 1)
    assert head.endswith(tuple(f"{i}" for i in range(10)))  # a whole line, no partial one
    assert tail.split("] ...\n", 1)[1].startswith("line ")


def test_tiny_limit_gives_the_marker() -> None:
    out = truncate_middle("x" * 100, 5)
    assert "100 characters omitted" in out


@given(st.text(max_size=3000), st.integers(min_value=40, max_value=2500))
def test_never_longer_than_the_limit(text: str, limit: int) -> None:
    out = truncate_middle(text, limit)
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text
    else:
        m = re.search(r"\[([\d,]+) characters omitted\]", out)
        assert m is not None


def test_truncate_output_keeps_full_text_in_display() -> None:
    text = "a" * 100
    out = truncate_output(ToolOutput(text), 50)
    assert len(out.content) <= 50 and out.display == text
    assert truncate_output(ToolOutput("short"), 50) == ToolOutput("short")
    blocks = truncate_output(ToolOutput([{"type": "text", "text": text}, {"type": "image", "source": {}}]), 50)
    assert isinstance(blocks.content, list)
    first_text = blocks.content[0]["text"]
    assert isinstance(first_text, str) and len(first_text) <= 50
    assert blocks.content[1] == {"type": "image", "source": {}} and blocks.display == text
