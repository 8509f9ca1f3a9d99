"""What nbagent writes for a terminal (``print_event``, ``python -m nbagent.demo``, the transcript a
terminal IPython prints, a replay's) shows the model's text and what it read without a terminal
acting on it: an escape is marked ``⟦U+001B⟧`` (attacker pass 20)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from nbagent import Agent
from nbagent.console import print_event
from nbagent.engine.contracts import events as ev
from nbagent.notebook.view import AgentView
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import ScriptedResponder, SimulatedAPI, text_reply, tool_reply

#: A file's line that sets the terminal's clipboard (OSC 52: what the user pastes next), then erases
#: the line above and moves onto it.
CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo=\x07\x1b[2K\x1b[1A"
ACTING = ("\x1b", "\x07", "\x9b", "\u202e")


def test_control_characters_and_direction_marks_are_marked_and_lines_and_tabs_kept() -> None:
    from nbagent.display.format import terminal_text

    assert terminal_text("a\tb\r\nc\x1b[31md\x9b2Je\u202ef\rg") == \
        "a\tb\nc⟦U+001B⟧[31md⟦U+009B⟧2Je⟦U+202E⟧f⟦U+000D⟧g"
    assert terminal_text("plain text, café, 表 ✓") == "plain text, café, 表 ✓"


def test_a_table_line_also_marks_line_breaks_tabs_and_direction_marks_and_keeps_joiners() -> None:
    from nbagent.display.format import terminal_line

    assert terminal_line("a\tb\nc\u2028d\u200fe\x1b[2K.csv") == \
        "a⟦U+0009⟧b⟦U+000A⟧c⟦U+2028⟧d⟦U+200F⟧e⟦U+001B⟧[2K.csv"
    kept = "گزارش\u200cنهایی.csv 👨\u200d👩\u200d👧 Müller\u00a0Jan 日本\u3000語"
    assert terminal_line(kept) == kept


def test_a_file_the_model_read_and_its_reply_print_without_escapes(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text(f"quarterly numbers\n{CLIPBOARD}hidden\n")
    api = SimulatedAPI(ScriptedResponder([tool_reply("read_file", {"path": "notes.txt"}),
                                          text_reply("Done.\x1b]0;a new title\x07\x9b2J")]))
    out = io.StringIO()
    for event in Agent(provider=simulated_provider(api)).run_sync("Summarise notes.txt"):
        print_event(event, out)
    printed = out.getvalue()
    assert not any(ch in printed for ch in ACTING), repr(printed)
    assert "⟦U+001B⟧]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo=⟦U+0007⟧" in printed and "Done.⟦U+001B⟧]0;a new title" in printed


def test_the_transcript_and_a_replayed_one_show_escapes_marked() -> None:
    view = AgentView(model="claude-sonnet-4-5", provider="simulated", context_window=200_000, max_allowed=160_000)
    view.handle(ev.ToolUse(tool_use_id="t1", name="read_file", input={"path": "notes.txt"}))
    view.handle(ev.ToolResult(tool_use_id="t1", name="read_file", content=f"{CLIPBOARD}hidden", is_error=False))
    view.handle(ev.TextDelta(text="Done.\x1b]0;title\x07"))
    view.flush()
    assert not any(ch in view.transcript() for ch in ACTING), repr(view.transcript())
    # A record made before (or a received notebook's plain text) as a replay displays it.
    from nbagent.notebook.document.shown import as_displayed

    shown = as_displayed({"text/plain": f"answer {CLIPBOARD}", "text/html": "<p>answer</p>"})
    assert shown == {"text/plain": "answer ⟦U+001B⟧]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo=⟦U+0007⟧⟦U+001B⟧[2K⟦U+001B⟧[1A",
                     "text/html": "<p>answer</p>"}


def test_hebrew_and_arabic_prose_keeps_its_direction_marks() -> None:
    """A right-to-left mark is part of Hebrew, Arabic and Persian prose (a Wikipedia text, a reply)
    and reorders no letters: it was shown as ⟦U+200F⟧ between the words of every such line. The
    overrides and isolates, which do reorder a run, stay marked (review of attacker pass 20)."""
    from nbagent.display.format import terminal_text

    prose = "שלום \u200fעולם, مرحبا\u061c بالعالم, page\u200e 3"
    assert terminal_text(prose) == prose
    assert terminal_text("a\u202eb\u2067c\u2069") == "a⟦U+202E⟧b⟦U+2067⟧c⟦U+2069⟧"


def test_a_line_end_split_between_two_streamed_deltas_prints_as_one_line_end() -> None:
    """A reply's ``\\r\\n`` cut between two deltas printed ``⟦U+000D⟧`` at the end of the line."""
    out = io.StringIO()
    for event in (ev.TextDelta(text="first line\r"), ev.TextDelta(text="\nsecond\rline\r\n")):
        print_event(event, out)
    assert out.getvalue() == "first line\nsecond⟦U+000D⟧line\n"
