"""The outputs ``notebook_read`` showed the model are an input of its answer: what a cell printed or
displayed (no ``Out[n]``, no variable) changes with the data, and a replayed answer read off it says
so. Pure functions here; the browser flow is tests/e2e/test_day_three.py (newcomer pass 14)."""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.notebook.document.cells import literal_secrets
from nbagent.notebook.document.inputs import TurnInputs, TurnWatch
from nbagent.notebook.document.read_outputs import (
    changed_read_outputs,
    changed_read_sources,
    hiding,
    outputs_digest,
    read_digests,
    source_digest,
)

from .test_replay_from_notebook import lab  # noqa: F401  (fixture: an in-process kernel with a front-end)


def _cell(cell_id: str, source: str, *outputs: dict[str, Any], mark: dict[str, Any] | None = None) -> Any:
    return {"id": cell_id, "cell_type": "code", "source": source, "outputs": list(outputs),
            "metadata": {"nbagent": mark} if mark else {}}


def _printed(text: str) -> dict[str, Any]:
    return {"output_type": "stream", "name": "stdout", "text": text}


def _value(text: str, count: int) -> dict[str, Any]:
    return {"output_type": "execute_result", "execution_count": count, "data": {"text/plain": text}, "metadata": {}}


def keep(text: str) -> str:
    return text


def test_a_printed_total_that_differs_is_a_changed_output_named_by_the_cells_first_line():
    read = read_digests([_cell("u1", "df = load()\nprint(df.total)", _printed("567.75\n"))], None, keep)
    now = [_cell("u1", "df = load()\nprint(df.total)", _printed("1367.75\n"))]
    assert changed_read_outputs(read, now, {"u1": "df = load()"}, keep) == ["the output of the cell `df = load()`"]
    same = [_cell("u1", "df = load()\nprint(df.total)", _printed("567.75\n"))]
    assert changed_read_outputs(read, same, {"u1": "df = load()"}, keep) == []


def test_an_output_is_compared_only_for_a_cell_that_has_run_here_by_then():
    read = read_digests([_cell("u1", "print(total)", _printed("1\n"))], None, keep)
    cleared = [_cell("u1", "print(total)")]  # further down, or not run yet: outputs of no run of this kernel
    assert changed_read_outputs(read, cleared, {}, keep) == []
    assert changed_read_outputs(read, cleared, {"u1": "print(total)"}, keep) == ["the output of the cell `print(total)`"]
    assert changed_read_outputs(read, [], {"u1": "print(total)"}, keep) == []  # deleted since: not reported


def test_a_value_numbered_anew_is_the_same_output():
    assert outputs_digest(_cell("u1", "t", _value("42", 3))) == outputs_digest(_cell("u1", "t", _value("42", 9)))


def test_an_objects_memory_address_in_its_repr_is_not_a_change():
    scatter = "<matplotlib.collections.PathCollection at 0x7f3a2c1d9e50>"  # plt.scatter(...)'s value
    assert outputs_digest(_cell("u1", "plt.scatter(x, y)", _value(scatter, 3))) == \
        outputs_digest(_cell("u1", "plt.scatter(x, y)", _value(scatter.replace("7f3a2c1d9e50", "7f11aa02b310"), 4)))


def test_an_address_the_cell_itself_reports_is_compared():
    """Only a default repr's address is new every run: a cell printing where its program crashed
    (``SIGSEGV at 0x7ffe1000``) printing another address is another output (attacker pass 23)."""
    crash = "SIGSEGV at 0x7ffe1000 in libfoo.so"
    assert outputs_digest(_cell("u1", "run()", _printed(crash))) != \
        outputs_digest(_cell("u1", "run()", _printed(crash.replace("1000", "2000"))))


def test_agent_cells_set_up_cells_and_the_asking_cell_are_no_input():
    cells = [_cell("a1", "%%agent\nwhat?", _printed("transcript")),
             _cell("a2", "what? (typed over)", _printed("x"), mark={"kind": "agent"}),
             _cell("m1", "%load_ext nbagent\n# set-up", _printed("already loaded")),
             _cell("me", "print(1)", _printed("1")),
             {"id": "md", "cell_type": "markdown", "source": "# Title"},
             _cell("u1", "print(2)", _printed("2"))]
    # A markdown note is no input: a read takes the notes below the agent cell too ("## Results",
    # filled in after the answer), which would read as changed at every replay (review of session 57).
    assert set(read_digests(cells, "me", keep)) == {"u1"}


