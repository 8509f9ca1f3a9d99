"""One check says which notebook names from a record's index (which may have come with the notebook)
nbagent ever opens or names: the headless replay's reads and the line about a renamed notebook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nbagent.notebook.document.headless import holds_cell, plain_notebook_name
from nbagent.notebook.document.replay import _gone

PLAIN = ["analysis.ipynb", "Report 2026 (final).ipynb", "گزارش.ipynb"]
NOT_PLAIN = ["../elsewhere.ipynb", "sub/nb.ipynb", "/etc/nb.ipynb", ".hidden.ipynb", "nb.ipynb\n\x1b[2Kfake",
             "nb\x1b[31m.ipynb", "notes.txt", "", "x" * 250 + ".ipynb", None, 3]


@pytest.mark.parametrize("name", PLAIN)
def test_a_plain_notebook_name_of_the_folder_is_read_and_named(tmp_path: Path, name: str) -> None:
    assert plain_notebook_name(name)
    assert _gone(tmp_path, name)  # not in the folder: the renamed-notebook line may name it
    (tmp_path / name).write_text('{"cells": [{"cell_type": "code", "source": "%%agent\\nhi"}]}')
    assert not _gone(tmp_path, name) and holds_cell(tmp_path, name, "hi", "%%agent\nhi")


@pytest.mark.parametrize("name", NOT_PLAIN)
def test_a_name_with_a_folder_a_dot_an_escape_or_another_suffix_is_neither_read_nor_named(
        tmp_path: Path, name: object) -> None:
    assert not plain_notebook_name(name)
    if isinstance(name, str) and name:
        assert not _gone(tmp_path, name)
        assert not holds_cell(tmp_path, name, "hi", None)


def test_a_hidden_notebook_once_named_as_gone_is_not_any_more(tmp_path: Path) -> None:
    # The two checks differed: the renamed-notebook line named ".x.ipynb", which the reads refused.
    assert not _gone(tmp_path, ".x.ipynb")


@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_an_agent_cell_saved_with_either_line_end_counts_as_run_again_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                             end: str) -> None:
    """A ``%%agent`` cell saved with Windows line ends fell back to the old headless rule: its re-run
    in JupyterLab replayed headless the answer the re-run had replaced."""
    from nbagent.notebook.document import headless

    code = f"%%agent{end}what is 17 * 23?"
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": code}]}))
    monkeypatch.setattr(headless, "executing_code", lambda: code)
    assert headless.runs_again_in_place(tmp_path, "nb.ipynb", "what is 17 * 23?")
