"""Objects that misbehave never break or stall a prompt: a raising, slow or huge ``_repr_llm_``,
objects whose ``__len__``/``shape``/``dtypes``/repr raise or sleep, cyclic containers. Each gives
a bounded description or a one-line note; ■ still stops the build. (Run on the main thread, where
the time limit is a timer; see guard.py for what holds elsewhere.)"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pandas as pd
import pytest

from nbagent.notebook.kernel_context import register_llm_repr
from nbagent.notebook.kernel_context.guard import OBJECT_SECONDS
from tests.notebook.kernel_context.support import block_of, context_text, shell_with


class Experiment:
    def _repr_llm_(self) -> str:
        return "Experiment e7: 12 runs, best loss 0.031\nruns: lr 1e-3 .. 1e-1"


class Raising:
    def _repr_llm_(self) -> str:
        raise ValueError("boom")


class Sleeping:
    def _repr_llm_(self) -> str:
        time.sleep(30)
        return "never"


class Swallowing:
    def _repr_llm_(self) -> str:
        try:
            time.sleep(30)
        except BaseException:  # noqa: BLE001 - the point: it swallows the time limit
            time.sleep(0.3)
        return "late"


class Huge:
    def _repr_llm_(self) -> str:
        return "x" * 10_000_000


class NotText:
    def _repr_llm_(self) -> Any:
        return {"a": 1}


class Everything:
    """Answers every attribute (``_repr_llm_`` included) through ``__getattr__``."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"{name} was looked up on the instance")


class Hostile:
    """Every usual way in sleeps."""

    def __len__(self) -> int:
        time.sleep(30)
        return 0

    @property
    def shape(self) -> Any:
        time.sleep(30)

    @property
    def dtypes(self) -> Any:
        time.sleep(30)

    def __repr__(self) -> str:
        time.sleep(30)
        return ""


class SlowList(list[int]):
    def __len__(self) -> int:
        time.sleep(30)
        return 0


def timed(shell: Any, prompt: str) -> tuple[str, float]:
    started = time.perf_counter()
    text, _ = context_text(shell, prompt)
    return text, time.perf_counter() - started


def test_repr_llm_says_what_the_model_sees_briefly_or_in_full() -> None:
    text, _ = context_text(shell_with(exp=Experiment(), other=Experiment()), "how did `exp` do?")
    assert block_of(text, "exp") == ("  - exp: Experiment\n    Experiment e7: 12 runs, best loss 0.031\n"
                                     "    runs: lr 1e-3 .. 1e-1")
    assert block_of(text, "other") == "  - other: Experiment (Experiment e7: 12 runs, best loss 0.031)"


@pytest.mark.parametrize("obj, note", [
    (Raising(), "not described: raised ValueError: boom"),
    (Sleeping(), f"not described: took longer than {OBJECT_SECONDS:g} s"),
    (Swallowing(), f"not described: took longer than {OBJECT_SECONDS:g} s"),
    (NotText(), "not described: _repr_llm_ returned dict, not str"),
])
def test_a_failing_or_slow_repr_llm_is_one_line_and_the_prompt_goes_on(obj: Any, note: str) -> None:
    text, seconds = timed(shell_with(obj=obj, x=1), "what is `obj`?")
    assert note in block_of(text, "obj") and "  - x: int (1)" in text
    assert seconds < 2 * OBJECT_SECONDS + 0.5  # one attempt: the brief form would call it again


def test_a_huge_repr_llm_is_cut_with_a_note() -> None:
    text, _ = context_text(shell_with(obj=Huge()), "what is `obj`?", budget=50_000)
    block = block_of(text, "obj")
    assert "[_repr_llm_ gave 10,000,000 characters; the first 4,000 are shown]" in block and len(block) < 5_000


def test_an_instance_getattr_is_never_asked_for_repr_llm() -> None:
    text, _ = context_text(shell_with(obj=Everything()), "what is `obj`?")
    assert "  - obj: Everything" in text