def test_a_warning_on_stderr_and_percent_time_lines_are_no_change():
    # A warning's path names the kernel's pid (/tmp/ipykernel_<pid>/…); %%time prints another figure.
    def ran(pid: int, wall: str) -> Any:
        return _cell("u1", "%%time\ndf.total()",
                     {"output_type": "stream", "name": "stderr",
                      "text": f"/tmp/ipykernel_{pid}/1.py:2: FutureWarning: downcasting\n"},
                     _printed(f"CPU times: user 3 ms, sys: 0 ns, total: 3 ms\nWall time: {wall}\n"), _value("567.75", 3))
    assert outputs_digest(ran(4242, "2.1 ms")) == outputs_digest(ran(5151, "3.9 ms"))
    assert outputs_digest(ran(4242, "2.1 ms")) != outputs_digest(_cell("u1", "t", _value("1367.75", 3)))


def test_an_output_holding_a_secret_is_compared_as_read_with_the_secret_redacted():
    """It used to be left out of the record: a changed ``Engine(...)`` repr replayed its answer as current."""
    redact = lambda text: text.replace("hunter22", "[redacted]")  # noqa: E731
    engine = "Engine(postgresql://ana:hunter22@prod-db/sales)\n"
    read = read_digests([_cell("u1", "engine", _printed(engine))], None, redact)
    assert set(read) == {"u1"}
    # What is recorded is the digest of the text as the model read it: it says nothing of the secret.
    assert read == read_digests([_cell("u1", "engine", _printed(engine.replace("hunter22", "[redacted]")))], None, keep)
    assert changed_read_outputs(read, [_cell("u1", "engine", _printed(engine))], {"u1": "engine"}, redact) == []
    moved = [_cell("u1", "engine", _printed(engine.replace("prod-db", "test-db")))]
    assert changed_read_outputs(read, moved, {"u1": "engine"}, redact) == ["the output of the cell `engine`"]


def test_a_literal_secret_one_cell_prints_is_hidden_alike_in_the_record_and_at_the_replay():
    cells = [_cell("s", "pw = 'hunter22'"), _cell("u1", "print(pw, rows)", _printed("hunter22 3\n"))]
    read = read_digests(cells, None, hiding(keep, literal_secrets(cells)))
    assert read["u1"] == outputs_digest(_cell("u1", "", _printed("[redacted] 3\n")))
    assert changed_read_outputs(read, cells, {"s": "", "u1": ""}, keep) == []
    now = [cells[0], _cell("u1", "print(pw, rows)", _printed("hunter22 4\n"))]
    assert changed_read_outputs(read, now, {"s": "", "u1": ""}, keep) == ["the output of the cell `print(pw, rows)`"]
    named = [_cell("s", "pw = 'hunter22'\nprint(pw, rows)", _printed("hunter22 4\n"))]
    assert changed_read_outputs({"s": read["u1"]}, named, {"s": ""}, keep) == [
        "the output of the cell `pw = '[redacted]'`"]  # the line that names it goes into the saved notebook


def test_the_read_outputs_travel_in_the_record_and_an_older_record_reads_as_before():
    inputs = TurnInputs(read_outputs={"u1": "abc"})
    assert TurnInputs.from_json(inputs.to_json()) == inputs
    older = TurnInputs().to_json()
    assert "read_outputs" not in older and TurnInputs.from_json(older).read_outputs == {}


def test_a_cell_read_again_counts_as_last_seen_and_one_the_turn_replaced_or_ran_not_at_all(tmp_path):
    from IPython.core.interactiveshell import InteractiveShell

    watch = TurnWatch(InteractiveShell.instance(), tmp_path, None)
    watch.notebook_read({"u1": "first", "u2": "x", "u3": "y"}, {"u1": "s1", "u3": "s3"})
    watch.notebook_read({"u1": "read again"}, {})
    # The turn's notebook_edit replaced u3's text, and its notebook_run ran u2: its outputs are the
    # turn's work, in nbagent's own form, which a kernel's Run All never gives again.
    watch.notebook_read({"u3": None, "u2": None}, {"u3": None, "u2": None})
    watch.notebook_read({}, {"u3": "read after the turn edited it"})  # its text is the turn's work too
    assert watch.inputs().read_outputs == {"u1": "read again"}
    assert watch.inputs().read_sources == {"u1": "s1"}


