"""The record travels with the notebook: a turn's signed record is written into its agent cell's
metadata through the bridge, and a kernel with no ``.nbagent/`` folder replays it from the metadata
the front-end sends with the cell (JupyterLab and Notebook 7 send ``{...cell.metadata, cellId}``).
Someone else's record shows as plain text only; without any record the cell says so before asking."""

from __future__ import annotations

import base64
import json
import shutil
import tracemalloc
import zlib
from typing import Any, Callable, Iterator

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod
from nbagent.notebook.document import (
    cell_run,
    command_replay,
    embedded,
    link,
    live_lines,
    lookup,
    recording,
    replay_lines,
    replayed,
)
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.live_lines import NO_RECORD_LINE, UNFINISHED_LINE
from nbagent.notebook.document.replay_lines import RECEIVED_LINE, ROLLED_BACK_LINE

from .fake_frontend import FakeFrontEnd

QUESTION = "what is 17 * 23? use python"


class Lab:
    """An in-process kernel whose front-end holds the cells and sends each cell's id and metadata."""

    def __init__(self, ip: Any, monkeypatch: Any, tmp_path: Any) -> None:
        self.ip, self.tmp_path = ip, tmp_path
        self.front = FakeFrontEnd([{"cell_type": "code", "source": f"%%agent\n{QUESTION}"}])
        self.executing: dict[str, Any] | None = None
        self.error = ""  # the last cell's error, as the user reads it
        for module in (link, recording, cell_run, command_replay, replayed):
            monkeypatch.setattr(module, "executing_cell_id", lambda: self.executing and self.executing["id"])
        for module in (link, lookup, replayed, command_replay):
            monkeypatch.setattr(module, "executing_metadata",
                                lambda: dict(self.executing["metadata"], cellId=self.executing["id"]) if self.executing else {})

    def restart(self, notebook: str = "analysis.ipynb") -> Any:
        """A fresh kernel for this notebook (``notebook``: the file's name, e.g. a copy's)."""
        magics = magics_mod.active_magics()
        if magics.current is not None:
            magics.current.agent.close()
        magics.current = None
        magics._document = link.DocumentLink(the_bridge=self.front.connect(Bridge(), path=notebook))
        return magics

    def run(self, cell_index: int = 0, *, expect_error: bool = False) -> str:
        self.executing = self.front.cells[cell_index]
        self.ip.display_pub.outputs.clear()
        try:
            with capture_output() as cap:
                result = self.ip.run_cell(self.executing["source"])
        finally:
            self.executing = None
        assert (result.error_in_exec is not None) == expect_error, result.error_in_exec
        self.error = str(result.error_in_exec or "")
        shown = [o.data.get("text/plain", "") for o in cap.outputs]
        return "\n".join([cap.stdout, *shown, *(o["data"].get("text/plain", "") for o in self.ip.display_pub.outputs)])

    def record(self) -> dict[str, Any]:
        return self.front.cells[0]["metadata"]["nbagent"]["record"]


@pytest.fixture
def lab(tmp_path, monkeypatch) -> Iterator[Lab]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "my_key"))
    shell = InteractiveShell.instance()
    saved = shell.display_pub
    shell.display_pub = CapturingDisplayPublisher()
    shell.run_cell("%load_ext nbagent")
    magics = magics_mod.active_magics()
    magics.allow = ["python"]
    lab = Lab(shell, monkeypatch, tmp_path)
    try:
        lab.restart()
        yield lab
    finally:
        lab.restart()
        magics._document = None
        magics.allow = []
        shell.display_pub = saved


def test_the_notebook_alone_replays_its_agent_cell_from_the_cells_metadata(lab, tmp_path):
    live = lab.run()
    assert "391" in live and lab.record()["turn"] == 1
    shutil.rmtree(tmp_path / ".nbagent")  # the .ipynb alone: emailed, committed, uploaded
    lab.restart()

    again = lab.run()

    assert "replayed: session" in again and "391" in again and "no recorded answer" not in again
    assert magics_mod.active_magics().current is None  # no session, no request


def test_someone_elses_record_shows_as_plain_text_and_a_forged_one_never_as_html(lab, tmp_path, monkeypatch):
    lab.run()
    shutil.rmtree(tmp_path / ".nbagent")
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "their_key"))  # another user opens it
    lab.restart()

    again = lab.run()

    assert "replayed: session" in again and RECEIVED_LINE in again and "391" in again
    html = [o["data"] for o in lab.ip.display_pub.outputs if "text/html" in o["data"]]
    assert not any("391" in d["text/html"] for d in html)  # their transcript's HTML never reaches the page


def test_an_edited_prompt_is_a_new_question_not_the_carried_record(lab, tmp_path):
    lab.run()
    shutil.rmtree(tmp_path / ".nbagent")
    lab.restart()
    lab.front.cells[0]["source"] = "%%agent\nwhat is 17 * 24? use python"

    out = lab.run()

    assert "replayed" not in out and "408" in out


def test_without_any_record_a_recorded_cell_says_so_before_asking(lab, tmp_path):
    lab.run()
    shutil.rmtree(tmp_path / ".nbagent")
    del lab.front.cells[0]["metadata"]["nbagent"]["record"]  # an earlier version's mark, no record
    lab.restart()

    out = lab.run()

    # JupyterLab sends the cell's metadata: the line does not blame the front-end.
    assert UNFINISHED_LINE in out and out.index(UNFINISHED_LINE) < out.index("nbagent · ")
    assert NO_RECORD_LINE not in out and "replayed" not in out


def _inflating_to(megabytes: int) -> str:
    """A record's transcript field that inflates to ``megabytes`` MB of text (compressed a MB at a time)."""
    squeeze, chunk = zlib.compressobj(9), b"A" * (1 << 20)
    parts = [squeeze.compress(b'{"text/plain": "'), *(squeeze.compress(chunk) for _ in range(megabytes))]
    return base64.b64encode(b"".join([*parts, squeeze.compress(b'"}'), squeeze.flush()])).decode("ascii")


class Done:
    reason, error = "end_turn", None


def test_the_record_is_bounded(monkeypatch):
    monkeypatch.setattr(embedded, "MAX_TRANSCRIPT_BYTES", 2_000)
    huge = {"text/plain": "x" * 50_000 + "".join(map(str, range(20_000))), "text/html": "<p>" + "y" * 100_000}
    record = embedded.make_record(session="s", turn=1, prompt="q", cell_id="c", provider=None, bundle=huge,
                                  done=Done(), inputs=None, summary={})
    assert record is not None and record["text_only"] and len(record["transcript"]) <= 2_000
    assert len(json.dumps(record)) < 3_000