def test_len_shape_dtypes_and_repr_that_sleep_are_never_called() -> None:
    text, seconds = timed(shell_with(obj=Hostile(), items=SlowList([1])), "what are `obj` and `items`?")
    assert "  - obj: Hostile\n" in text and "  - items: SlowList\n" in text and seconds < OBJECT_SECONDS


def test_a_sleeping_repr_inside_a_frame_is_cut_by_the_time_limit_and_one_in_a_container_never_runs() -> None:
    df = pd.DataFrame({"h": [Hostile()]})
    text, seconds = timed(shell_with(items=[Hostile()], df=df), "look at `items` and `df`")
    assert f"[<{__name__}.Hostile object>]" in block_of(text, "items") and "took longer than" in block_of(text, "df")
    assert "shape (1, 1)" in block_of(text, "df")  # the brief form survived the failed full one
    assert seconds < 6 * OBJECT_SECONDS + 1


def test_no_user_code_runs_for_the_items_of_a_container_variable_or_output() -> None:
    """Plain reprlib called each item's ``__repr__`` (a lazy connection describing itself by a
    query, a dataclass showing its token, which alone is described by its type name) and sorted a
    set's or a dict's items by their ``__lt__``: user code nbagent ran, unasked, before each prompt
    (or at an MCP client's ``list_variables``)."""
    from dataclasses import dataclass

    ran: list[str] = []

    class Conn:
        def __repr__(self) -> str:
            ran.append("__repr__")
            return "Conn(open)"

        def __lt__(self, other: object) -> bool:
            ran.append("__lt__")
            return True

        def __hash__(self) -> int:
            return id(self)

    @dataclass
    class Config:
        token: str

    shell = shell_with(conns=[Conn()], pool={Conn(), Conn()}, by_key={Conn(): 1, Conn(): 2},
                       configs=[Config("ghp_TOKEN1234567890abcdef")], plain={"b": 2, "a": 1})
    shell.user_ns["Out"] = {3: [Conn()]}
    text, _ = context_text(shell, "what are `conns`, `pool`, `by_key`, `configs` and `plain`?")
    assert ran == [] and "Conn(open)" not in text and "ghp_TOKEN" not in text
    assert "Conn object>" in block_of(text, "pool") and "Config object>" in block_of(text, "configs")
    assert "{'a': 1, 'b': 2}" in block_of(text, "plain")  # builtins as before, sorted


def test_a_lazy_proxys_class_property_is_never_read() -> None:
    """``isinstance`` reads ``__class__``, which lazy proxies (Django's ``SimpleLazyObject``, wrapt's)
    make a property that builds or fetches what they stand for: describing a variable runs none of it
    (review of power pass 2, M1: the numpy-scalar check ran it 8 times)."""
    ran: list[str] = []

    class Lazy:
        @property  # type: ignore[misc]
        def __class__(self) -> type:  # noqa: PLE0302 - what a proxy does
            ran.append("__class__")
            return int

    shell = shell_with(settings=Lazy(), items=[Lazy()])
    shell.user_ns["Out"] = {3: Lazy()}
    text, _ = context_text(shell, "what are `settings` and `items`?")
    assert ran == [], ran
    assert "settings: Lazy" in text, text

def test_builtin_values_inside_containers_keep_their_repr_and_tuples_of_user_objects_are_not_sorted() -> None:
    """The container guard named every builtin that reprlib has no method for by its type: the
    model read ``(<builtins.float object>, <builtins.float object>)`` for ``(1.5, 2.5)``. And a set
    of tuples was sorted as builtins, so the user objects inside the tuples were compared."""
    ran: list[str] = []

    class Key:
        def __lt__(self, other: object) -> bool:
            ran.append("__lt__")
            return True

        def __hash__(self) -> int:
            return id(self)

    shell = shell_with(point=(1.5, 2.5), flags=[True, None, b"ab", 3j], prices={"a": 1.25}, pairs={(1, Key()), (2, Key())})
    shell.user_ns["Out"] = {4: [0.5, 2.0]}
    text, _ = context_text(shell, "what are `point`, `flags`, `prices` and `pairs`?")
    assert "(1.5, 2.5)" in block_of(text, "point") and "[True, None, b'ab', 3j]" in block_of(text, "flags")
    assert "{'a': 1.25}" in block_of(text, "prices") and "Out[4]: [0.5, 2.0]" in text
    assert "builtins.float" not in text and ran == []