def test_a_read_cells_text_that_differs_is_named_unless_the_context_showed_it_as_a_recent_cell():
    # The model read `threshold = 0.5` with notebook_read (no recent cell in its context showed it)
    # and answered from it; the user then set 0.7, and Run All replayed the answer as current.
    read = {"u2": source_digest(_cell("u2", "threshold = 0.5"), keep)}
    now = [_cell("u2", "threshold = 0.7")]
    assert changed_read_sources(read, now, (), keep) == ["the cell `threshold = 0.7` the model read"]
    assert changed_read_sources(read, [_cell("u2", "threshold = 0.5\n")], (), keep) == []
    assert changed_read_sources(read, now, ("u2",), keep) == []  # a recent cell: compared as one already
    assert changed_read_sources(read, [], (), keep) == []  # deleted since: not reported
    below = [_cell("a1", "%%agent\nwhat is the threshold?"), _cell("u2", "threshold = 0.7")]
    assert changed_read_sources(read, below, (), keep, "a1") == []  # below the agent cell: where work goes on
    assert changed_read_sources(read, below[::-1], (), keep, "a1") == ["the cell `threshold = 0.7` the model read"]


def test_a_read_cells_secret_is_hidden_in_its_texts_digest():
    pw = "Xy7-q2#Lm9!vR4"
    cell = _cell("u1", f'password = "{pw}"\nengine = connect(password)')
    hide = hiding(None, literal_secrets([cell]))
    rotated = _cell("u1", 'password = "Zq8_w3!Np0rT6"\nengine = connect(password)')
    assert source_digest(cell, hide) == source_digest(rotated, hiding(None, literal_secrets([rotated])))


def test_a_replayed_answer_after_notebook_read_says_which_cells_output_changed(lab):  # noqa: F811
    """The whole path in-process (the front-end played in Python): a live turn reads the notebook,
    its record keeps the printed output it read; after a restart the cell prints another total and
    the replayed answer says so, while the same output replays silently."""
    lab.front.cells[0]["source"] = "%%agent\nsummarise this notebook"
    lab.front.cells.insert(0, {"id": "u1", "cell_type": "code", "source": "print(total)", "metadata": {},
                               "execution_count": 1, "outputs": [_printed("567.75\n")]})

    def run_mine(printed: str) -> None:  # the user's cell, run in this kernel with its id, as the page sends it
        lab.ip.run_cell("total = 1", cell_id="u1")
        lab.front.cells[0]["outputs"] = [_printed(printed)]

    run_mine("567.75\n")
    assert "notebook_read" in lab.run(1)
    assert set(lab.front.cells[1]["metadata"]["nbagent"]["record"]["inputs"]["read_outputs"]) == {"u1"}

    lab.restart()
    run_mine("567.75\n")
    again = lab.run(1)
    assert "replayed: session" in again and "changed since" not in again

    lab.restart()
    run_mine("1367.75\n")
    again = lab.run(1)
    assert "the output of the cell `print(total)` changed since this answer was recorded" in again, again


def test_a_replayed_answer_after_notebook_read_says_a_read_cells_code_changed(lab):  # noqa: F811
    """A cell's code the model read with ``notebook_read`` and no recent cell in its context showed
    (not run in this kernel yet): its text changed since, and the replayed answer says so."""
    lab.front.cells[0]["source"] = "%%agent\nsummarise this notebook"
    lab.front.cells.insert(0, {"id": "u2", "cell_type": "code", "source": "threshold = 0.5", "metadata": {},
                               "execution_count": None, "outputs": []})
    assert "notebook_read" in lab.run(1)
    assert set(lab.front.cells[1]["metadata"]["nbagent"]["record"]["inputs"]["read_sources"]) == {"u2"}

    lab.restart()
    assert "changed since" not in lab.run(1)

    lab.restart()
    lab.front.cells[0]["source"] = "threshold = 0.7"
    again = lab.run(1)
    assert "the cell `threshold = 0.7` the model read changed since this answer was recorded" in again, again


def test_timeit_lines_and_progress_timings_are_no_change_but_the_figures_beside_them_are():
    def ran(step: str, bar: str, timeit: str, slowest: str, loss: str) -> Any:
        return _cell("u1", "model.fit(x, y)", _printed(
            f"Epoch 1/2\n32/32 ━━━━━━━━━━ {step} - loss: {loss}\n100%|██████████| 50/50 {bar}\n{slowest}"
            f"{timeit} per loop (mean ± std. dev. of 7 runs, {'1,000' if slowest else '10,000'} loops each)\n"))
    first = outputs_digest(ran("1s 12ms/step", "[00:03<00:00, 15.10it/s]", "1.23 ms ± 45.6 µs", "", "0.412"))
    slow = ("The slowest run took 5.20 times longer than the fastest. This could mean that an intermediate "
            "result is being cached.\n")
    assert outputs_digest(ran("2s 15ms/step", "[00:04<00:00, 12.31it/s]", "987 µs ± 12.1 µs", slow, "0.412")) == first
    assert outputs_digest(ran("1s 12ms/step", "[00:03<00:00, 15.10it/s]", "1.23 ms ± 45.6 µs", "", "0.398")) != first