@pytest.mark.parametrize("megabytes", [20, 50], ids=["within-the-field-bound", "past-the-field-bound"])
def test_a_record_that_would_inflate_past_the_bound_is_refused_unread(monkeypatch, tmp_path, megabytes):
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "their_key"))
    record = embedded.make_record(session="20990101-000000-1-1", turn=1, prompt="q", cell_id="c", provider=None,
                                  bundle={"text/plain": "x", "text/html": "x"}, done=Done(), inputs=None, summary={})
    assert record is not None
    record["transcript"] = bomb = _inflating_to(megabytes)  # a received notebook's forged record
    assert (len(bomb) <= embedded.MAX_TRANSCRIPT_BYTES) == (megabytes == 20)
    tracemalloc.start()
    try:
        read = embedded.read_record({"nbagent": {"kind": "agent", "record": record}}, "q", "c")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert read is None and peak < 4 * embedded.MAX_UNPACKED_BYTES  # not the megabytes it would inflate to


def test_a_recorded_cell_whose_record_would_inflate_past_the_bound_says_so_before_asking(lab, tmp_path):
    lab.run()
    shutil.rmtree(tmp_path / ".nbagent")
    lab.record()["transcript"] = _inflating_to(20)
    lab.restart()

    out = lab.run()

    assert UNFINISHED_LINE in out and out.index(UNFINISHED_LINE) < out.index("nbagent · ")
    assert "replayed" not in out and "AAAA" not in out


def test_a_transcript_that_would_unpack_past_the_bound_is_kept_as_its_plain_text(monkeypatch, tmp_path):
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "my_key"))
    monkeypatch.setattr(embedded, "MAX_UNPACKED_BYTES", 100_000)
    bundle = {"text/plain": "391\n" + "." * 150_000, "text/html": "<p>" + "y" * 150_000}  # packs into a few KB
    record = embedded.make_record(session="20990101-000000-1-1", turn=1, prompt="q", cell_id="c", provider=None,
                                  bundle=bundle, done=Done(), inputs=None, summary={})

    assert record is not None and record["text_only"]
    read = embedded.read_record({"nbagent": {"kind": "agent", "record": record}}, "q", "c")
    assert read is not None and read.mine and read.bundle["text/plain"].startswith("391\n")
    assert len(json.dumps(read.bundle)) <= 100_000


def test_after_a_replay_from_the_notebook_status_and_history_describe_it(lab, tmp_path):
    lab.run()
    shutil.rmtree(tmp_path / ".nbagent")
    lab.restart()
    lab.run()

    lab.executing = None
    with capture_output() as status:
        lab.ip.run_cell("%agent status")
    with capture_output() as history:
        lab.ip.run_cell("%agent history")

    assert "no session yet" not in status.stdout
    assert "replayed     from the notebook's own records" in status.stdout and "1 turn(s) shown" in status.stdout
    assert "as recorded" in status.stdout
    table = "\n".join(o.data.get("text/plain", "") for o in history.outputs)
    assert "cost (recorded)" in table and "signed by you" in table


def test_the_replayed_history_shows_the_prompts_cached_tokens_not_an_input_of_zero(lab, tmp_path):
    """The simulated API (as the real one with caching) reports most of a prompt as cache tokens: the
    replayed turn's row said "input tokens 0" and nothing else of what the turn sent."""
    lab.run()
    shutil.rmtree(tmp_path / ".nbagent")
    lab.restart()
    lab.run()
    lab.executing = None
    history = replayed.notebook_history(magics_mod.active_magics())
    row = history.iloc[0]
    assert row["input tokens"] + row["cache write"] + row["cache read"] > 1_000  # what the turn sent
    assert row["cache write"] > 0

    summary = dict(lab.record()["summary"])
    del summary["cache_write_tokens"]  # a record made before the cache counts: unknown, never 0
    assert "cache_write_tokens" not in embedded._summary(summary) and embedded._summary(summary)["requests"] >= 1


def test_a_cell_run_again_replays_its_latest_answer_not_the_one_it_replaced(lab, tmp_path):
    lab.front.cells.append({"cell_type": "code", "id": "c-next", "source": "%%agent\nwhat is 6 * 7? use python",
                            "metadata": {}, "outputs": [], "execution_count": None})
    lab.run()
    lab.run()  # the same cell again, live: turn 2 replaces turn 1's answer in the notebook
    assert lab.record()["turn"] == 2
    later = next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-next")  # below the agent's cells
    assert "42" in lab.run(later)  # the next cell: turn 3
    lab.restart()

    again = lab.run()  # Restart & Run All, with the folder's record beside the notebook

    assert "replayed: session" in again and ", turn 2" in again and ", turn 1" not in again
    assert "changed since" not in again
    after = lab.run(later)
    assert ", turn 3" in after and "42" in after  # the record goes on after the replayed turn


def test_a_turn_rolled_back_in_the_folder_is_not_replayed_from_the_cell(lab, tmp_path):
    lab.run()
    lab.ip.run_cell("%agent rollback 0")
    lab.restart()

    out = lab.run()

    assert "replayed" not in out and "391" not in out  # undone: neither shown nor asked again
    assert ROLLED_BACK_LINE in out and UNFINISHED_LINE not in out  # the cell has a record: it was undone
    assert magics_mod.active_magics().current is None  # no session loaded: nothing could ask


def test_a_turn_its_author_rolled_back_is_not_replayed_from_a_notebook_sent_without_its_folder(lab, tmp_path):
    lab.run()
    lab.ip.run_cell("%agent rollback 0")
    assert lab.front.cells[0]["metadata"]["nbagent"]["undone"] is True  # beside the signed record
    shutil.rmtree(tmp_path / ".nbagent")  # the .ipynb alone, as it was saved after the rollback
    lab.restart()

    out = lab.run()

    assert "replayed" not in out and "391" not in out and ROLLED_BACK_LINE in out
    assert magics_mod.active_magics().current is None  # nothing loaded, nothing asked


def test_an_undone_mark_someone_removed_does_not_revive_my_rolled_back_answer(lab, tmp_path):
    """The ``undone`` mark sat beside the signed record, unsigned: a collaborator who took it out of
    a notebook sent without its folder made Run All show the answer I rolled back as my own
    current one (``replayed: session``, its ``--allow`` carried). The rollback now signs the mark
    into the record: taken out of the mark it still holds; taken out of the record too, the
    record is no longer mine (plain text, "recorded by someone else")."""
    lab.run()
    lab.ip.run_cell("%agent rollback 0")
    shutil.rmtree(tmp_path / ".nbagent")
    mark = lab.front.cells[0]["metadata"]["nbagent"]
    del mark["undone"]  # the collaborator's edit
    lab.restart()
    out = lab.run()
    assert "391" not in out and ROLLED_BACK_LINE in out

    mark.pop("undone", None)
    mark["record"].pop("undone", None)
    lab.restart()
    out = lab.run()
    assert ROLLED_BACK_LINE in out or RECEIVED_LINE in out  # never shown as my own answer
    assert not ("replayed: session" in out and RECEIVED_LINE not in out and "391" in out)


