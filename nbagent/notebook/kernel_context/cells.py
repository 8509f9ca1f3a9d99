"""The recent cells as the model is told about them: their inputs as typed, and ``Out[n]`` values
by a bounded repr that runs no user code (moved here from ``notebook.session``)."""

from __future__ import annotations

import builtins
import inspect
import re
import reprlib
from functools import lru_cache
from itertools import islice
from typing import TYPE_CHECKING, Iterable, Mapping

from .scalars import is_known_scalar, scalar_text

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

# Libraries whose ``.shape`` / ``.columns`` / repr are cheap, bounded and side-effect free.
ARRAY_LIBRARIES = frozenset({"numpy", "pandas", "polars", "pyarrow", "scipy", "xarray", "torch", "jax",
                             "tensorflow", "dask"})


def is_agent_cell(source: str) -> bool:
    return "%%agent" in source or "run_agent_cell" in source or "run_agent_command" in source


_AGENT_COMMAND = re.compile(r"^[ \t]*%agent\b|run_line_magic\(\s*['\"]agent['\"]", re.MULTILINE)


def is_agent_command(source: str) -> bool:
    """An ``%agent`` command cell (``%agent fix``, ``%agent rollback 9``), as typed or as IPython
    translated it: its failure is nbagent's answer, not a failed cell of the user's."""
    return _AGENT_COMMAND.search(source) is not None


def recent_inputs(shell: "InteractiveShell") -> list[str]:
    """The last five cells as the user typed them. ``In`` holds them translated (``%agent help``
    becomes ``get_ipython().run_line_magic('agent', 'help')``), which the model would then read and
    echo; the history's raw list runs parallel to it. Agent cells are recognised in either form."""
    parsed = list(shell.user_ns.get("In", []))
    raw = list(getattr(getattr(shell, "history_manager", None), "input_hist_raw", None) or [])
    if len(raw) != len(parsed):  # not IPython's pair of lists: the translated form is all there is
        raw = parsed
    pairs = list(zip(parsed, raw, strict=True))[-6:]
    return [r for p, r in pairs if p and not (is_agent_cell(p) or is_agent_cell(r))][-5:]


def shape_of(value: object) -> object:
    """``value.shape`` without running the user's code: these facts are gathered before every
    prompt, so a user property that loops or sleeps would hang the agent before it starts. Only a
    plain attribute or an array library's is read."""
    try:
        static = inspect.getattr_static(value, "shape")
    except AttributeError:
        return None
    if not hasattr(static, "__get__"):
        return static
    return getattr(value, "shape", None) if library_of(value) in ARRAY_LIBRARIES else None


def library_of(value: object) -> str:
    """The top-level package of ``value``'s type (``pandas`` for a DataFrame)."""
    return (getattr(type(value), "__module__", None) or "").split(".")[0]


def recent_outputs(out: object, shown: Mapping[int, str] | None = None) -> list[str]:
    """``Out[n]: text`` of the last few cells that had a value (bounded; no images): the text the
    cell showed (``shown``, kept as it was displayed), else a bounded repr of ``Out[n]`` now."""
    from ...engine.loop.facts import MAX_OUTPUT_CHARS, MAX_OUTPUTS

    lines = []
    outputs = out if isinstance(out, dict) else {}
    for n in sorted(outputs)[-MAX_OUTPUTS:]:
        if shown is not None and n in shown and _shown_as_displayed(outputs[n]):
            # Out[n] is the object, which a later cell may have changed: the text the cell showed.
            lines.append(f"Out[{n}]: {shown[n][:MAX_OUTPUT_CHARS]}")
            continue
        try:
            text = safe_repr(outputs[n])
        except Exception as exc:  # a value whose repr raises is described, never fatal
            text = f"<{type(outputs[n]).__name__}: repr failed: {exc}>"
        lines.append(f"Out[{n}]: {text[:MAX_OUTPUT_CHARS]}")
    return lines


def _shown_as_displayed(value: object) -> bool:
    """Whether the text IPython displayed for ``value`` is what :func:`safe_repr` would show: an
    array library's value or a known scalar. Not a container of ``builtins``: IPython's text holds
    its items' own reprs (a dataclass holding a token, a UUID key), which safe_repr shows by type
    name; told as it is now, as before."""
    return library_of(value) in ARRAY_LIBRARIES or is_known_scalar(value)