def test_cyclic_containers_are_bounded() -> None:
    a: list[Any] = [1]
    a.append(a)
    d: dict[str, Any] = {}
    d["self"] = d
    text, _ = context_text(shell_with(a=a, d=d), "what are `a` and `d`?")
    assert "[1, [...]]" in block_of(text, "a") and "{'self': {...}}" in block_of(text, "d")


def test_register_llm_repr_describes_a_type_you_cannot_change() -> None:
    class Point:
        def __init__(self) -> None:
            self.x, self.y = 1, 2

    def describe(p: Point) -> str:
        return f"Point at ({p.x}, {p.y})"

    register_llm_repr(f"{__name__.split('.')[0]}.{Point.__qualname__}", describe)
    text, _ = context_text(shell_with(p=Point()), "where is `p`?")
    assert "    Point at (1, 2)" in block_of(text, "p")


def test_the_interrupt_stops_the_build_and_says_what_was_left_out() -> None:
    from nbagent.engine.loop.facts import FactsFocus
    from nbagent.notebook.kernel_context import KernelContext

    class Interrupted:
        def _repr_llm_(self) -> str:
            os.kill(os.getpid(), signal.SIGINT)  # ■, as the kernel receives it
            time.sleep(30)
            return "never"

    ctx = KernelContext(shell_with(first=1, obj=Interrupted(), later=2))
    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        ctx.focused(FactsFocus("what is `first`, `obj`?"))
    assert time.perf_counter() - started < OBJECT_SECONDS
    assert ctx.last is not None and ctx.last.interrupted and ctx.last.left_out == ["obj", "later"]
    assert ctx.last.brief == ["first"] and ctx.last.notes == ["interrupted"]


def test_huge_strings_in_variables_containers_and_cells_are_cut() -> None:
    huge = "x" * 100_000_000
    text, seconds = timed(shell_with(s=huge, items=[huge], df=pd.DataFrame({"t": [huge]})), "`s`, `items`, `df`?")
    assert len(text) < 2_000 and seconds < 2
    assert block_of(text, "s").startswith("  - s: str (len 100000000, 'xxx") and "len 1" in block_of(text, "items")


def test_a_repr_llm_returning_none_declines_as_ipythons_repr_methods_do() -> None:
    # IPython's protocol: a _repr_*_ returning None has no such representation, and the object is
    # shown as it would be without it. It read "not described: _repr_llm_ returned NoneType, not str".
    class Declines:
        def _repr_llm_(self) -> None:
            return None

    class Measured(list):  # type: ignore[type-arg]
        def _repr_llm_(self) -> None:
            return None

    text, _ = context_text(shell_with(d=Declines(), m=Measured([1, 2])), "what are `d` and `m`?")
    assert "  - d: Declines\n" in text and "not described" not in text, text
    assert "  - m: Measured" in text, text


def test_a_long_repr_llm_cut_for_the_budget_is_not_said_to_lose_columns_and_sample_rows() -> None:
    # The note read "(columns, sample rows) left out" for an object's own text or an array's values.
    class Notes:
        def _repr_llm_(self) -> str:
            return "\n".join(f"note {i}: " + "word " * 30 for i in range(60))

    text, _ = context_text(shell_with(notes=Notes()), "what is in `notes`?", budget=600)
    assert "more lines of this description left out for the budget" in block_of(text, "notes")
    assert "columns, sample rows" not in block_of(text, "notes")