def test_an_undone_cell_run_again_live_carries_its_new_turn_not_the_undone_mark(lab):
    lab.run()
    lab.ip.run_cell("%agent rollback 0")

    assert "391" in lab.run()  # asked again in the session that rolled back

    mark = lab.front.cells[0]["metadata"]["nbagent"]
    assert "undone" not in mark and mark["turn"] == 1 and mark["record"]["turn"] == 1


def test_with_cells_off_the_agent_cell_still_carries_its_record(lab, tmp_path):
    lab.front.cells[0]["source"] = f"%%agent --no-cells\n{QUESTION}"
    lab.run()
    assert len(lab.front.cells) == 1 and lab.record()["turn"] == 1  # no code cells, but the record
    shutil.rmtree(tmp_path / ".nbagent")
    lab.restart()

    assert "replayed: session" in lab.run()


FAILING = "What is 4 * 5?"


def _a_failed_turn(lab: Lab) -> int:
    """Turn 1 answered, then a turn whose request fails (401: Cancel, as nobody can click here):
    returns the failing agent cell's index."""
    from nbagent.providers.simulated import Fault

    lab.front.cells.append({"cell_type": "code", "id": "c-failing", "source": f"%%agent\n{FAILING}",
                            "metadata": {}, "outputs": [], "execution_count": None})
    lab.run()
    current = magics_mod.active_magics().current
    assert current is not None
    api = current.agent.simulated_api
    api.faults = {len(api.requests) + 1: Fault.auth()}
    failing = next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-failing")
    lab.run(failing, expect_error=True)
    return failing


def _retried(lab: Lab) -> tuple[int, int]:
    """A failed turn, then ``%agent retry`` in a cell below it: the two cells' indices."""
    failing = _a_failed_turn(lab)
    lab.front.cells.append({"cell_type": "code", "id": "c-retry", "source": "%agent retry", "metadata": {},
                            "outputs": [], "execution_count": None})
    retry = next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-retry")
    assert "20" in lab.run(retry)
    return failing, retry


def test_a_failed_turn_redone_by_agent_retry_replays_as_the_user_left_it(lab):
    failing, retry = _retried(lab)
    lab.restart()

    lab.run()
    original = lab.run(failing)  # its failure, as recorded, without failing the cell: Run All goes on
    again = lab.run(retry)

    assert "replayed: session" in original and replay_lines.RETRIED_BELOW_LINE in original
    assert "replayed: session" in again and ", turn 2" in again and "20" in again
    assert replay_lines.RETRIED_BELOW_LINE not in again
    assert magics_mod.active_magics().current is None  # no session loaded: nothing could ask


def test_a_second_agent_retry_that_retried_nothing_fails_again_on_replay(lab):
    # Live, the second retry found the prompt answered and failed; Run All must not claim it
    # showed the retried turn.
    failing, retry = _retried(lab)
    lab.front.cells.append({"cell_type": "code", "id": "c-retry-2", "source": "%agent retry", "metadata": {},
                            "outputs": [], "execution_count": None})
    second = len(lab.front.cells) - 1
    lab.run(second, expect_error=True)
    assert "was answered" in lab.error
    lab.restart()

    lab.run()
    lab.run(failing)
    assert "20" in lab.run(retry)
    again = lab.run(second, expect_error=True)

    assert "Nothing to retry: the last prompt was answered (turn 2" in lab.error
    assert "is the one replayed above" not in again + lab.error
    assert magics_mod.active_magics().current is None


def test_a_failed_turn_not_retried_still_fails_its_cell_on_replay(lab):
    failing = _a_failed_turn(lab)
    lab.restart()

    lab.run()
    out = lab.run(failing, expect_error=True)

    assert "replayed: session" in out and replay_lines.RETRIED_BELOW_LINE not in out
    assert magics_mod.active_magics().current is None


def test_without_the_folder_a_retried_failure_fails_again_and_the_retry_cell_still_replays(lab, tmp_path):
    failing, retry = _retried(lab)
    shutil.rmtree(tmp_path / ".nbagent")  # the .ipynb alone: nothing says the turn was retried
    lab.restart()

    lab.run()
    lab.run(failing, expect_error=True)
    again = lab.run(retry)  # run by hand after Run All stopped

    assert "replayed: session" in again and "20" in again
    assert magics_mod.active_magics().current is None



@pytest.mark.parametrize("schema", [False, True])
def test_the_notebook_alone_binds_a_replayed_out_cells_answer_again(lab, tmp_path, schema):
    if schema:
        lab.ip.run_cell("import pydantic\nclass Product(pydantic.BaseModel):\n    value: int")
    question = "what is 17 * 23? give the value" if schema else QUESTION
    lab.front.cells[0]["source"] = f"%%agent --out answer{' --schema Product' if schema else ''}\n{question}"
    lab.run()
    live = lab.ip.user_ns.pop("answer")
    assert live is not None
    shutil.rmtree(tmp_path / ".nbagent")  # the .ipynb alone
    lab.restart()

    again = lab.run()

    assert "replayed: session" in again and "not set by a replay" not in again
    assert lab.ip.user_ns["answer"] == live


def test_a_rolled_back_out_cell_leaves_its_name_as_it_was_and_says_so(lab):
    lab.front.cells[0]["source"] = f"%%agent --out answer\n{QUESTION}"
    lab.run()
    lab.ip.run_cell("%agent rollback 0")
    lab.restart()
    lab.ip.user_ns["answer"] = "the user's own value"

    out = lab.run()

    assert ROLLED_BACK_LINE in out and "answer is not set by a replay" in out
    assert lab.ip.user_ns["answer"] == "the user's own value"


def test_an_edited_prompt_says_it_was_edited_not_that_its_run_did_not_finish(lab, tmp_path):
    """Restart & Run All after the user edited a recorded agent cell's prompt: the cell asks the
    model and says why (its prompt changed), not that its last run was cut short or its record
    removed (the record is there, for the prompt as it was)."""
    lab.run()
    lab.restart()
    lab.front.cells[0]["source"] = "%%agent\nwhat is 17 * 24? use python"

    out = lab.run()

    assert "408" in out and "replayed" not in out
    line = live_lines.EDITED_LINE.format(turn=1)
    assert line in out and out.index(line) < out.index("nbagent · ")
    assert UNFINISHED_LINE not in out and NO_RECORD_LINE not in out