class NoUserCodeRepr(reprlib.Repr):
    """``reprlib`` that runs no user code inside a container either: plain ``Repr`` calls the
    ``__repr__`` of each item it does not know (a list of connections, a dataclass holding a token,
    which described alone is only its type name) and sorts a set's or dict's items (their
    ``__lt__``). Here an item of a type not of ``builtins`` is its type name (an array library's
    value keeps its own bounded repr), and a set or dict of such items is listed unsorted."""

    def repr1(self, x: object, level: int) -> str:
        if library_of(x) != "builtins":  # a user class named ``list`` is not reprlib's list
            return self.repr_instance(x, level)
        return super().repr1(x, level)

    def repr_instance(self, x: object, level: int) -> str:
        # A builtin scalar (3.14, True, None, b"ab") is its bounded repr, which runs no user code;
        # another builtin (an exception holding a user object, a bound method) its type name.
        if type(x) in _SCALARS or library_of(x) in ARRAY_LIBRARIES and not is_known_scalar(x):
            return super().repr_instance(x, level)
        known = scalar_text(x, as_code=True)  # a Timestamp, a datetime, a Decimal: its value
        if known is not None:
            return known
        return f"<{type(x).__module__}.{type(x).__qualname__} object>"

    def repr_bytes(self, x: bytes, level: int) -> str:
        """As ``reprlib`` cuts a string: the repr of the head and tail only. Without it a ``bytes``
        went through ``repr_instance``, which makes the whole repr and then cuts it: a 200 MB file read
        into a variable (``blob = open("model.bin", "rb").read()``) took 600 MB and a second at every
        prompt (a 1 GB one, about 4 GB: the kernel's end where memory is short)."""
        limit = self.maxstring
        shown = builtins.repr(x[:limit])
        if len(shown) <= limit:  # measured on the repr: b"\xff" * 2000 reprs as 8,003 characters
            return shown
        head = max(0, (limit - 3) // 2)
        tail = max(0, limit - 3 - head)
        shown = builtins.repr(x[:head] + x[len(x) - tail:])
        return shown[:head] + str(getattr(self, "fillvalue", "...")) + shown[len(shown) - tail:]

    def repr_set(self, x: set[object], level: int) -> str:
        if _sortable(x):
            return super().repr_set(x, level)
        return self._repr_iterable(x, level, "{", "}", self.maxset)  # type: ignore[attr-defined]

    def repr_frozenset(self, x: frozenset[object], level: int) -> str:
        if _sortable(x):
            return super().repr_frozenset(x, level)
        return self._repr_iterable(x, level, "frozenset({", "})", self.maxfrozenset)  # type: ignore[attr-defined]

    def repr_dict(self, x: dict[object, object], level: int) -> str:
        if _sortable(x):
            return super().repr_dict(x, level)
        if level <= 0:
            return "{...}"
        pieces = [f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}" for k, v in islice(x.items(), self.maxdict)]
        return "{" + ", ".join(pieces) + (", ..." if len(x) > self.maxdict else "") + "}"


SORTED_UP_TO = 1_000
"""The largest set or dict listed sorted, as ``reprlib`` lists them; a larger one is listed in its own
order, its first items only. ``reprlib`` sorts all of it to show 50 (and the items of a dict with
other keys were copied whole): a 3 million-word vocabulary took a second of sorting in C at every
prompt that named it, which the 0.5 s limit cannot stop (no Python code runs meanwhile)."""


def _sortable(x: set[object] | frozenset[object] | dict[object, object]) -> bool:
    """Whether ``reprlib`` may list ``x`` sorted: empty, or small with builtin scalars only (sorting
    them runs no user ``__lt__``)."""
    return not x or len(x) <= SORTED_UP_TO and _all_builtin(x)


_SCALARS = frozenset({int, float, complex, bool, str, bytes, type(None), type(...)})


def _all_builtin(items: Iterable[object]) -> bool:
    """Whether every item (a set's members, a dict's keys) is a builtin scalar: sorting them then
    runs no user ``__lt__`` (a tuple's comparison compares what it holds, which may be user objects)."""
    return all(type(item) in _SCALARS for item in items)


@lru_cache(maxsize=1)
def bounded_repr() -> reprlib.Repr:
    # Built on first use: its bound is the engine's, which is not imported at kernel start.
    from ...engine.loop.facts import MAX_OUTPUT_CHARS

    bounded = NoUserCodeRepr()  # keyword arguments need Python 3.12
    bounded.maxstring = bounded.maxother = MAX_OUTPUT_CHARS
    bounded.maxlist = bounded.maxdict = bounded.maxset = 50
    return bounded


def safe_repr(value: object) -> str:
    """A bounded repr that runs no user code: builtins through ``reprlib`` (cycles end at its
    depth limit), an array library's own (bounded by the library), anything else by its type."""
    root = library_of(value)
    known = scalar_text(value, as_code=True)
    if known is not None:
        return known
    if root == "builtins":
        return bounded_repr().repr(value)
    if root in ARRAY_LIBRARIES:
        return repr(value)
    return f"<{type(value).__module__}.{type(value).__qualname__} object>"


__all__ = ["ARRAY_LIBRARIES", "NoUserCodeRepr", "bounded_repr", "is_agent_cell", "library_of", "recent_inputs", "recent_outputs",
           "safe_repr", "shape_of"]
