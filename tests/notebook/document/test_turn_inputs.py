"""What a live turn records as its inputs (run through the notebook's executor, as the python tool
runs the model's code), and what a replay reports as changed."""

from __future__ import annotations

import asyncio
import os
import threading
from types import SimpleNamespace
from typing import Any, Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.notebook.document.fingerprint import fingerprint
from nbagent.notebook.document.input_changes import changed_line, changes
from nbagent.notebook.document.inputs import CellLog, TurnInputs, TurnWatch
from nbagent.notebook.executor import ShellExecutor


@pytest.fixture
def ip(tmp_path, monkeypatch) -> Iterator[Any]:
    monkeypatch.chdir(tmp_path)
    shell = InteractiveShell.instance()
    # The shell is shared with other in-process tests: start from no user variables, and leave its
    # namespace, its history lists and its post-run hooks as they were.
    saved = dict(shell.user_ns)
    history = shell.history_manager
    assert history is not None
    raw, parsed = list(history.input_hist_raw), list(history.input_hist_parsed)
    hooks = list(shell.events.callbacks["post_run_cell"])
    for name in [n for n in shell.user_ns if not n.startswith("_") and n not in shell.user_ns_hidden]:
        del shell.user_ns[name]
    (tmp_path / "sales.csv").write_text("region,revenue\nnorth,262\nsouth,100\nwest,50\n")
    shell.run_cell("import pandas as pd\nsales = pd.read_csv('sales.csv')\nrate = 2", store_history=True)
    try:
        yield shell
    finally:
        shell.user_ns.clear()
        shell.user_ns.update(saved)
        history.input_hist_raw[:], history.input_hist_parsed[:] = raw, parsed
        shell.events.callbacks["post_run_cell"][:] = hooks


def turn(ip: Any, root: Any, *codes: str) -> TurnInputs:
    """One live turn whose model runs ``codes`` with the python tool."""
    executor = ShellExecutor(ip)
    watch = TurnWatch(ip, root, None)
    executor.before_execute, executor.after_execute = watch.before_code, watch.after_code

    async def run() -> None:
        with watch:
            for code in codes:
                result = await executor.execute(code)
                assert result.error is None, result.error

    asyncio.run(run())
    return watch.inputs()


def test_variables_the_code_read_are_fingerprinted_before_it_runs(ip, tmp_path):
    inputs = turn(ip, tmp_path, "sales['revenue'] = sales['revenue'] * rate", "total = sales.revenue.sum()",
                  "print(total)")
    assert set(inputs.read) == {"sales", "rate"}  # total: the turn's own; pd: a module
    ip.run_cell("sales = pd.read_csv('sales.csv')")
    assert inputs.read["sales"] == fingerprint(ip.user_ns["sales"])  # as it was read, not as doubled
    assert changes(inputs, ip, tmp_path) == []
    ip.run_cell("sales = sales.iloc[::-1]")
    assert changes(inputs, ip, tmp_path) == ["`sales`"]


def test_a_variable_the_code_assigns_before_it_reads_it_is_the_turns_own_not_an_input(ip, tmp_path):
    # The agent loads the data again in a kernel that already had it (Run All twice, then Restart &
    # Run All): `top` is assigned by the code before it reads it, so its earlier value is no input.
    ip.run_cell("top = sales.head(2)")
    inputs = turn(ip, tmp_path, "top = sales.nlargest(2, 'revenue')\ntop", "for i in range(2):\n    rate = rate + i")
    assert set(inputs.read) == {"sales", "rate"}  # rate: read in the statement that assigns it
    ip.run_cell("top = sales.tail(2)")  # same shape, other rows: what the model was shown of it is the same
    assert changes(inputs, ip, tmp_path) == []
    del ip.user_ns["top"]  # a fresh kernel: the agent's own cell makes it again after the replay
    assert changes(inputs, ip, tmp_path) == []