def test_a_recorded_cell_after_an_edited_one_says_why_it_asks_the_model(lab, tmp_path):
    """The second agent cell was not edited, but the first one was and went live: the second's
    recorded answer followed a conversation that is no longer this kernel's, so it asks the model,
    and says so before the request (never a silent live run)."""
    lab.front.cells.append({"cell_type": "code", "id": "c-next", "source": "%%agent\nwhat is 6 * 7? use python",
                            "metadata": {}, "outputs": [], "execution_count": None})
    lab.run()
    later = next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-next")
    assert "42" in lab.run(later) and lab.front.cells[later]["metadata"]["nbagent"]["record"]["turn"] == 2
    lab.restart()
    lab.front.cells[0]["source"] = "%%agent\nwhat is 17 * 24? use python"
    assert "408" in lab.run()
    later = next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-next")

    out = lab.run(later)

    assert "42" in out and "replayed: session" not in out
    line = live_lines.AFTER_LIVE_LINE.format(turn=2)
    assert line in out and out.index(line) < out.index("nbagent · ")


def test_an_agent_cell_run_again_in_its_own_live_session_says_nothing_more(lab, tmp_path):
    """The ordinary re-run of an agent cell in the kernel that answered it is no replay either, and
    needs no line: the cell asks again, as the user asked."""
    lab.run()

    out = lab.run()

    assert "391" in out and "replayed" not in out
    assert "ⓘ this cell's" not in out and "ⓘ no recorded answer" not in out


def _three_cells_the_second_edited(lab: Lab) -> Callable[[str], int]:
    """Three agent cells run live, then a fresh kernel with the second one's prompt edited; returns
    where a cell is, by id."""
    for cell_id, question in (("c-two", "what is 6 * 7? use python"), ("c-three", "what is 5 * 5? use python")):
        lab.front.cells.append({"cell_type": "code", "id": cell_id, "source": f"%%agent\n{question}",
                                "metadata": {}, "outputs": [], "execution_count": None})

    def at(cell_id: str) -> int:
        return next(i for i, c in enumerate(lab.front.cells) if c["id"] == cell_id)

    lab.run()
    lab.run(at("c-two"))
    lab.run(at("c-three"))
    lab.restart()
    lab.front.cells[at("c-two")]["source"] = "%%agent\nwhat is 6 * 8? use python"
    return at


def test_a_middle_prompt_edited_says_so_and_the_cells_after_it_say_why_they_ask(lab, tmp_path):
    """Restart & Run All after the second of three agent cells was edited: the first replays, the
    second says its prompt was edited (the record forks there), the third says why it asks again."""
    at = _three_cells_the_second_edited(lab)

    first, second, third = lab.run(), lab.run(at("c-two")), lab.run(at("c-three"))

    assert "replayed: session" in first and "ⓘ this cell's" not in first
    assert live_lines.EDITED_LINE.format(turn=2) in second and "48" in second
    assert live_lines.AFTER_LIVE_LINE.format(turn=3) in third and "25" in third
    assert "replayed: session" not in second + third


def test_a_pasted_copy_of_an_agent_cell_says_it_is_a_copy_not_that_its_run_did_not_finish(lab, tmp_path):
    """Copy and paste of a recorded agent cell (JupyterLab keeps the metadata, with the original's
    record, under a new id), run first in a fresh kernel: it asks the model, and says it is a copy."""
    lab.run()
    pasted = json.loads(json.dumps(lab.front.cells[0]))
    pasted["id"] = "c-pasted"
    lab.front.cells.append(pasted)
    lab.restart()

    out = lab.run(len(lab.front.cells) - 1)

    assert "391" in out and "replayed: session" not in out
    assert live_lines.COPIED_LINE in out and out.index(live_lines.COPIED_LINE) < out.index("nbagent · ")
    assert UNFINISHED_LINE not in out


@pytest.mark.parametrize("turn", [0, 1])
def test_a_rollback_cell_of_a_notebook_received_without_its_folder_does_not_stop_run_all(lab, tmp_path, turn):
    """A notebook emailed without ``.nbagent/`` with a ``%agent rollback`` cell in it: Run All
    replays the agent cells from their metadata, and the rollback cell says there is no
    conversation here to roll back instead of failing with "No agent session yet: run a %%agent
    cell first" (one had just run) and stopping Run All."""
    lab.run()
    lab.front.cells.append({"cell_type": "code", "id": "c-rollback", "source": f"%agent rollback {turn}",
                            "metadata": {}, "outputs": [], "execution_count": None})
    shutil.rmtree(tmp_path / ".nbagent")
    lab.restart()
    assert "replayed: session" in lab.run()

    out = lab.run(len(lab.front.cells) - 1)

    assert "nothing rolled back" in out and "no .nbagent/ folder" in out
    assert magics_mod.active_magics().current is None  # nothing loaded, nothing asked


def test_a_cell_left_with_live_says_it_asks_again_under_restart_and_run_all(lab, tmp_path):
    """``--live`` added once to ask again, and left in the cell: each Restart & Run All asks the model
    (a billed request with a key), and the cell says so, naming the recorded answer it does not
    replay; run again in the kernel that answered it, it says nothing more."""
    lab.run()
    lab.front.cells[0]["source"] = f"%%agent --live\n{QUESTION}"
    lab.restart()

    out = lab.run()

    line = live_lines.LIVE_LINE.format(turn=1)
    assert "391" in out and line in out and out.index(line) < out.index("nbagent · ")
    assert "ⓘ --live" not in lab.run()  # this kernel's own answer now


def test_restart_and_run_all_after_a_rollback_of_every_turn_does_not_stop_at_the_rollback_cell(lab, tmp_path):
    """The notebook's own ``%agent rollback 0`` cell undid its only turn; Restart & Run All: the agent
    cell says its turn was undone, and the rollback cell, reached again, has nothing to undo. Was:
    it failed with "No agent session yet: run a %%agent cell first" (one had just run) and Run All
    stopped there, before the user's cells below it."""
    lab.front.cells.append({"cell_type": "code", "id": "c-rollback", "source": "%agent rollback 0",
                            "metadata": {}, "outputs": [], "execution_count": None})
    def rollback() -> int:
        return next(i for i, c in enumerate(lab.front.cells) if c["id"] == "c-rollback")

    lab.run()
    assert "rolled back to the end of turn 0" in lab.run(rollback())
    lab.restart()
    assert ROLLED_BACK_LINE in lab.run()

    out = lab.run(rollback())

    assert "nothing rolled back" in out
    assert magics_mod.active_magics().current is None  # nothing loaded, nothing asked


