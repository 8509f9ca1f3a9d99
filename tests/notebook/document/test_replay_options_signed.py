"""A replayed cell's session options carry to your next live prompt as that cell gave them when it
ran, as its signed record says (in the folder, or in the cell's metadata): the options line is not
signed, and anyone who edits a notebook of yours (a pull request, a shared drive) could add
``--allow bash``, ``--web-search`` or a larger budget to an agent cell that still replays. What only
narrows (a tighter limit, fewer tools) is taken from the line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from nbagent.engine.disk.user_key import sign
from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document import shown as shown_mod
from nbagent.notebook.document.replayed_options import OPTIONS_NOT_SIGNED_LINE, UNSIGNED_OPTIONS_LINE

from .test_replay_from_notebook import QUESTION, Lab, lab

__all__ = ["lab"]  # the in-process kernel with a front-end fixture

NOT_CARRIED = OPTIONS_NOT_SIGNED_LINE.format(options="--allow")


def _recorded_then_edited(lab: Lab, line: str, *, between: Callable[[], None] = lambda: None,
                          allowed: tuple[str, ...] = ()) -> str:
    """Record the first cell live with ``--allow python`` (your settings allowing ``allowed``), then
    Run All after its options line became ``line`` (``between``: what else changed meanwhile)."""
    magics = magics_mod.active_magics()
    magics.allow = list(allowed)
    lab.front.cells[0]["source"] = f"%%agent --allow python\n{QUESTION}"
    assert "391" in lab.run()
    lab.front.cells.append({"cell_type": "code", "id": "c-next", "source": "%%agent\nnow add 5 to it with python",
                            "metadata": {}, "outputs": [], "execution_count": None})
    lab.restart()
    magics.allow = []
    between()
    lab.front.cells[0]["source"] = f"%%agent {line}\n{QUESTION}"
    return lab.run()


def _next_prompt(lab: Lab) -> tuple[str, ...]:
    """The cell after it, run live in the replayed session (the agent's code cell lies between
    them); the tools that session allows."""
    assert "replayed: session" not in lab.run(next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-next"))
    current = magics_mod.active_magics().current
    assert current is not None
    return tuple(current.agent.config.allow)


def test_an_allow_added_to_a_replayed_cells_options_line_is_not_carried_and_says_so(lab: Lab) -> None:
    out = _recorded_then_edited(lab, "--allow python shell")

    assert "replayed: session" in out and NOT_CARRIED in out
    allowed = _next_prompt(lab)
    assert "python" in allowed and "shell" not in allowed


def test_the_allow_the_record_was_made_with_still_holds_after_run_all(lab: Lab) -> None:
    out = _recorded_then_edited(lab, "--allow python")

    assert "replayed: session" in out and "options line differs" not in out
    assert "python" in _next_prompt(lab)


def test_from_the_notebook_alone_an_added_allow_says_it_is_not_carried(lab: Lab, tmp_path: Path) -> None:
    out = _recorded_then_edited(lab, "--allow python shell", between=lambda: shutil.rmtree(tmp_path / ".nbagent"))

    assert "replayed: session" in out and NOT_CARRIED in out


@pytest.mark.parametrize("forged", [False, True])
def test_a_copy_of_the_notebook_replays_its_cells_record_and_carries_only_its_signed_allow(
        lab: Lab, forged: bool) -> None:
    def copy() -> None:  # Save As: the cell's own record decides (the folder's record is the original's)
        if forged:
            lab.front.cells[0]["metadata"]["nbagent"]["record"]["options"]["allow"] = ["python", "shell"]
        lab.restart(notebook="copy.ipynb")

    out = _recorded_then_edited(lab, "--allow python shell", between=copy)

    assert "replayed: session" in out and "shell" not in _next_prompt(lab)
    assert (NOT_CARRIED in out) != forged  # a forged record is not yours: nothing of it is carried


@pytest.mark.parametrize("edit", ["allow edited", "allow dropped"])
def test_a_folder_transcript_whose_allow_was_edited_carries_nothing(lab: Lab, tmp_path: Path, edit: str) -> None:
    def forge() -> None:
        (transcript,) = (tmp_path / ".nbagent").rglob("1.json")
        saved = json.loads(transcript.read_text())
        if edit == "allow dropped":
            del saved["options"]
        else:
            saved["options"]["allow"] = ["python", "shell"]
        transcript.write_text(json.dumps(saved))
        del lab.front.cells[0]["metadata"]["nbagent"]["record"]  # the folder's word alone

    _recorded_then_edited(lab, "--allow python shell", between=forge)

    assert "shell" not in _next_prompt(lab)


@pytest.mark.parametrize("metadata", ["allow edited into the record", "record deleted"])
def test_the_folders_signed_record_decides_whatever_the_cells_metadata_says(lab: Lab, metadata: str) -> None:
    # The check read the cell's metadata record without its signature, and skipped it where there was none.
    def edit() -> None:
        mark: dict[str, Any] = lab.front.cells[0]["metadata"]["nbagent"]
        if metadata == "record deleted":
            del mark["record"]
        else:
            mark["record"]["options"]["allow"] = ["python", "shell"]

    out = _recorded_then_edited(lab, "--allow python shell", between=edit)

    assert "replayed: session" in out and NOT_CARRIED in out
    assert "shell" not in _next_prompt(lab)


def test_only_the_cells_own_allow_is_signed_not_what_your_settings_allowed_then(lab: Lab) -> None:
    out = _recorded_then_edited(lab, "--allow python shell", allowed=("shell",))  # your setting then, not since

    assert NOT_CARRIED in out and "shell" not in _next_prompt(lab)


def _recorded_with(lab: Lab, recorded: str, edited: str) -> str:
    """Record the first cell live with options ``recorded``, then Run All with them ``edited``."""
    lab.front.cells[0]["source"] = f"%%agent {recorded}\n{QUESTION}"
    assert "391" in lab.run()
    lab.front.cells.append({"cell_type": "code", "id": "c-next", "source": "%%agent\nnow add 5 to it with python",
                            "metadata": {}, "outputs": [], "execution_count": None})
    lab.restart()
    lab.front.cells[0]["source"] = f"%%agent {edited}\n{QUESTION}"
    return lab.run()


def test_web_search_edited_into_a_replayed_cell_is_not_carried(lab: Lab) -> None:
    out = _recorded_with(lab, "--allow python", "--allow python --web-search")

    assert OPTIONS_NOT_SIGNED_LINE.format(options="--web-search") in out
    _next_prompt(lab)
    current = magics_mod.active_magics().current
    assert current is not None and "web_search" not in current.agent.config.server_tools


@pytest.mark.parametrize(("edited", "cap", "said"), [("--max-session-budget 999", 0.5, True),
                                                     ("--max-session-budget 0.25", 0.25, False)])
def test_a_budget_edited_since_is_taken_only_where_it_is_tighter(lab: Lab, edited: str, cap: float,
                                                                 said: bool) -> None:
    out = _recorded_with(lab, "--allow python --max-session-budget 0.5", f"--allow python {edited}")

    assert (OPTIONS_NOT_SIGNED_LINE.format(options="--max-session-budget") in out) == said
    _next_prompt(lab)
    current = magics_mod.active_magics().current
    assert current is not None and current.agent.config.max_session_budget_usd == cap


def test_a_replayed_retry_cell_of_a_cell_with_options_says_nothing_of_its_empty_line(lab: Lab) -> None:
    # The retry cell's empty line was compared with the retried cell's signed options: every Run All
    # said "--max-session-budget, --web-search … not carried", of options that were carried.
    from nbagent.providers.simulated import Fault

    lab.front.cells.append({"cell_type": "code", "id": "c-failing", "metadata": {}, "outputs": [],
                            "source": "%%agent --web-search --max-session-budget 5\nnow add 5 to it with python",
                            "execution_count": None})
    lab.front.cells.append({"cell_type": "code", "id": "c-retry", "source": "%agent retry", "metadata": {},
                            "outputs": [], "execution_count": None})
    def index(cell_id: str) -> int:  # the agent's code cells move the cells below
        return next(i for i, c in enumerate(lab.front.cells) if c["id"] == cell_id)

    lab.run()
    current = magics_mod.active_magics().current
    assert current is not None
    api = current.agent.simulated_api
    api.faults = {len(api.requests) + 1: Fault.auth()}
    lab.run(index("c-failing"), expect_error=True)
    lab.run(index("c-retry"))
    lab.restart()

    outs = [lab.run(), lab.run(index("c-failing")), lab.run(index("c-retry"))]

    assert all("replayed: session" in out for out in outs) and not any("options line gives" in out for out in outs)
    assert "recorded by someone else" not in outs[1]  # the budget's 5.0 came back as 5: still your record


def test_web_search_taken_off_a_replayed_cells_line_is_off_for_your_next_prompt(lab: Lab) -> None:
    out = _recorded_with(lab, "--allow python --web-search", "--allow python")

    assert "options line gives" not in out
    _next_prompt(lab)
    current = magics_mod.active_magics().current
    assert current is not None and "web_search" not in current.agent.config.server_tools


def _signed_as_before_options_were_kept(lab: Lab, tmp_path: Path, where: str) -> None:
    """The first cell's record as nbagent wrote it before records kept the cell's options (signed
    with your key, no ``options``): in the cell's metadata, or in the folder alone."""
    record: dict[str, Any] = lab.front.cells[0]["metadata"]["nbagent"]["record"]
    if where == "folder":
        del lab.front.cells[0]["metadata"]["nbagent"]["record"]
    else:
        shutil.rmtree(tmp_path / ".nbagent")
        del record["options"], record["signature"]
        record["signature"] = sign(record)
        return
    (transcript,) = (tmp_path / ".nbagent" / "replay").rglob("1.json")
    saved = json.loads(transcript.read_text())
    del saved["options"]
    saved["signature"] = sign(*shown_mod._signed_parts(transcript.parent.name, 1, shown_mod.prompt_sha256(QUESTION),
                                                       saved["bundle"], saved["outcome"], saved.get("inputs")))
    transcript.write_text(json.dumps(saved))