def test_a_variable_the_turn_loaded_again_as_it_was_is_not_changed_in_a_fresh_kernel(ip, tmp_path):
    # Run All twice in one kernel: the second turn is told `sales` in full (the first turn loaded it)
    # and its code loads it again, the same. Restart & Run All replays it before the code cells below
    # make `sales` again: "`sales` (no longer defined) changed" was a false alarm.
    executor, watch = ShellExecutor(ip), TurnWatch(ip, tmp_path, None)
    executor.before_execute, executor.after_execute = watch.before_code, watch.after_code
    watch.told_in_full(["sales"])

    async def run() -> None:
        with watch:
            assert (await executor.execute("sales = pd.read_csv('sales.csv')\nsales.shape")).error is None

    asyncio.run(run())
    inputs = TurnInputs.from_json(watch.inputs().to_json())
    del ip.user_ns["sales"]
    assert changes(inputs, ip, tmp_path) == []
    (tmp_path / "sales.csv").write_text("region,revenue\nnorth,1\n")  # the file it loaded did change
    assert changes(inputs, ip, tmp_path) == ["sales.csv"]
    ip.run_cell("sales = pd.read_csv('sales.csv')")  # defined before the agent cell, and other than told
    assert changes(inputs, ip, tmp_path) == ["`sales`", "sales.csv"]


def test_a_variable_only_shown_counts_by_what_the_model_saw(ip, tmp_path):
    inputs = turn(ip, tmp_path, "print(1)")
    assert "sales" in inputs.shown and "rate" in inputs.shown and not inputs.read
    ip.run_cell("sales.loc[2, 'revenue'] = 871.5")  # same shape: the model was not shown it
    assert changes(inputs, ip, tmp_path) == []
    ip.run_cell("rate = 3\ndel sales")  # a scalar's value is shown; a shown variable gone is not reported
    assert changes(inputs, ip, tmp_path) == ["`rate`"]


def test_files_the_code_read_count_and_files_the_turn_wrote_do_not(ip, tmp_path):
    (tmp_path / ".hidden.csv").write_text("x\n1\n")
    inputs = turn(ip, tmp_path, "fresh = pd.read_csv('sales.csv')",
                  "open('out.txt', 'w').write('made here')\nprint(open('out.txt').read())",
                  "pd.read_csv('.hidden.csv')\nimport json")
    assert list(inputs.files) == ["sales.csv"]
    assert changes(inputs, ip, tmp_path) == []
    (tmp_path / "sales.csv").write_text("region,revenue\nnorth,262\nsouth,100\nwest,871.5\n")
    assert changes(inputs, ip, tmp_path) == ["sales.csv"]
    (tmp_path / "sales.csv").unlink()
    assert changes(inputs, ip, tmp_path) == ["sales.csv (missing)"]


