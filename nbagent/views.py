"""Read-only views of a session's lists (``Agent.history``, ``records``, ``events``, ``sent``).

The session owns its lists and changes them only through its operations (run, rollback, compact,
resume): a caller that appended to the live history would leave a conversation the loop and the
task folder no longer agree on. A view reads the live list, without copying it, and refuses every
change with an error that says what to do instead.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Iterator, NoReturn, Sequence, TypeVar, overload

T = TypeVar("T")

_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"})


class ReadOnlyView(Sequence[T]):
    """A read-only :class:`~collections.abc.Sequence` over a list someone else owns.

    Indexing, ``len``, iteration, ``in`` and ``==`` (with a list or another view) read the live
    list; a slice, ``view + list`` or ``list(view)`` is a copy the caller may change. ``copy.copy`` and
    ``copy.deepcopy`` give a list, so a snapshot taken before a run stays what it was.
    ``append``, item assignment and the other list mutators raise with a pointer to the API.
    """

    __slots__ = ("_items", "_name", "_how")

    def __init__(self, items: Callable[[], list[T]], name: str, how: str) -> None:
        # A getter, not the list: the owner may replace its list (a resume, a rollback of ``sent``),
        # and a view kept by the caller must still show the session's current one.
        self._items = items
        self._name = name
        self._how = how

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        return self._items()[index]

    def __len__(self) -> int:
        return len(self._items())

    def __iter__(self) -> Iterator[T]:
        return iter(self._items())

    def __reversed__(self) -> Iterator[T]:
        return reversed(self._items())

    def __contains__(self, value: object) -> bool:
        return value in self._items()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ReadOnlyView):
            other = other._items()
        return self._items() == other if isinstance(other, list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to a list, so unhashable like one

    def __repr__(self) -> str:
        return repr(self._items())

    def __add__(self, other: Sequence[T]) -> list[T]:
        return [*self._items(), *other]  # a new list, like list + list: reading, not changing

    def __radd__(self, other: Sequence[T]) -> list[T]:
        return [*other, *self._items()]

    def __copy__(self) -> list[T]:
        return list(self._items())

    def __deepcopy__(self, memo: dict[int, Any]) -> list[T]:
        return copy.deepcopy(self._items(), memo)

    def _refuse(self, what: str) -> NoReturn:
        raise TypeError(f"{self._name} is a read-only view ({what} is not allowed); {self._how}")

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        self._refuse("item assignment")

    def __delitem__(self, index: Any) -> NoReturn:
        self._refuse("item deletion")

    def __getattr__(self, name: str) -> Any:
        if name in _MUTATORS:
            raise AttributeError(f"{self._name} is a read-only view and has no {name}(); {self._how}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