def test_an_agent_cost_cell_of_a_notebook_received_without_its_folder_does_not_stop_run_all(lab, tmp_path):
    """01_quickstart ends with ``%agent cost``: received without ``.nbagent/``, its Run All replays the
    agent cells from their metadata, then the cost cell gives the recorded totals. Was: "No agent
    session yet: run a %%agent cell first", and Run All stopped there."""
    lab.run()
    lab.front.cells.append({"cell_type": "code", "id": "c-cost", "source": "%agent cost",
                            "metadata": {}, "outputs": [], "execution_count": None})
    shutil.rmtree(tmp_path / ".nbagent")
    lab.restart()
    assert "replayed: session" in lab.run()

    out = lab.run(len(lab.front.cells) - 1)

    assert "as recorded" in out and "requests" in out and "nothing spent in this kernel" in out
    assert magics_mod.active_magics().current is None


@pytest.mark.parametrize("command", ["%agent context", "%agent saw"])
def test_an_inspection_cell_of_a_notebook_received_without_its_folder_does_not_stop_run_all(lab, tmp_path, command):
    lab.run()
    lab.front.cells.append({"cell_type": "code", "id": "c-look", "source": command,
                            "metadata": {}, "outputs": [], "execution_count": None})
    shutil.rmtree(tmp_path / ".nbagent")
    lab.restart()
    assert "replayed: session" in lab.run()

    out = lab.run(len(lab.front.cells) - 1)  # expect_error=False: the cell does not fail

    assert "nothing to show: this kernel replayed 1 turn(s) from the notebook's own records" in out
    assert magics_mod.active_magics().current is None


@pytest.mark.parametrize("command", ["%agent context 1", "%agent saw"])
def test_an_inspection_cell_after_a_session_the_code_made_does_not_stop_run_all_without_the_folder(lab, tmp_path,
                                                                                                   command):
    # Notebook 05 received without .nbagent/: its first cell makes a session (which asks nothing
    # here), its agent cells replay from their metadata, and `%agent saw` failed with "No request
    # sent yet." (and `%agent context 1` with "no turn 1"): the empty session counted as one to show.
    lab.run()
    lab.front.cells.append({"cell_type": "code", "id": "c-look", "source": command,
                            "metadata": {}, "outputs": [], "execution_count": None})
    shutil.rmtree(tmp_path / ".nbagent")
    lab.restart().new_session()  # as the notebook's first cell does
    assert "replayed: session" in lab.run()

    out = lab.run(len(lab.front.cells) - 1)  # expect_error=False: the cell does not fail

    assert "nothing to show: this kernel replayed 1 turn(s) from the notebook's own records" in out


def test_a_later_cells_answer_older_than_an_edited_cell_above_it_is_asked_again_and_said_so(lab):
    # notebook 04 in JupyterLab: Run All, Restart & Run All, edit one prompt and run only that cell,
    # then Restart & Run All: the edited cell replays its new answer, and the cells below it, whose
    # answers were recorded before that edit, must not replay them as current
    from nbagent.notebook.document.live_lines import STALE_LINE

    for i, question in enumerate(["what is 6 * 7? use python", "what is 2 * 9? use python"]):
        lab.front.cells.append({"cell_type": "code", "id": f"c-{i}", "source": f"%%agent\n{question}",
                                "metadata": {}, "outputs": [], "execution_count": None})

    def at(cell_id: str) -> int:  # the agent's code cells go in below each agent cell: find it by id
        return next(i for i, c in enumerate(lab.front.cells) if c["id"] == cell_id)

    first = lab.front.cells[0]["id"]
    ids = [first, "c-0", "c-1"]
    for cell_id in ids:  # Run All, live: turns 1, 2, 3
        lab.run(at(cell_id))
    lab.restart()
    assert all("replayed: session" in lab.run(at(cell_id)) for cell_id in ids)  # Restart & Run All
    lab.front.cells[at("c-0")]["source"] = "%%agent\nwhat is 6 * 8? use python"
    assert "48" in lab.run(at("c-0"))  # run alone, live: turn 4
    lab.restart()

    shown = [lab.run(at(cell_id)) for cell_id in ids]  # Restart & Run All again

    assert "replayed: session" in shown[0] and "replayed: session" in shown[1] and "48" in shown[1]
    assert "replayed: session" not in shown[2] and "18" in shown[2]  # asked again, not the old answer
    assert STALE_LINE.format(turn=3) in shown[2]


def test_an_answer_older_than_an_edited_cell_above_that_went_to_a_later_session_is_asked_again(lab):
    # notebook 04's shape: a `--new` session at the end is the kernel's current one, so an edited
    # cell run alone is answered there; the cells below the edited one, in the first session, hold
    # answers recorded before the edit
    from nbagent.notebook.document.live_lines import STALE_LINE

    for cell_id, source in [("c-0", "what is 6 * 7? use python"), ("c-1", "what is 2 * 9? use python"),
                            ("c-new", "--new\nwhat is 5 * 5? use python")]:
        line, _, question = source.rpartition("\n")
        lab.front.cells.append({"cell_type": "code", "id": cell_id, "source": f"%%agent {line}\n{question}",
                                "metadata": {}, "outputs": [], "execution_count": None})

    def at(cell_id: str) -> int:
        return next(i for i, c in enumerate(lab.front.cells) if c["id"] == cell_id)

    ids = [lab.front.cells[0]["id"], "c-0", "c-1", "c-new"]
    for cell_id in ids:
        lab.run(at(cell_id))
    lab.restart()
    assert all("replayed: session" in lab.run(at(cell_id)) for cell_id in ids)
    lab.front.cells[at("c-0")]["source"] = "%%agent \nwhat is 6 * 8? use python"
    assert "48" in lab.run(at("c-0"))  # answered in the --new session, the kernel's current one
    lab.restart()

    shown = [lab.run(at(cell_id)) for cell_id in ids]

    assert "replayed: session" in shown[1] and "48" in shown[1]
    assert "replayed: session" not in shown[2] and "18" in shown[2]
    assert STALE_LINE.format(turn=3) in shown[2]


