"""A replay compares a record's inputs with the notebook as it is now. The record may be received
(a notebook's metadata is anyone's to write), and the notebook now may hold secrets the record
never saw: the comparison must neither print one nor answer whether a guess of one is right."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.engine.loop.sanitize import Sanitizer, secret_values
from nbagent.notebook.document.fingerprint import file_fingerprint, fingerprint
from nbagent.notebook.document.input_changes import changes
from nbagent.notebook.document.inputs import CellLog, TurnInputs, cell_key

KEY = "sk-ant-api03-" + "Zq7Xw2Lm9Rt4Yp8Kd3Hv6Nb1Gf5Js0Ce" * 2
PASSWORD = "Summer2024!vault"


@pytest.fixture
def ip(tmp_path, monkeypatch) -> Iterator[Any]:
    monkeypatch.chdir(tmp_path)
    shell = InteractiveShell.instance()
    saved, history = dict(shell.user_ns), shell.history_manager
    assert history is not None
    raw, parsed = list(history.input_hist_raw), list(history.input_hist_parsed)
    try:
        yield shell
    finally:
        shell.user_ns.clear()
        shell.user_ns.update(saved)
        history.input_hist_raw[:], history.input_hist_parsed[:] = raw, parsed


def _ran(ip: Any, log: CellLog, text: str, cell_id: str | None) -> None:
    ip.history_manager.input_hist_raw.append(text)
    if cell_id is not None:
        log._after_cell(SimpleNamespace(info=SimpleNamespace(cell_id=cell_id, raw_cell=text)))


def _redact(*secrets: str) -> Any:
    return Sanitizer(secret_values((), secrets)).redact


def test_a_changed_cell_is_named_without_the_key_it_now_holds(ip, tmp_path):
    """The record names a cell in context by its id; the cell has since been edited to set a key in
    its first line. The replay named it by that line as it reads now, cut to 60 characters: the
    key's first 40 went into the agent cell's output and the saved notebook."""
    log = CellLog(ip)
    recorded = TurnInputs(cells={cell_key("client = Anthropic()"): "client = Anthropic()"},
                          cell_ids={cell_key("client = Anthropic()"): "c1"})
    _ran(ip, log, f'client = Anthropic(api_key="{KEY}")', "c1")
    found = changes(recorded, ip, tmp_path, log, redact=_redact())
    assert len(found) == 1 and "client = Anthropic(api_key=" in found[0]
    assert KEY[:16] not in repr(found)


def test_a_received_record_cannot_check_a_guess_of_a_secret(ip, tmp_path):
    """A received record's digests are the sender's: one that equals the digest of the user's
    password (a variable, a one-line cell of a known template, a config file, a cell's output) made
    the replay stay silent, any other said "changed", and the answer is saved in the notebook."""
    ip.user_ns["db_password"] = PASSWORD
    (tmp_path / "settings.ini").write_text(f"[db]\npassword = {PASSWORD}\n")
    log = CellLog(ip)
    cell = f'DB_PASSWORD = "{PASSWORD}"'
    _ran(ip, log, cell, None)
    n = len(ip.history_manager.input_hist_raw) - 1
    ip.user_ns.setdefault("Out", {})[n] = PASSWORD
    right = TurnInputs(read={"db_password": fingerprint(PASSWORD) or ""},
                       files={"settings.ini": file_fingerprint(tmp_path / "settings.ini") or ""},
                       cells={cell_key(cell): "a cell"}, outputs={cell_key(cell): fingerprint(PASSWORD) or ""})
    wrong = TurnInputs(read={"db_password": fingerprint("guess") or ""},
                       files={"settings.ini": file_fingerprint(tmp_path / "sales.csv") or "0:0"},
                       cells={cell_key('DB_PASSWORD = "guess"'): "a cell"},
                       outputs={cell_key(cell): fingerprint("guess") or ""})
    redact = _redact(PASSWORD)
    assert changes(right, ip, tmp_path, log, redact=redact) == changes(wrong, ip, tmp_path, log, redact=redact)


def test_restart_and_run_all_names_a_cell_edited_to_hold_a_key_without_the_key(tmp_path, monkeypatch):
    """In JupyterLab (cell ids and metadata sent): an agent cell answered with ``client = make()``
    in context; the user then typed the key into that cell. Restart & Run All replayed the answer
    under "⚠ the cell `client = make(api_key="sk-ant-api03-…` changed …": the key's first 30
    characters in the agent cell's output, saved with the notebook."""
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.utils.capture import capture_output

    from nbagent.notebook import magics as magics_mod
    from nbagent.notebook.document import bridge as bridge_mod

    from .test_replay_from_notebook import Lab

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "my_key"))
    shell = InteractiveShell.instance()
    saved_pub, history = shell.display_pub, shell.history_manager
    assert history is not None
    raw, parsed = list(history.input_hist_raw), list(history.input_hist_parsed)
    shell.display_pub = CapturingDisplayPublisher()
    shell.run_cell("%load_ext nbagent")
    magics = magics_mod.active_magics()
    magics.allow = ["python"]
    lab = Lab(shell, monkeypatch, tmp_path)
    lab.front.cells.insert(0, lab.front._with_id({"cell_type": "code", "source": "def make(**kw):\n    return kw"}))
    lab.front.cells.insert(1, lab.front._with_id({"cell_type": "code", "source": "client = make()"}))
    monkeypatch.setattr(bridge_mod, "executing_cell_id", lambda: lab.executing and lab.executing["id"])

    def run(i: int) -> str:
        lab.executing = lab.front.cells[i]
        try:
            with capture_output() as cap:
                shell.run_cell(lab.executing["source"], store_history=True, cell_id=lab.executing["id"])
        finally:
            lab.executing = None
        return cap.stdout + "\n".join(o.data.get("text/plain", "") for o in cap.outputs)

    try:
        lab.restart()
        run(0), run(1)
        assert "391" in run(2)  # live, recorded with `client = make()` in context
        lab.front.cells[1]["source"] = f'client = make(api_key="{KEY}")'
        lab.restart()
        for i in (0, 1):
            run(i)
        again = run(2)
        assert "changed since this answer was recorded" in again and "client = make(api_key=" in again
        assert KEY[:16] not in again
    finally:
        lab.restart()
        magics._document = None
        magics.allow = []
        shell.display_pub = saved_pub
        history.input_hist_raw[:], history.input_hist_parsed[:] = raw, parsed


def test_a_secret_the_turns_own_code_left_in_a_variable_it_read_gets_no_digest_in_the_record(ip, tmp_path):
    """An input the turn's code changed keeps its value as the turn left it too (so a cell the turn
    fixed is not called changed): ``cfg = cfg or load()`` left a dict holding a password, and its
    unsalted digest was saved in the record (task folder and notebook metadata), where whoever
    receives the notebook checks guesses of the password offline."""
    from .test_turn_inputs import PASSWORD as SECRET  # the session's secret_env value there
    from .test_turn_inputs import _inputs_of

    ip.user_ns["cfg"] = None
    ip.user_ns["rate"] = 2
    inputs = _inputs_of(ip, tmp_path, f'cfg = cfg or {{"host": "db", "password": "{SECRET}"}}\nn = rate')
    saved = repr(inputs.to_json())
    assert "cfg" in inputs.read and "rate" in inputs.read
    assert fingerprint({"host": "db", "password": SECRET}) not in saved


def test_a_password_is_not_kept_by_its_length_nor_compared_by_it(ip, tmp_path):
    """A variable the model was shown in a line is recorded by what it was shown: for a string, its
    type and length. A password's length went into the record, and a received record's length
    for it answered "is it 16 characters?" at every replay."""
    from nbagent.notebook.document.fingerprint import shown_fingerprint
    from nbagent.notebook.document.inputs import TurnWatch

    ip.user_ns["db_password"] = PASSWORD
    ip.user_ns["region"] = "north"
    redact = _redact(PASSWORD)
    recorded = TurnWatch(ip, tmp_path, None, redact=redact).inputs()
    assert "db_password" not in recorded.shown and "region" in recorded.shown

    right = TurnInputs(shown={"db_password": shown_fingerprint("x" * len(PASSWORD))})
    wrong = TurnInputs(shown={"db_password": shown_fingerprint("x" * 5)})
    assert changes(right, ip, tmp_path, redact=redact) == changes(wrong, ip, tmp_path, redact=redact)


def test_a_table_shown_then_masked_is_hidden_at_the_replay_as_the_turn_hid_it(ip):
    """The turn's redaction knew the passwords a table showed before a later cell masked it in place
    (what was shown is kept); the replay's did not, so the same output read as changed at every Run
    All, and the replay's digest held the raw password (review s58 M2)."""
    from nbagent.notebook.document import input_changes
    from nbagent.notebook.document.read_outputs import changed_read_outputs, hiding, read_digests
    from nbagent.notebook.kernel_context import KernelContext
    from nbagent.notebook.kernel_context.figures import DisplayedImages

    displayed = DisplayedImages(ip)
    assert ip.run_cell(f"import pandas as pd\nusers = pd.DataFrame({{'user': ['ana'], 'password': ['{PASSWORD}']}})").success
    shown = repr(ip.run_cell("users", store_history=True).result)
    assert ip.run_cell("users['password'] = users['password'].str.len()", store_history=True).success
    turn = Sanitizer(KernelContext(ip, None, displayed).secrets()).redact
    replay = input_changes.secrets_at_hand(SimpleNamespace(shell=ip, current=None, displayed=displayed))
    cells: Any = [{"id": "c1", "cell_type": "code", "source": "users", "metadata": {}, "outputs": [
        {"output_type": "execute_result", "execution_count": 2, "metadata": {}, "data": {"text/plain": shown}}]}]
    recorded = read_digests(cells, None, hiding(turn, ()))
    assert changed_read_outputs(recorded, cells, {"c1": "users"}, replay) == []
    assert PASSWORD not in replay(shown)
