"""A value nbagent cannot hash by content but tells the model by its own text (``_repr_llm_``, a
figure's description) is compared at a replay by that text: changed text, changed answer."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from nbagent.notebook.document.described import DESCRIBED, described_fingerprint, value_fingerprint  # noqa: E402
from nbagent.notebook.document.fingerprint import fingerprint  # noqa: E402


class Experiment:
    def __init__(self, best: float, note: str = "") -> None:
        self.best, self.note = best, note

    def _repr_llm_(self) -> str:
        return f"Experiment: best loss {self.best:.3f}{self.note}"


class Slow:
    def _repr_llm_(self) -> str:
        import time

        time.sleep(5)  # past the 0.5 s bound: the kernel context leaves it out, and so does the record
        return "never"


def test_an_llm_repr_is_fingerprinted_by_the_text_the_model_is_told():
    assert fingerprint(Experiment(0.25)) is None  # no content fingerprint for a user's class
    told = value_fingerprint(Experiment(0.25))
    assert told is not None and told.startswith(DESCRIBED)
    assert value_fingerprint(Experiment(0.25)) == told and value_fingerprint(Experiment(0.125)) != told


class Holder:
    def __init__(self) -> None:
        self.model = object()

    def _repr_llm_(self) -> str:
        return f"Holder of {self.model!r}"


def test_a_memory_address_in_the_text_is_no_change():
    # both alive at once: two addresses for certain (a freed one may be reused by the next object)
    first, second = Holder(), Holder()
    assert repr(first.model) != repr(second.model)
    assert described_fingerprint(first) == described_fingerprint(second)


def test_a_figure_is_fingerprinted_by_its_description():
    prints = []
    for heights in ([3, 5], [3, 5], [3, 9]):
        fig, ax = plt.subplots()
        ax.bar(["north", "south"], heights)
        prints.append(described_fingerprint(fig))
        plt.close(fig)
    assert prints[0] is not None and prints[0] == prints[1] != prints[2]


def test_no_described_fingerprint_for_a_secret_a_failure_or_a_plain_object():
    assert described_fingerprint(Experiment(0.25, " key sk-ant-XYZ"), secret=lambda t: "sk-ant-" in t) is None
    assert described_fingerprint(Slow()) is None
    assert described_fingerprint(object()) is None


class Crash:
    def __init__(self, address: int) -> None:
        self.address = address

    def _repr_llm_(self) -> str:
        return f"Core dump: SIGSEGV at 0x{self.address:x} in libfoo.so"


def test_an_address_the_description_itself_reports_is_a_change():
    """Only a default repr's address (``<… at 0x…>``) is new every run: a crash report's faulting
    address changed, and the replay showed the answer about the old one as current."""
    assert described_fingerprint(Crash(0x7FFE1000)) != described_fingerprint(Crash(0x7FFE2000))
    assert described_fingerprint(Crash(0x7FFE1000)) == described_fingerprint(Crash(0x7FFE1000))


class Pipeline:
    def __init__(self, step: object) -> None:
        self.step = step

    def _repr_llm_(self) -> str:
        return f"Pipeline of {self.step!r}"


def test_a_description_quoting_a_lambda_is_the_same_at_another_address():
    """``<function <lambda> at 0x…>`` is a default repr: a new lambda each run is not a change of
    what the model was told (review of atk23)."""
    assert described_fingerprint(Pipeline(lambda x: x)) == described_fingerprint(Pipeline(lambda x: x + 0))
