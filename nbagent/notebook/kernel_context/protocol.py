"""What the model sees of one object: nbagent's adapters, the ``_repr_llm_`` protocol, and a
bounded fallback.

The order, for a value of type ``T``:

1. an adapter registered for exactly ``T`` (shipped: pandas ``DataFrame`` and ``Series``, numpy
   ``ndarray``, polars ``DataFrame``, matplotlib ``Figure``; add one with
   :func:`register_llm_repr`);
2. ``T._repr_llm_()``, if ``T`` defines it (looked up on the class, never through an instance's
   ``__getattr__``), under a time limit and a size cap (see :mod:`.guard`);
3. the adapter of ``T``'s nearest base class that has one (a ``DataFrame`` subclass);
4. builtins (numbers, strings, containers) by a bounded repr; a known library's scalar (a numpy
   ``float64``, a pandas ``Timestamp``, a ``datetime``, a ``Decimal``: :mod:`.scalars`) by its
   value; an array library's value by its shape; anything else by its type name only (no user
   code runs).

A description that raises or runs out of time falls back to the brief form, then to the type
name with a one-line note; never an error in the cell.
"""

from __future__ import annotations

import reprlib
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from . import frames
from .cells import NoUserCodeRepr, library_of, shape_of
from .frames import Description
from .guard import OBJECT_SECONDS, DescribeFailed, bounded_call, on_main_thread
from .scalars import scalar_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

T = TypeVar("T")

#: The method an object implements to say what the model sees of it (like ``_repr_html_``).
LLM_REPR = "_repr_llm_"
#: Most characters of one ``_repr_llm_`` result the model is shown (the rest is cut, with a note).
MAX_REPR_CHARS = 4_000
#: The brief form of a ``_repr_llm_`` result: its first line, cut to this.
BRIEF_CHARS = 200

# An adapter is looked up by its value's exact type, so it is only ever called with that type.
Describer = Callable[[Any], Description]
_ADAPTERS: dict[str, tuple[Describer, Describer]] = {}


def _key(cls: type) -> str:
    return f"{(getattr(cls, '__module__', None) or '').split('.')[0]}.{getattr(cls, '__qualname__', '?')}"


def _text_adapter(fn: Callable[[T], str]) -> tuple[Callable[[T], Description], Callable[[T], Description]]:
    def full(value: T) -> Description:
        return _from_text(fn(value), full=True)

    def brief(value: T) -> Description:
        return _from_text(fn(value), full=False)
    return brief, full


def register_llm_repr(type_name: str, fn: Callable[[T], str]) -> None:
    """Describe values of exactly the type ``type_name`` (``"package.QualName"``, the top-level
    package: ``"geopandas.GeoDataFrame"``) with ``fn(value) -> str``, as if the type defined
    ``_repr_llm_``: for types you cannot add a method to. The same bounds apply."""
    _ADAPTERS[type_name] = _text_adapter(fn)


def _figure(value: "Figure", full: bool) -> Description:
    from .figure_text import figure_description

    return figure_description(value, full)


_ADAPTERS.update({
    "pandas.DataFrame": (frames.dataframe_brief, frames.dataframe_full),
    "pandas.Series": (frames.series_brief, frames.series_full),
    "numpy.ndarray": (frames.ndarray_brief, frames.ndarray_full),
    "polars.DataFrame": (frames.polars_brief, frames.polars_full),
    "matplotlib.Figure": (lambda v: _figure(v, False), lambda v: _figure(v, True)),
})


def _from_text(text: object, *, full: bool) -> Description:
    if not isinstance(text, str):
        raise DescribeFailed(f"{LLM_REPR} returned {type(text).__name__}, not str")
    if not full:
        first = text.strip().splitlines()[0] if text.strip() else ""
        return Description(first[:BRIEF_CHARS] + ("…" if len(first) > BRIEF_CHARS else ""))
    note: tuple[str, ...] = ()
    if len(text) > MAX_REPR_CHARS:
        note = (f"[{LLM_REPR} gave {len(text):,} characters; the first {MAX_REPR_CHARS:,} are shown]",)
        # The cut is marked right where it falls: a secret's start cut there is then recognised
        # and redacted at the boundary (a bare cut followed by the note's line would not be).
        text = text[:MAX_REPR_CHARS] + "…"
    return Description("", (*text.rstrip().splitlines(), *note))


def _own_llm_repr(value: object) -> Callable[[object], object] | None:
    """The class's ``_repr_llm_`` (None when it has none); an instance attribute is not looked at."""
    import inspect

    try:
        method = inspect.getattr_static(type(value), LLM_REPR)
    except AttributeError:
        return None
    return method if callable(method) else None


def _builtin(value: object, full: bool) -> Description:
    kind = type(value)
    if kind in (int, float, bool, complex) or value is None:
        return Description(repr(value)[:BRIEF_CHARS])
    if kind in (str, bytes) and isinstance(value, (str, bytes)):  # exactly str or bytes: no user __len__
        return Description(f"len {len(value)}" + (f", {frames.short(value, BRIEF_CHARS)}" if full else ""))
    if kind in (list, tuple, dict, set, frozenset) and isinstance(value, (list, tuple, dict, set, frozenset)):
        return Description(f"len {len(value)}", (_container_repr().repr(value),) if full and value else ())
    return Description("")