def test_a_session_made_in_code_after_a_replayed_cell_is_fresh_and_never_replaced_by_the_replayed_one(lab):
    # notebook 05's end in JupyterLab, in a kernel that asked the model already: `s = new_session()`,
    # an agent cell (replayed), `s = new_session(hooks=...)`, an agent cell. The last one continued
    # the replayed session instead (live, without the hook, so the hook lesson ran 1000 * 3)
    new = "s = __import__('nbagent').notebook.magics.active_magics().new_session()"
    lab.front.cells[0]["source"] = f"%%agent --live\n{QUESTION}"
    for cell_id, source in [("c-s1", new), ("c-a", "%%agent\nwhat is 6 * 7? use python"), ("c-s2", new),
                            ("c-b", "%%agent\nwhat is 2 * 9? use python")]:
        lab.front.cells.append({"cell_type": "code", "id": cell_id, "source": source, "metadata": {}, "outputs": [],
                                "execution_count": None})

    def at(cell_id: str) -> int:
        return next(i for i, c in enumerate(lab.front.cells) if c["id"] == cell_id)

    ids = [lab.front.cells[0]["id"], "c-s1", "c-a", "c-s2", "c-b"]
    for cell_id in ids:
        lab.run(at(cell_id))
    lab.restart()

    shown = [lab.run(at(cell_id)) for cell_id in ids]  # Restart & Run All: the first cell asks (--live)

    assert "replayed: session" in shown[2] and "42" in shown[2]
    assert "replayed: session" in shown[4] and "18" in shown[4]  # its own record, not a live turn elsewhere
    assert magics_mod.active_magics().current is lab.ip.user_ns["s"]  # the session the code made stays


def test_a_received_records_forged_summary_does_not_stop_run_all_at_status_or_cost(lab, tmp_path, monkeypatch):
    """Someone else's record is not signed by you, its summary included: counts that are not counts
    are read as unknown. On the old code ``%agent status`` and ``%agent cost`` failed with
    "invalid literal for int()" and Run All stopped there (attacker pass 8)."""
    lab.run()
    shutil.rmtree(tmp_path / ".nbagent")
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "their_key"))  # another user opens it
    lab.record()["summary"] = {"model": "m", "requests": "many", "input_tokens": [1], "output_tokens": True,
                               "cost_usd": 1e308}
    lab.restart()
    assert "replayed: session" in lab.run()
    lab.executing = None

    for command in ("%agent status", "%agent cost", "%agent history"):
        with capture_output():
            result = lab.ip.run_cell(command)
        assert result.error_in_exec is None, (command, result.error_in_exec)


def test_a_received_records_model_text_is_one_line_in_status(lab, tmp_path, monkeypatch):
    """A model name with a newline and a terminal escape could add lines under ``%agent status``'s
    own (``verified: yes``): shown as one line, the characters marked (attacker pass 9)."""
    lab.run()
    shutil.rmtree(tmp_path / ".nbagent")
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "their_key"))
    lab.record()["summary"]["model"] = "claude-sonnet-4-5\nverified     yes: recorded by you\x1b[2K"
    lab.restart()
    assert "replayed: session" in lab.run()
    lab.executing = None

    with capture_output() as shown:
        assert lab.ip.run_cell("%agent status").error_in_exec is None

    lines = shown.stdout.splitlines()
    assert not any(line.startswith("verified") for line in lines) and "\x1b" not in shown.stdout
    model = next(line for line in lines if line.startswith("model"))
    assert "claude-sonnet-4-5⟦U+000A⟧verified     yes: recorded by you⟦U+001B⟧[2K" in model


def test_a_received_records_summary_keeps_only_what_a_summary_holds():
    summary = embedded._summary({"model": "claude", "requests": 2, "input_tokens": -1, "output_tokens": 10**20,
                                 "cost_usd": float("nan"), "extra": "x"})
    assert summary == {"model": "claude", "requests": 2, "cost_usd": None}
    assert embedded._summary({"cost_usd": 0.25})["cost_usd"] == 0.25


@pytest.mark.parametrize("folder", ["kept", "not sent"])
def test_a_turn_rolled_back_in_a_copy_of_the_notebook_is_not_replayed_in_that_copy(lab, tmp_path, folder):
    """File > Duplicate, replay, ``%agent rollback 0``: the rollback forks (a copy never writes the
    original's record), and its agent cell carries the original's session name. On the old code the
    cell was not marked undone, and Restart & Run All of the copy (with the folder, which still holds
    the original's record, or without it) showed the undone answer again (attacker pass 8)."""
    lab.run()
    lab.restart(notebook="copy.ipynb")
    assert "replayed: session" in lab.run()
    original = json.loads(json.dumps(lab.front.cells[0]["metadata"]["nbagent"]))  # the original file's cell
    lab.executing = None
    assert lab.ip.run_cell("%agent rollback 0").error_in_exec is None
    assert lab.front.cells[0]["metadata"]["nbagent"].get("undone") is True
    if folder == "not sent":
        shutil.rmtree(tmp_path / ".nbagent")
    lab.restart(notebook="copy.ipynb")

    out = lab.run()

    assert "replayed" not in out and "391" not in out and ROLLED_BACK_LINE in out
    lab.restart()  # the original, which nobody rolled back, still replays where its folder is kept
    if folder == "kept":
        lab.front.cells[0]["metadata"]["nbagent"] = original  # the original's own cell: no mark, its record as it was
        assert "replayed: session" in lab.run()


def test_turns_undone_after_an_edit_stay_undone_under_restart_and_run_all(lab, tmp_path):
    """Three agent cells; the second edited and run (the record forks there), then ``%agent rollback 1``:
    Restart & Run All shows the second and the third as undone. The third carries the original
    session's turn, older than the fork shown above it, and was asked again as out of date."""
    at = _three_cells_the_second_edited(lab)
    lab.run(), lab.run(at("c-two"))
    lab.ip.run_cell("%agent rollback 1")
    lab.restart()

    first, second, third = lab.run(), lab.run(at("c-two")), lab.run(at("c-three"))

    assert "replayed: session" in first
    assert ROLLED_BACK_LINE in second and ROLLED_BACK_LINE in third
    assert "48" not in second + third and "25" not in second + third  # neither shown nor asked again


def test_a_cell_asking_several_prompts_says_which_one_was_edited_and_the_turn_of_each(lab, monkeypatch):
    # Notebook 02's loop asks twelve prompts from one code cell; its metadata carries the last turn's
    # record only. With prompt 4 edited, prompts 4-11 each said "this cell's prompt was edited since
    # its recorded answer (turn 12)": only one was edited, and none of them is turn 12.
    loop = ("import nbagent\nfor p in PROMPTS:\n"
            "    await nbagent.notebook.magics.run_agent_cell('', p)")
    lab.front.cells[0]["source"] = loop
    for module in (link, lookup):
        monkeypatch.setattr(module, "executing_code", lambda: lab.executing and lab.executing["source"])
    lab.ip.user_ns["PROMPTS"] = ["what is 2 * 3? use python", "what is 4 * 5? use python", "what is 6 * 7? use python"]
    lab.run()
    assert lab.record()["turn"] == 3
    lab.restart()
    lab.ip.user_ns["PROMPTS"] = ["what is 2 * 3? use python", "what is 4 * 9? use python", "what is 6 * 7? use python"]
    # The execute request carries the metadata the cell had when it was sent, for all its prompts.
    sent = json.loads(json.dumps(lab.front.cells[0]["metadata"]))
    for module in (link, lookup):
        monkeypatch.setattr(module, "executing_metadata", lambda: dict(sent, cellId=lab.front.cells[0]["id"]))

    out = lab.run()

    assert "replayed: session" in out.split("what is 4 * 9")[0]  # the first prompt replays
    assert live_lines.EDITED_LINE.format(turn=2) in out and "(turn 3): asking" not in out
    assert live_lines.AFTER_LIVE_LINE.format(turn=3) in out  # the last: not edited, asked after the edit
    assert out.count("was edited since") == 1