@pytest.mark.parametrize("where", ["folder", "notebook alone"])
def test_a_record_made_before_options_were_signed_carries_no_tool_edited_into_its_line(
        lab: Lab, tmp_path: Path, where: str) -> None:
    # Such a record said nothing of its cell's options, and the line was carried as it read: anyone
    # who edited an older notebook of yours gave your next prompt --allow shell and --web-search.
    out = _recorded_then_edited(lab, "--allow python shell --web-search",
                                between=lambda: _signed_as_before_options_were_kept(lab, tmp_path, where))

    assert "replayed: session" in out and "recorded by someone else" not in out
    allowed = _next_prompt(lab)
    current = magics_mod.active_magics().current
    assert current is not None and "shell" not in allowed and "web_search" not in current.agent.config.server_tools
    assert UNSIGNED_OPTIONS_LINE.format(options="--web-search, --allow") in out


def test_a_cell_run_again_whose_record_was_cleared_replays_its_latest_turn_not_a_tool_taken_off_since(
        lab: Lab) -> None:
    # Its first turn stood in: the answer the second replaced came back as current, and with it the
    # shell the user had taken off the line (edited back in by whoever cleared the record).
    magics = magics_mod.active_magics()
    magics.allow = []
    lab.front.cells[0]["source"] = f"%%agent --allow python shell\n{QUESTION}"
    lab.run()
    lab.front.cells[0]["source"] = f"%%agent --live --allow python\n{QUESTION}"
    lab.run()
    lab.front.cells.append({"cell_type": "code", "id": "c-next", "source": "%%agent\nnow add 5 to it with python",
                            "metadata": {}, "outputs": [], "execution_count": None})
    lab.restart()
    del lab.front.cells[0]["metadata"]["nbagent"]["record"]
    lab.front.cells[0]["source"] = f"%%agent --allow python shell\n{QUESTION}"

    out = lab.run()

    assert ", turn 2 (no request sent)" in out and NOT_CARRIED in out
    assert "shell" not in _next_prompt(lab)


