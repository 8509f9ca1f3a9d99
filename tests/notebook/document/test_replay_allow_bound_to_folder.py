"""A replayed cell's ``--allow`` carries to your next live prompt only in the folder where your key
signed it, as an "Allow always" in ``session.json`` does (:mod:`nbagent.engine.state.grants`): a
record of yours that you once published (a repository's ``.nbagent/``), copied into another project
beside a history someone else wrote, kept your ``--allow python`` for the prompt that continued it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document.allow_folder import ALLOW_ELSEWHERE_LINE, ALLOW_UNBOUND_LINE

from .test_replay_from_notebook import Lab, lab
from .test_replay_options_signed import _next_prompt, _recorded_then_edited

__all__ = ["lab"]  # the in-process kernel with a front-end fixture


def _copied_elsewhere(lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Your project's notebook and ``.nbagent/`` as another project holds them (its own folder)."""
    other = tmp_path / "someone-elses-project"
    other.mkdir()
    shutil.copytree(tmp_path / ".nbagent", other / ".nbagent")
    monkeypatch.chdir(other)
    lab.restart()


def test_a_replayed_allow_is_not_carried_from_a_record_copied_into_another_folder(
        lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _recorded_then_edited(lab, "--allow python", between=lambda: _copied_elsewhere(lab, tmp_path, monkeypatch))

    assert "replayed: session" in out and ALLOW_ELSEWHERE_LINE in out  # said, as for a record of yours made elsewhere
    assert "python" not in _next_prompt(lab)


def test_a_replayed_allow_still_holds_in_the_folder_it_was_recorded_in(lab: Lab) -> None:
    out = _recorded_then_edited(lab, "--allow python")

    assert "replayed: session" in out and ALLOW_ELSEWHERE_LINE not in out
    assert "python" in _next_prompt(lab)
    assert magics_mod.active_magics().allow == []


def test_a_replayed_allow_holds_when_the_same_folder_is_opened_through_a_symbolic_link(
        lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mark is of the folder's real path: a project reached through a link (a home folder on
    another mount, ``~/work`` linking to ``/data/work``) is the folder it was recorded in."""
    def through_a_link() -> None:
        link = tmp_path.parent / f"{tmp_path.name}-link"
        link.symlink_to(tmp_path, target_is_directory=True)
        monkeypatch.chdir(link)
        lab.restart()

    out = _recorded_then_edited(lab, "--allow python", between=through_a_link)

    assert "replayed: session" in out and ALLOW_ELSEWHERE_LINE not in out
    assert "python" in _next_prompt(lab)


def test_a_record_made_before_allow_was_bound_to_its_folder_says_so_not_another_folder(
        lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review of attacker pass 22: after the update, a record of yours with no folder mark, replayed
    in the very folder it was made in, said it "was made in another folder (a copy of your project,
    or one you moved)": the user looked for a copy or a move that never happened."""
    from nbagent.notebook.document import recording

    with monkeypatch.context() as before_the_update:
        before_the_update.setattr(recording, "recorded_here", lambda root, options: options)
        out = _recorded_then_edited(lab, "--allow python")

    assert "replayed: session" in out and ALLOW_UNBOUND_LINE in out and ALLOW_ELSEWHERE_LINE not in out
    assert "python" not in _next_prompt(lab)