def test_a_received_record_never_makes_a_replay_read_outside_the_folder_or_block(ip, tmp_path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    outside.write_text("the user's own file")
    (tmp_path / "link.csv").symlink_to(outside)
    (tmp_path / ".hidden.csv").write_text("x")
    os.mkfifo(tmp_path / "data.csv")  # a tar archive carries FIFOs: opening one for reading blocks
    empty = "0:" + "0" * 32
    named = ["/dev/null", f"../{outside.name}", str(outside), "link.csv", ".hidden.csv", "data.csv"]
    inputs = TurnInputs({}, {}, {rel: empty for rel in named}, {}, {}, ())
    found: list[list[str]] = []
    reader = threading.Thread(target=lambda: found.append(changes(inputs, ip, tmp_path)), daemon=True)
    reader.start()
    reader.join(timeout=30)
    if reader.is_alive():  # the old behaviour: release the blocked open before failing
        os.close(os.open(tmp_path / "data.csv", os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("the replay blocked on a FIFO named by the record")
    assert found == [[*(f"{rel} (not a file of this folder)" for rel in named[:5]), "data.csv (not a regular file)"]]


def test_opening_files_outside_a_turn_records_nothing(ip, tmp_path):
    watch = TurnWatch(ip, tmp_path, None)
    with watch:
        pass
    open(tmp_path / "sales.csv").read()
    assert watch.inputs().files == {}


def _ran(ip: Any, log: CellLog, text: str, cell_id: str | None) -> None:
    ip.history_manager.input_hist_raw.append(text)
    if cell_id is not None:
        log._after_cell(SimpleNamespace(info=SimpleNamespace(cell_id=cell_id, raw_cell=text)))


def test_the_cells_in_context_are_the_ones_last_run_and_an_edited_one_is_named(ip, tmp_path):
    log = CellLog(ip)
    before = list(ip.history_manager.input_hist_raw)  # the fixture's cell (sales, rate)
    _ran(ip, log, "x = 1  # first try", "c1")
    _ran(ip, log, "x = 2  # fixed", "c1")
    _ran(ip, log, "y = 5", None)  # a client that sends no cell id
    watch = TurnWatch(ip, tmp_path, log)
    assert "x = 1  # first try" not in watch.cells.values() and {"x = 2  # fixed", "y = 5"} <= set(watch.cells.values())
    inputs = watch.inputs()

    kernel = CellLog(ip)  # Run All in a new kernel: the same cells, the same ids
    ip.history_manager.input_hist_raw[:] = before
    _ran(ip, kernel, "x = 2  # fixed", "c1")
    _ran(ip, kernel, "y = 5", None)
    assert changes(inputs, ip, tmp_path, kernel) == []

    ip.history_manager.input_hist_raw[:] = before
    edited = CellLog(ip)
    _ran(ip, edited, "x = 3  # edited since", "c1")
    # Named as it reads now (where the user finds it); the cell without an id as it was recorded.
    assert changes(inputs, ip, tmp_path, edited) == ["the cell `x = 3  # edited since`", "the cell `y = 5`"]

    ip.history_manager.input_hist_raw[:] = before
    deleted = CellLog(ip)
    _ran(ip, deleted, "y = 5", None)
    assert changes(inputs, ip, tmp_path, deleted) == []  # cell c1 is gone, or further down: only shown


def test_a_cell_the_turn_fixed_itself_is_not_changed_when_its_answer_replays(ip, tmp_path):
    # The turn had the user's broken cell in context and fixed it (notebook_edit, then notebook_run):
    # Run All runs the fixed text above the agent cell, which is the turn's own work.
    log = CellLog(ip)
    before = list(ip.history_manager.input_hist_raw)
    _ran(ip, log, "total = sales.revenue.sum(", "c1")
    _ran(ip, log, "y = 5", "c2")
    log.agent_texts["c2"] = "y = 4"  # an earlier turn's edit: not this turn's
    watch = TurnWatch(ip, tmp_path, log)
    log.agent_edited("c1", "total = sales.revenue.sum()")
    log.agent_ran("c1", "total = sales.revenue.sum()")
    inputs = watch.inputs()
    assert set(inputs.left_cells) == {"c1"}
    assert TurnInputs.from_json(inputs.to_json()) == inputs

    for c1, expected in [("total = sales.revenue.sum()", []),  # as the turn left it
                         ("total = sales.revenue.sum(", []),  # as the turn found it
                         # named as it reads now: was by the broken text the turn fixed, no longer there
                         ("total = sales.revenue.max()", ["the cell `total = sales.revenue.max()`"])]:
        ip.history_manager.input_hist_raw[:] = before
        kernel = CellLog(ip)
        _ran(ip, kernel, c1, "c1")
        _ran(ip, kernel, "y = 5", "c2")
        assert changes(inputs, ip, tmp_path, kernel) == expected, c1


def test_a_value_the_turns_own_code_changed_is_not_changed_when_its_answer_replays(ip, tmp_path):
    # notebook_run of a cell above the agent cell ("rate = 3") sets `rate` before the replay compares.
    inputs = turn(ip, tmp_path, "print(sales.shape)", "sales['revenue'] = sales['revenue'] * 2\nrate = 3")
    assert set(inputs.left_values) == {"sales", "rate"} and "sales" in inputs.read and "rate" in inputs.shown
    assert changes(inputs, ip, tmp_path) == []  # as the turn left them
    ip.run_cell("sales = pd.read_csv('sales.csv')\nrate = 2")
    assert changes(inputs, ip, tmp_path) == []  # as the turn found them
    ip.run_cell("sales = sales.head(1)\nrate = 4")
    assert changes(inputs, ip, tmp_path) == ["`sales`", "`rate`"]
    ip.run_cell("sales = object()")  # no fingerprint now: changed, not "as found"
    assert changes(inputs, ip, tmp_path)[0] == "`sales`"


def test_a_record_written_before_the_turns_own_edits_were_kept_still_reads():
    old = {"read": {}, "shown": {}, "files": {}, "cells": {"01": "x = 1"}, "cell_ids": {"01": "c1"},
           "unchecked": []}
    assert TurnInputs.from_json(old) == TurnInputs(cells={"01": "x = 1"}, cell_ids={"01": "c1"})
    assert TurnInputs.from_json(old).to_json() == old
    for bad in ({"left_cells": {"c1": 3}}, {"left": {"c1": "01"}}):
        with pytest.raises(ValueError):
            TurnInputs.from_json({**old, **bad})


def test_inputs_round_trip_and_reject_anything_else():
    inputs = TurnInputs({"sales": "ab"}, {"rate": "cd"}, {"sales.csv": "8:ef"}, {"01": "x = 1"}, {"01": "c1"},
                        ("model",))
    assert TurnInputs.from_json(inputs.to_json()) == inputs
    with pytest.raises(ValueError):
        TurnInputs.from_json({**inputs.to_json(), "read": {"sales": 1}})


def test_the_line_names_what_changed():
    assert changed_line(["`sales`"]) == "`sales` changed since this answer was recorded"
    assert changed_line(["`a`", "b.csv"]).startswith("`a` and b.csv changed")
    assert changed_line(["`a`", "`b`", "`c`", "`d`", "`e`"]).startswith("`a`, `b`, `c` and 2 more changed")


KEY = "sk-ant-api03-" + "Qw7Lm3Np5Rt8Vy2Kb6Hd4Zx9" * 4
PASSWORD = "Tr0ub4dor&3-horse"


def test_a_secret_in_a_cell_or_a_variable_the_code_read_is_not_saved_in_the_record(ip, tmp_path):
    """The record (task folder and notebook metadata) names each cell in context by its first
    line, cut to 60 characters, and keeps an unsalted digest of each variable the code read: a key
    set in a cell was saved there (its first 53 characters), and a password's digest could be
    checked offline by whoever received the notebook. Through ``watch_turn``, as a live turn records."""

    ip.run_cell(f'key = "{KEY}"', store_history=True)
    ip.run_cell(f'password = "{PASSWORD}"  # from the vault', store_history=True)
    inputs = _inputs_of(ip, tmp_path, "n = len(password) + len(key) + rate")  # the key found by its shape
    saved = repr(inputs.to_json())
    assert KEY[:20] not in saved and PASSWORD not in saved
    assert not any(line.startswith(("key = ", "password = ")) for line in inputs.cells.values()), inputs.cells
    for source in (f'key = "{KEY}"', f'password = "{PASSWORD}"  # from the vault'):
        assert fingerprint(source) not in saved  # the cell's digest: guesses of the password checked offline
    assert "import pandas as pd" in inputs.cells.values()  # the fixture's cell, no secret in it: kept
    assert fingerprint(PASSWORD) not in saved and fingerprint(KEY) not in saved
    assert {"password", "key"} <= set(inputs.unchecked) and "rate" in inputs.read  # not compared at a replay


def test_a_password_variable_of_the_notebook_is_not_saved_in_the_record(ip, tmp_path):
    """The record is watched with the session's sanitizer taken before the run, which knew the
    environment's and configured secrets only: a one-line cell ``db_password = "…"`` (a credential
    variable, redacted from the model) was saved by its first line, and the variable's digest when
    the code read it, in the task folder and the notebook's metadata (attacker pass 11)."""
    from nbagent import Agent
    from nbagent.notebook.kernel_context import KernelContext
    from nbagent.providers.anthropic import simulated_provider
    from nbagent.providers.simulated import SimulatedAPI

    ip.run_cell(f'db_password = "{PASSWORD}"', store_history=True)
    agent = Agent(provider=simulated_provider(SimulatedAPI()), cwd=tmp_path, read_mcp_json=False,
                  kernel_facts=KernelContext(ip))
    inputs = _inputs_of(ip, tmp_path, "n = len(db_password) + rate", sanitizer=agent.engine.sanitizer)
    agent.close()
    saved = repr(inputs.to_json())
    assert PASSWORD not in saved and fingerprint(PASSWORD) not in saved
    assert "db_password" in inputs.unchecked and "rate" in inputs.read


def _inputs_of(ip: Any, tmp_path: Any, code: str, sanitizer: Any = None) -> TurnInputs:
    """What one turn whose python call runs ``code`` depended on, with ``PASSWORD`` as the session's
    ``secret_env`` value (a key is found by its shape), or with the engine's ``sanitizer``."""
    from nbagent.engine.loop.sanitize import Sanitizer
    from nbagent.notebook.document.cell_run import watch_turn

    executor = ShellExecutor(ip)
    given = Sanitizer((PASSWORD,))
    engine = SimpleNamespace(sanitizer=sanitizer or (lambda: given))
    sess = SimpleNamespace(executor=executor, agent=SimpleNamespace(engine=engine))
    magics = SimpleNamespace(shell=ip, cell_log=None,
                             document=SimpleNamespace(root=tmp_path, records=lambda agent: True))

    async def run() -> TurnInputs:
        with watch_turn(magics, sess) as watch:  # type: ignore[arg-type]
            assert watch is not None
            result = await executor.execute(code)
            assert result.error is None, result.error
            return watch.inputs()

    return asyncio.run(run())


def test_a_secret_inside_a_container_frame_array_or_function_leaves_no_digest(ip, tmp_path):
    """``conn = {"host": "db", "user": "ana", "password": os.environ["DB_PASSWORD"]}``: the cell
    shows everything but the password, so the dict's digest in the record let whoever received the
    notebook check guesses of it offline (attacker pass 6, F11). Only a top-level string was spared."""
    import numpy as np
    import pandas as pd


    ip.user_ns.update(
        conn={"host": "db", "user": "ana", "password": PASSWORD},
        pair=("ana", [PASSWORD]),
        users=pd.DataFrame({"user": ["ana"], "pw": [PASSWORD]}),
        labelled=pd.Series([1], index=[PASSWORD]),
        names=np.array(["ana", PASSWORD]),
        plain={"host": "db", "user": "ana"},
    )
    ip.run_cell(f'def login():\n    return "{PASSWORD}"', store_history=True)
    (tmp_path / "db.ini").write_text(f"[db]\nhost = db\nuser = ana\npassword = {PASSWORD}\n")
    inputs = _inputs_of(ip, tmp_path, "x = (conn, pair, users, labelled, names, login, plain, rate)\n"
                                      "cfg = open('db.ini').read(); rows = open('sales.csv').read()")
    saved = repr(inputs.to_json())
    for name in ("conn", "pair", "users", "labelled", "names", "login"):
        assert name in inputs.unchecked and fingerprint(ip.user_ns[name]) not in saved, name
    assert {"plain", "rate"} <= set(inputs.read)  # holding no secret: compared at a replay as before
    assert list(inputs.files) == ["sales.csv"]  # db.ini, with the password in it, leaves no digest