def test_a_record_made_before_options_were_signed_goes_on_on_the_endpoint_its_line_names(
        lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its line is not signed, but dropping its --endpoint sent the recorded history to your default provider.
    from .test_replay_session_options import _local_endpoint

    with _local_endpoint(monkeypatch, tmp_path) as api:
        out = _recorded_with(lab, "--endpoint local", "--endpoint local")
        assert "replayed: session" in out
        _signed_as_before_options_were_kept(lab, tmp_path, "folder")
        lab.restart()
        out = lab.run()
        before = len(api.requests)

        _next_prompt(lab)

        current = magics_mod.active_magics().current
        assert "replayed: session" in out and "options line" not in out and len(api.requests) > before
        assert current is not None and current.agent.endpoint is not None and current.agent.endpoint.name == "local"


def test_a_replayed_retry_keeps_the_tool_taken_off_the_retried_cells_line_off(lab: Lab) -> None:
    # The retry took the retried turn's signed options whole: shell, taken off the failed cell's
    # line since (and not carried by that cell's own replay), came back with the retry below it.
    from nbagent.providers.simulated import Fault

    magics = magics_mod.active_magics()
    magics.allow = []
    lab.front.cells[0]["source"] = f"%%agent --allow python\n{QUESTION}"
    for cell_id, source in [("c-failing", "%%agent --allow python shell\nnow add 5 to it with python"),
                            ("c-retry", "%agent retry"), ("c-next", "%%agent\nnow add 1 to it with python")]:
        lab.front.cells.append({"cell_type": "code", "id": cell_id, "source": source, "metadata": {}, "outputs": [],
                                "execution_count": None})

    def index(cell_id: str) -> int:  # the agent's code cells move the cells below
        return next(i for i, c in enumerate(lab.front.cells) if c["id"] == cell_id)

    lab.run()
    current = magics.current
    assert current is not None
    api = current.agent.simulated_api
    api.faults = {len(api.requests) + 1: Fault.auth()}
    lab.run(index("c-failing"), expect_error=True)
    lab.run(index("c-retry"))
    lab.restart()
    magics.allow = []
    lab.front.cells[index("c-failing")]["source"] = "%%agent --allow python\nnow add 5 to it with python"

    outs = [lab.run(), lab.run(index("c-failing")), lab.run(index("c-retry"))]

    assert all("replayed: session" in out for out in outs) and not any("options line gives" in out for out in outs)
    assert "shell" not in _next_prompt(lab)