def test_a_replayed_cell_whose_model_option_names_another_model_says_so(lab):
    # The user added --model to ask a better model; Restart & Run All replays the recorded answer
    # (a replay asks no model), and was silent that it is another model's.
    from nbagent.notebook.document.live_lines import OTHER_MODEL_LINE

    lab.run()
    recorded = lab.record()["summary"]["model"]
    lab.front.cells[0]["source"] = f"%%agent --model claude-opus-5\n{QUESTION}"
    lab.restart()

    out = lab.run()

    assert "replayed: session" in out
    assert OTHER_MODEL_LINE.format(wanted="claude-opus-5", recorded=recorded) in out
    lab.front.cells[0]["source"] = f"%%agent --model {recorded}\n{QUESTION}"
    lab.restart()
    same = lab.run()
    assert "replayed: session" in same and "this cell names --model" not in same


def test_a_new_prompt_after_turns_replayed_from_the_notebook_alone_says_the_model_lacks_them(lab, tmp_path):
    """A notebook received without ``.nbagent/``: Run All replays its agent cells from their
    metadata, then the user asks something new below. That starts a new conversation (no folder,
    no history), and was silent: the user asking about "the result above" got a model that never
    saw it."""
    lab.run()
    shutil.rmtree(tmp_path / ".nbagent")
    lab.restart()
    assert "replayed: session" in lab.run()
    lab.front.cells.append({"cell_type": "code", "id": "c-new", "source": "%%agent\nwhat is 6 * 7? use python",
                            "metadata": {}, "outputs": [], "execution_count": None})

    out = lab.run(len(lab.front.cells) - 1)

    assert "42" in out and live_lines.NOTEBOOK_ONLY_LINE.format(turns=1) in out
    again = lab.run(len(lab.front.cells) - 1)  # the kernel's own conversation now: nothing more to say
    assert "a new conversation" not in again


def _nested_to(depth: int) -> str:
    """A record's transcript field whose JSON nests ``depth`` lists deep (a few hundred bytes packed)."""
    return base64.b64encode(zlib.compress(b"[" * depth, 9)).decode("ascii")


@pytest.mark.usefixtures("collections_keep_stack_left")
def test_a_record_whose_transcript_nests_deep_is_refused_not_a_recursion_error(lab, tmp_path):
    lab.run()
    shutil.rmtree(tmp_path / ".nbagent")
    lab.record()["transcript"] = _nested_to(200_000)  # a received notebook's forged record
    lab.restart()

    out = lab.run()

    assert "RecursionError" not in out + lab.error
    assert UNFINISHED_LINE in out and "replayed" not in out and "391" in out


@pytest.mark.usefixtures("collections_keep_stack_left")
def test_a_record_whose_summary_nests_deep_is_refused_not_a_recursion_error(lab, tmp_path):
    lab.run()
    shutil.rmtree(tmp_path / ".nbagent")
    nested = []  # (an untyped test: mypy would only note an annotation here)
    for _ in range(980):  # within what the execute request's JSON parser takes, past what signing can dump
        nested = [nested]
    lab.record()["summary"] = {"model": nested}
    lab.restart()

    out = lab.run()

    assert "RecursionError" not in out + lab.error


def _fix_recorded(lab) -> None:
    """A broken cell, ``%agent fix`` answered live, then a fresh kernel (nothing has failed in it)
    where the user deleted the broken cell, and the cell above the fix ran."""
    lab.front.cells[0]["source"] = "import pandas as pd\nsales = pd.DataFrame({'region': ['a', 'b'], 'revenue': [1.0, 2.0]})"
    lab.front.cells.append(lab.front._with_id({"cell_type": "code", "source": "sales.groupby('regoin')['revenue'].sum()"}))
    lab.front.cells.append(lab.front._with_id({"cell_type": "code", "source": "%agent fix"}))
    lab.run(0)
    lab.run(1, expect_error=True)
    assert "'region'" in lab.run(2) and lab.front.cells[2]["metadata"]["nbagent"]["record"]["fix"] is True
    magics = lab.restart()
    magics.last_error.text = magics.last_error.cell = None
    del lab.front.cells[1]
    lab.run(0)


def test_a_fix_cell_whose_failed_cell_was_deleted_shows_its_recorded_fix_and_lets_run_all_go_on(lab):
    # The user's next step after %agent fix --insert-code: delete the broken cell (the fix is below
    # it now), save, Restart & Run All. Nothing has failed in the fresh kernel: the fix cell must not
    # stop Run All with "No failed cell to fix", nor lose the fix it showed.
    _fix_recorded(lab)

    again = lab.run(1)  # failed with UsageError: No failed cell to fix

    assert command_replay.NOTHING_TO_FIX_LINE.split("(")[0] in again and "'region'" in again
    assert magics_mod.active_magics().current is None  # nothing asked


def test_a_cell_retyped_into_agent_fix_never_shows_the_answer_it_had_to_another_prompt(lab):
    # Review LOW-9: the cell answered "what is 17 * 23?" (record in its metadata, same id); the user
    # retyped it into %agent fix. At Restart & Run All nothing has failed: the earlier, unrelated
    # answer is no fix, and must not pass under "Below is the fix as recorded then".
    assert "391" in lab.run()
    magics = lab.restart()
    magics.last_error.text = magics.last_error.cell = None
    lab.front.cells[0]["source"] = "%agent fix"

    again = lab.run(expect_error=True)

    assert "No failed cell to fix" in lab.error
    assert "391" not in again and command_replay.NOTHING_TO_FIX_LINE.split("(")[0] not in again


