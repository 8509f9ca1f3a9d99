"""A replay compares an object the model was told by its ``_repr_llm_`` text (review of nb21): only a
text that differs is a change, not a description that is slower at the replay than its bound at
record time, and an object that told nothing of itself is listed unchecked, not checked against nothing."""

from __future__ import annotations

from typing import Any

from nbagent.notebook.document import described
from nbagent.notebook.document.input_changes import changes
from nbagent.notebook.document.inputs import TurnWatch

from .test_turn_inputs import ip as ip  # noqa: F401  # the shared in-process shell, left as it was


class Experiment:
    """Its ``_repr_llm_`` takes ``delay`` seconds: a summary computed over the runs."""

    delay = 0.0

    def __init__(self, best: float) -> None:
        self.best = best

    def _repr_llm_(self) -> str:
        import time

        time.sleep(Experiment.delay)  # the work a real description does, not a wait for another thread
        return f"Experiment: best loss {self.best:.3f}"


class Declines:
    def _repr_llm_(self) -> None:  # None declines, as a _repr_html_ returning None does
        return None


def told(ip: Any, root: Any, *names: str) -> Any:
    watch = TurnWatch(ip, root, None)
    watch.told_in_full(names)
    return watch.inputs()


def test_a_description_slower_at_the_replay_than_at_record_time_is_no_change(ip, tmp_path, monkeypatch):
    # A Restart & Run All on a loaded machine: the same text, past the context's 0.5 s per object.
    monkeypatch.setattr(Experiment, "delay", 0.0)
    ip.user_ns["exp"] = Experiment(0.25)
    inputs = told(ip, tmp_path, "exp")
    assert inputs.read["exp"].startswith(described.DESCRIBED)
    monkeypatch.setattr(Experiment, "delay", 0.7)
    assert changes(inputs, ip, tmp_path) == []
    monkeypatch.setattr(Experiment, "delay", 0.0)
    ip.user_ns["exp"] = Experiment(0.125)
    assert changes(inputs, ip, tmp_path) == ["`exp`"]


def test_a_description_that_hangs_at_the_replay_is_still_bounded_and_a_change(ip, tmp_path, monkeypatch):
    monkeypatch.setattr(Experiment, "delay", 0.0)
    ip.user_ns["exp"] = Experiment(0.25)
    inputs = told(ip, tmp_path, "exp")
    monkeypatch.setattr(described, "REPLAY_SECONDS", 0.3)
    monkeypatch.setattr(Experiment, "delay", 30.0)  # never returns in time: stopped by the bound
    assert changes(inputs, ip, tmp_path) == ["`exp`"]


def test_an_object_that_tells_nothing_of_itself_stays_unchecked(ip, tmp_path):
    ip.user_ns["d"] = Declines()
    inputs = told(ip, tmp_path, "d")
    assert "d" not in inputs.read and "d" in inputs.unchecked
    assert described.described_fingerprint(Declines()) is None




class Labels:
    """Prints its ``text`` as given: the same set of strings comes in another order in another kernel."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_llm_(self) -> str:
        return self.text


def test_a_set_of_strings_printed_in_another_order_is_no_change():
    # {"cat", "dog", "bird"} prints in the order of the string hashes, new in each kernel (PYTHONHASHSEED):
    # every Restart & Run All said "`ds` changed since this answer was recorded" (`--if-changed fail`: CI failed)
    same = described.described_fingerprint(Labels("classes {'cat', 'dog', 'bird'}"))
    assert same is not None and described.described_fingerprint(Labels("classes {'bird', 'cat', 'dog'}")) == same
    assert described.described_fingerprint(Labels("classes {'bird', 'cat', 'cow'}")) != same  # another set
    ordered = described.described_fingerprint(Labels("steps ['load', 'clean']"))  # a list's order is content
    assert described.described_fingerprint(Labels("steps ['clean', 'load']")) != ordered
    keyed = described.described_fingerprint(Labels("{'a': 1, 'b': 2}"))  # a dict prints in insertion order
    assert described.described_fingerprint(Labels("{'b': 2, 'a': 1}")) != keyed


class Counted:
    """A ``_repr_llm_`` that counts its calls (a summary over a million runs costs ~17 ms each)."""

    calls = 0

    def _repr_llm_(self) -> str:
        Counted.calls += 1
        return "Runs: 12, best loss 0.125"


def test_a_turn_that_runs_no_code_describes_an_object_once_a_prompt(ip, tmp_path, monkeypatch):
    """The kernel context described it, the record described it again for its fingerprint, and the
    turn's end a third time to see whether the turn changed it (review of nb21: 10 such objects
    added ~400 ms a prompt)."""
    from nbagent.engine.loop.facts import FactsFocus
    from nbagent.notebook.kernel_context.build import KernelContext

    monkeypatch.setattr(Counted, "calls", 0)
    ip.user_ns["runs"] = Counted()
    context = KernelContext(ip)
    watch = TurnWatch(ip, tmp_path, None)
    context.on_built = lambda record: watch.told(record.full, record.outputs, record.image_cells, record.described)
    context.focused(FactsFocus(prompt="what is the best loss in runs?"))
    inputs = watch.inputs()
    assert Counted.calls == 1
    assert inputs.read["runs"] == described.value_fingerprint(Counted()) and Counted.calls == 2
    assert "runs" not in inputs.left_values


def test_a_turn_that_ran_code_still_sees_the_object_it_changed(ip, tmp_path, monkeypatch):
    monkeypatch.setattr(Experiment, "delay", 0.0)
    ip.user_ns["exp"] = Experiment(0.25)
    watch = TurnWatch(ip, tmp_path, None)
    watch.told_in_full(["exp"])
    watch.before_code("exp.best = 0.125")
    ip.user_ns["exp"].best = 0.125
    watch.after_code(False)
    assert watch.inputs().left_values["exp"] == described.value_fingerprint(Experiment(0.125))
