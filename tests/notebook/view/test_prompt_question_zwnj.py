"""The question line keeps a zero-width non-joiner that spells a word (Persian ``گزارش‌ها.csv``, an Indic
half form): between two letters of a script that uses it, it shows as a break in the joining and hides
nothing. Was: ``گزارش⟦U+200C⟧ها.csv``, a warning sign in an ordinary Persian file name. Everywhere
else it is still marked, as is every other invisible or direction-changing character."""

from __future__ import annotations

from pathlib import Path

from nbagent.engine.contracts.protected import protected_reason
from nbagent.notebook.view import render
from nbagent.notebook.view.prompts import PermissionPrompt

ZWNJ = "\u200c"
PERSIAN = f"گزارش{ZWNJ}ها.csv"


def test_a_persian_file_name_in_the_question_line_is_not_marked(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    reason = protected_reason(f".git/hooks/{PERSIAN}", tmp_path)
    assert reason is not None and PERSIAN in reason
    question = PermissionPrompt("write_file", {"path": PERSIAN}, reason)._question.value
    assert PERSIAN in question and "⟦U+200C⟧" not in question


def test_an_indic_half_form_keeps_its_zwnj() -> None:
    word = f"क्{ZWNJ}ष"  # ka, virama, ZWNJ, ssa: the explicit half form
    assert render.reveal_hidden_words(word) == (word, 0)


def test_a_zwnj_that_can_hide_something_is_still_marked() -> None:
    for text in (f"rm{ZWNJ}.csv", f"report{ZWNJ}s.csv", f"گزارش{ZWNJ}.csv", f"{ZWNJ}ها", f"گزارش{ZWNJ}report"):
        marked, count = render.reveal_hidden_words(text)
        assert "⟦U+200C⟧" in marked and count == 1, text


def test_every_other_hidden_character_is_still_marked_beside_a_kept_zwnj() -> None:
    marked, count = render.reveal_hidden_words(f"\u202e{PERSIAN}\u200b")
    assert marked == f"⟦U+202E⟧{PERSIAN}⟦U+200B⟧" and count == 2
    assert "⟦U+200D⟧" in render.reveal_hidden_words("گزارش\u200dها")[0]  # the joiner is not the non-joiner


def test_a_zwnj_that_changes_nothing_drawn_between_letters_of_such_a_script_is_marked() -> None:
    """After a letter that never joins the next (Persian reh, zain, alef, dal) or between two Indic
    letters with no virama, a ZWNJ draws nothing and changes nothing: ``ر‌ا.csv`` looks like the other
    file ``را.csv``. Was: kept unmarked there as in a spelled word."""
    for text in (f"ر{ZWNJ}ا.csv", f"ز{ZWNJ}بان", f"د{ZWNJ}ها", f"क{ZWNJ}ख.py", f"ক{ZWNJ}খ"):
        marked, count = render.reveal_hidden_words(text)
        assert "⟦U+200C⟧" in marked and count == 1, text
    for word in (PERSIAN, f"خانه{ZWNJ}ها", f"می{ZWNJ}خواهم", f"بِ{ZWNJ}ها"):  # after a joining letter (and its vowel sign)
        assert render.reveal_hidden_words(word) == (word, 0), word