def test_a_duration_a_cell_prints_and_a_describe_table_are_data():
    """A latency the answer quotes, and ``describe()``'s std above its ``min`` row, are compared."""
    def printed(text: str) -> str:
        return outputs_digest(_cell("u1", "t", _printed(text)))
    assert printed("median delivery: 34 minutes\n") != printed("median delivery: 41 minutes\n")
    assert printed("p95 latency 120 ms\n") != printed("p95 latency 480 ms\n")
    table = "count    10.0\nmean      5.5\nstd       {std}\nmin       1.0\n"
    assert printed(table.format(std="3.0")) != printed(table.format(std="2.9"))
    for before, after in [("rows: 120\n", "rows: 121\n"), ("120 samples\n", "121 samples\n"), ("v1.5s\n", "v1.6s\n")]:
        assert printed(before) != printed(after)


def test_a_printed_env_line_is_digested_as_the_model_read_it_so_no_record_can_check_a_guess():
    """``notebook_read`` shows the model ``DB_PASSWORD=[redacted]``; the digest is of that text too:
    a received record's digest of the right password reads as one of any other (review s58 M1)."""
    def recorded(password: str) -> dict[str, str]:
        cell = _cell("u1", "!cat .env", _printed(f"DB_USER=ana\nDB_PASSWORD={password}\n"))
        return read_digests([cell], None, hiding(keep, ()))
    assert recorded("Right-Guess-2024!") == recorded("wrong-guess-1") == {
        "u1": outputs_digest(_cell("u1", "", _printed("DB_USER=ana\nDB_PASSWORD=[redacted]\n")))}


def test_a_headless_replay_compares_no_read_cell_below_the_agent_cell(tmp_path, monkeypatch):
    # The agent cell was run again in the middle of the notebook: the model read the cells below it
    # too. The user rewrote one of those later (work going on after the answer). nbclient sends no
    # cell id: the replay named that cell as changed (under the `fail` policy, CI failed; `live` asked
    # again), though JupyterLab's replay, which knows the agent cell, compares none below it.
    import json

    from nbagent.notebook.document import headless
    from nbagent.notebook.document.bridge import Bridge
    from nbagent.notebook.document.read_outputs import notebook_changes

    agent = "%%agent\nwhat is the threshold?"
    above, below = _cell("u1", "threshold = 0.5"), _cell("u3", "plot(threshold)")
    read = {c["id"]: source_digest(c, keep) for c in (above, below)}
    cells = [above, _cell("a1", agent), _cell("u3", "plot(threshold, log=True)")]
    (tmp_path / "analysis.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {**c, "metadata": {}} for c in cells]}))
    monkeypatch.setattr(headless, "executing_request", lambda: {"content": {"code": agent}})
    inputs = TurnInputs({}, {}, {}, {}, {}, (), read_sources=read)
    assert notebook_changes(Bridge(), tmp_path, inputs, "S1", 1, keep, ran={}) == []
    cells[0]["source"] = "threshold = 0.7"  # a cell above it: still an input
    (tmp_path / "analysis.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {**c, "metadata": {}} for c in cells]}))
    assert notebook_changes(Bridge(), tmp_path, inputs, "S1", 1, keep, ran={}) == [
        "the cell `threshold = 0.7` the model read"]


@pytest.mark.parametrize("shown", ["<function <lambda> at 0x{}>", "<generator object <genexpr> at 0x{}>",
                                   "<function outer.<locals>.inner at 0x{}>", "<weakref at 0x{}; to 'Foo' at 0x{}>",
                                   "[<matplotlib.lines.Line2D at 0x{}>]"])
def test_a_default_repr_naming_a_lambda_or_generator_is_the_same_output_at_another_address(shown: str) -> None:
    """``<function <lambda> at 0x…>`` is a default repr too: its address, new every run, made the
    re-run cell's output another one (review of atk23), as ``<Model object at 0x…>``'s did not."""
    first = outputs_digest(_cell("u1", "f", _printed(shown.format("7f3a10", "7f3a20"))))
    assert first == outputs_digest(_cell("u1", "f", _printed(shown.format("7f9b30", "7f9b40"))))