class _ItemRepr(NoUserCodeRepr):
    """An item that prints on several lines (a DataFrame in ``pd.read_excel(..., sheet_name=None)``'s
    dict, a 2-D array) is its adapter's one line, ``<DataFrame shape (5, 2), dtypes 2 int64, …>``:
    its repr cut to 80 characters kept a table's corner and broke the description's indentation
    with lines of the table. Without an adapter, its repr's lines are joined."""

    def repr_instance(self, x: object, level: int) -> str:
        adapters = _ADAPTERS.get(_key(type(x)))
        if adapters is not None and library_of(x) != "numpy":  # a table: its repr (a grid) is not made at all
            return self._brief(x, adapters[0])
        text = super().repr_instance(x, level)
        if "\n" not in text:
            return text
        return self._brief(x, adapters[0]) if adapters is not None else " ".join(text.split())

    def _brief(self, x: object, brief: Describer) -> str:
        return f"<{type(x).__name__} {frames.cut(brief(x).summary, self.maxother)}>"


@lru_cache(maxsize=1)
def _container_repr() -> reprlib.Repr:
    """A container's items, bounded: 20 items, 80 characters a string, 6 levels (a cycle ends there)."""
    bounded = _ItemRepr()  # keyword arguments need Python 3.12; no item's own __repr__ or __lt__ runs
    bounded.maxlist = bounded.maxtuple = bounded.maxdict = bounded.maxset = bounded.maxfrozenset = 20
    bounded.maxstring = bounded.maxother = 80
    return bounded


_CLASS_MRO = type.__dict__["__mro__"]  # a class's bases, read past any metaclass


def _base_adapters(kind: type) -> tuple[Describer, Describer] | None:
    """The adapters of the nearest base class that has them: a subclass of a table or an array
    (geopandas' ``GeoDataFrame``, a user's ``class Sales(pd.DataFrame)``) is described as one,
    where its type name alone told the model nothing, not even the shape. The adapter runs the
    subclass's overrides, so it is bounded as ``_repr_llm_`` is (main thread, time limit). ``__mro__``
    is read from the type itself, so no instance attribute, ``__class__`` property or metaclass runs."""
    for base in _CLASS_MRO.__get__(kind)[1:]:
        adapters = _ADAPTERS.get(_key(base))
        if adapters is not None:
            return adapters
    return None


def _described(value: object, full: bool) -> Description:
    """The description, unguarded (the caller bounds it)."""
    adapters = _ADAPTERS.get(_key(type(value)))
    if adapters is not None:
        return adapters[1 if full else 0](value)
    method = _own_llm_repr(value)
    if method is not None:
        if not on_main_thread():  # no timer can bound it off the main thread: not called
            return Description(f"has {LLM_REPR}, not called off the kernel's main thread")
        text = method(value)
        if text is not None:  # None declines, as a _repr_html_ returning None does in IPython
            return _from_text(text, full=full)
    adapters = _base_adapters(type(value))
    if adapters is not None:  # the adapter runs the subclass's own overrides (head, __len__): user code
        if not on_main_thread():
            return Description("a subclass of a table or an array: not described off the kernel's main thread")
        return adapters[1 if full else 0](value)
    if library_of(value) == "builtins":
        return _builtin(value, full)
    scalar = scalar_text(value)  # df.price.sum(), df.day.max(): a value, not "shape ()"
    if scalar is not None:
        return Description(scalar)
    shape = shape_of(value)
    return Description(f"shape {shape}" if isinstance(shape, tuple) else "")


def _told_by_its_own_text(value: object) -> bool:
    """Whether ``value``'s description is its content as the model reads it: its class's
    ``_repr_llm_``, a registered adapter (a figure's), a table subclass's."""
    kind = type(value)
    return _ADAPTERS.get(_key(kind)) is not None or _own_llm_repr(value) is not None or _base_adapters(kind) is not None


def _content_text(d: Description) -> str | None:
    text = "\n".join((d.summary, *d.detail))
    return text if text.strip() else None  # nothing told: nothing to compare (it stays unchecked)


def content_description(value: object, seconds: float | None = None) -> str | None:
    """The full description of a value whose description is its content as the model reads it (its
    class's ``_repr_llm_``, a registered adapter, a figure's, a table subclass's), for a replay to
    compare what the model was told; None for any other value, off the main thread (no call is
    made there), when describing it failed or ran out of time (the text says nothing of it), or when
    it says nothing (a ``_repr_llm_`` that declines). ``seconds``: the bound, else the context's."""
    if not _told_by_its_own_text(value) or not on_main_thread():
        return None
    try:
        d = bounded_call(lambda: _described(value, True), OBJECT_SECONDS if seconds is None else seconds)
    except DescribeFailed:
        return None
    return _content_text(d)


def describe(value: object, full: bool) -> Description:
    """What the model is told of ``value`` (bounded; never raises but for ``KeyboardInterrupt``)."""
    return described_with_content(value, full)[0]


def described_with_content(value: object, full: bool) -> tuple[Description, str | None]:
    """:func:`describe`'s description, and where it is full and made of the value's own text, that
    text as :func:`content_description` gives it: what a live turn fingerprints the value by, with
    no second call of a ``_repr_llm_`` (10 objects at 17 ms each cost 170 ms more a prompt)."""
    try:
        d = bounded_call(lambda: _described(value, full))
    except DescribeFailed as exc:
        return _failed(value, full, str(exc)), None
    content = full and on_main_thread() and _told_by_its_own_text(value)
    return d, _content_text(d) if content else None


def _failed(value: object, full: bool, failed: str) -> Description:
    if full and (_ADAPTERS.get(_key(type(value))) is not None or _own_llm_repr(value) is None):
        # The brief form of an adapter reads less (no cells, no sample); of _repr_llm_ it is the
        # same call again, so it is not retried.
        try:
            brief = bounded_call(lambda: _described(value, False))
            return Description(brief.summary, (f"[full description left out: {failed}]",))
        except DescribeFailed:
            pass
    return Description(f"not described: {failed}")


__all__ = ["LLM_REPR", "MAX_REPR_CHARS", "content_description", "describe", "described_with_content", "register_llm_repr"]
