"""The permission prompt's question line ("Allow write_file to run? (why)") shows the characters
that reorder or hide text as marks, as the card's input box above it does: the reason quotes the
path the model wrote."""

from __future__ import annotations

from pathlib import Path

from nbagent.engine.contracts.protected import protected_reason
from nbagent.notebook.view.prompts import PermissionPrompt

RLO = "\u202e"


def test_a_bidi_override_in_a_written_path_is_marked_in_the_question_line(tmp_path: Path) -> None:
    """``.git/hooks/<RLO>kcehc-erp`` drew as ``pre-check`` backwards into the rest of the line (an
    unclosed override reorders everything after it in the line): the reason could be made to read
    otherwise than it says. The input box above marked it; the question did not."""
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    raw = f".git/hooks/{RLO}kcehc-erp"
    reason = protected_reason(raw, tmp_path)
    assert reason is not None and RLO in reason  # the engine's reason quotes the path as written

    question = PermissionPrompt("write_file", {"path": raw}, reason)._question.value

    assert RLO not in question and "⟦U+202E⟧" in question


def test_an_mcp_tool_name_with_a_zero_width_space_is_marked_in_the_question_line() -> None:
    question = PermissionPrompt("mcp__fs__read\u200b_file", {}, "")._question.value
    assert "\u200b" not in question and "⟦U+200B⟧" in question


def test_a_tool_name_the_model_made_up_is_marked_in_its_card() -> None:
    from nbagent.notebook.view.tools import ToolCard

    card = ToolCard("t1", f"python{RLO}ylno-daer")
    assert RLO not in card._head.value and "⟦U+202E⟧" in card._head.value
    assert RLO not in card.html()