def test_a_fix_cell_carrying_someone_else_s_record_says_so_when_it_shows_it(lab, monkeypatch, tmp_path):
    # A received notebook's %agent fix cell (its record signed with another key, or forged in the
    # .ipynb's metadata) was shown as "the fix as recorded then" with nothing saying it was not the
    # user's, where every replayed agent cell says so (attacker pass 12, F7; review LOW-9).
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "their_key"))  # they recorded it
    _fix_recorded(lab)
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "my_key"))  # I run their notebook
    lab.restart()
    lab.run(0)

    again = lab.run(1)

    assert command_replay.NOTHING_TO_FIX_LINE.split("(")[0] in again and replay_lines.RECEIVED_LINE in again
    assert "'region'" in again
    html = [o["data"] for o in lab.ip.display_pub.outputs if "text/html" in o["data"]]
    assert not any("region" in d["text/html"] for d in html)  # their HTML never reaches the page


def test_a_chat_mode_prompt_replays_with_a_way_to_ask_again_it_can_follow(lab, monkeypatch):
    # A chat-mode prompt is a plain cell: "--live" on its first line would be part of the question.
    lab.ip.run_cell("%agent mode chat")
    try:
        lab.front.cells[0]["source"] = QUESTION
        assert "391" in lab.run()
        lab.restart()
        monkeypatch.setattr(cell_run, "executing_request", lambda: {"content": {"code": QUESTION}})
        again = lab.run()
    finally:
        lab.ip.run_cell("%agent mode python")
    assert "replayed: session" in again and "make %%agent --live the cell's first line" in again
    assert "add --live" not in again


@pytest.mark.parametrize("command", ["%agent cost", "%agent history", "%agent status"])
def test_totals_after_a_session_the_code_made_give_the_recorded_turns_not_zero_without_the_folder(lab, tmp_path,
                                                                                                  command):
    # A lesson received without .nbagent/: a cell makes a session (notebook 03's
    # `magics.new_session()`, or `nbagent.session().agent.simulated_api` to set faults) that asks
    # nothing, the agent cells replay from their metadata, and `%agent cost` said "spent $0.0000 in
    # 0 request(s)" (`history`: "no requests yet") under answers that show what they cost.
    lab.run()
    lab.front.cells.append({"cell_type": "code", "id": "c-look", "source": command,
                            "metadata": {}, "outputs": [], "execution_count": None})
    shutil.rmtree(tmp_path / ".nbagent")
    lab.restart().new_session()  # as the lesson's cell does
    assert "replayed: session" in lab.run()

    out = lab.run(len(lab.front.cells) - 1)

    assert "$0.0000" not in out and "no requests yet" not in out and "0 request(s)" not in out
    assert "as recorded" in out or "cost (recorded)" in out


def test_the_explorer_after_a_replay_opens_on_the_replayed_session_not_a_synthetic_one(lab, tmp_path):
    # A lesson ending with `%agent explore`, Restart & Run All: the agent cell replays (no session
    # loaded), and the explorer showed "synthetic: 60 requests … window 8,000" as the lesson's.
    lab.run()
    lab.front.cells.append({"cell_type": "code", "id": "c-explore", "source": "%agent explore",
                            "metadata": {}, "outputs": [], "execution_count": None})
    lab.restart()
    assert "replayed: session" in lab.run()

    out = lab.run(len(lab.front.cells) - 1)

    assert "live session" in out and "synthetic" not in out


def test_the_explorer_of_a_notebook_received_without_its_folder_says_its_conversation_is_synthetic(lab, tmp_path):
    lab.run()
    lab.front.cells.append({"cell_type": "code", "id": "c-explore", "source": "%agent explore",
                            "metadata": {}, "outputs": [], "execution_count": None})
    shutil.rmtree(tmp_path / ".nbagent")
    lab.restart()
    assert "replayed: session" in lab.run()

    out = lab.run(len(lab.front.cells) - 1)

    assert "no .nbagent/ folder here holds their conversation: the explorer below shows a synthetic one" in out


def test_a_replayed_cell_whose_window_option_changed_says_its_answer_ran_with_another_window(lab):
    # A teacher makes the window smaller to show the class truncation, then Restart & Run All: the
    # cell replays the turn recorded with the old window (its header "… / 4,000 window"), silently.
    from nbagent.notebook.document.live_lines import OTHER_WINDOW_LINE

    lab.front.cells[0]["source"] = f"%%agent --window 4000\n{QUESTION}"
    lab.run()
    assert lab.record()["summary"]["context_window"] == 4000
    lab.front.cells[0]["source"] = f"%%agent --window 2500\n{QUESTION}"
    lab.restart()

    out = lab.run()

    assert "replayed: session" in out
    assert OTHER_WINDOW_LINE.format(wanted=2500, recorded=4000) in out
    lab.front.cells[0]["source"] = f"%%agent --window 4000\n{QUESTION}"
    lab.restart()
    same = lab.run()
    assert "replayed: session" in same and "this cell names --window" not in same


def test_a_compact_cell_of_a_notebook_received_without_its_folder_passes_and_sends_nothing(lab, tmp_path):
    # Run All of a received notebook reaching `%agent compact`: it failed ("No agent session yet"),
    # stopping Run All, where nothing could be compacted without asking the model
    lab.front.cells.append({"id": "compact-cell", "cell_type": "code", "source": "%agent compact", "metadata": {}})
    lab.run(0)
    shutil.rmtree(tmp_path / ".nbagent")  # the .ipynb alone: emailed, committed, uploaded
    lab.restart()
    assert "replayed: session" in lab.run(0)

    out = lab.run(next(i for i, c in enumerate(lab.front.cells) if c["id"] == "compact-cell"))

    assert "nothing compacted: this kernel replayed the notebook's own records" in out
    assert magics_mod.active_magics().current is None  # no session, no request


def test_the_replayed_history_keeps_each_turns_retries_and_rate_limit_wait(lab, tmp_path):
    """The live ``%agent history`` shows a 429's retry and its wait; the same turn replayed from the
    notebook alone showed neither, as if it had run without one."""
    from nbagent.providers.simulated import Fault

    magics = magics_mod.active_magics()
    magics.new_session(allow=("python",))
    magics.current.agent.simulated_api.faults = {1: Fault.rate_limit(retry_after=0.3)}
    lab.run()
    live = magics.current.agent.session.records
    assert sum(r.retries for r in live) == 1 and sum(r.rate_limit_wait_s for r in live) > 0
    shutil.rmtree(tmp_path / ".nbagent")
    lab.restart()
    lab.run()

    row = replayed.notebook_history(magics_mod.active_magics()).iloc[0]

    assert row["retries"] == 1
    assert row["rate-limit wait s"] == round(sum(r.rate_limit_wait_s for r in live), 1)
    summary = dict(lab.record()["summary"])
    del summary["retries"], summary["rate_limit_wait_s"]  # an older record: unknown, never 0
    assert "retries" not in embedded._summary(summary) and "rate_limit_wait_s" not in embedded._summary(summary)
