"""Bounds on describing one object: a time limit, and a deadline for the whole kernel context.

Describing a variable may run code that is not nbagent's (a ``_repr_llm_``, a library's
property): it runs on the kernel's main thread, before the prompt is sent. What is guaranteed:

- On the main thread, each call runs under a ``SIGALRM`` timer (``setitimer``): Python code that
  loops or sleeps gets :class:`TimeUp` raised into it at the limit. Code that never returns to the
  interpreter (one long C call that ignores signals) is out of reach, as it is for Ctrl-C.
- Off the main thread no timer can be set: user-defined ``_repr_llm_`` is then not called at all
  (the variable is described by its type), library describers run as on the main thread.
- A call that swallows :class:`TimeUp` (``except BaseException``) and returns late is still
  discarded: the elapsed time is checked after it returns.
- The whole build has a deadline: once it passes, the remaining variables are named in the
  "left out" line, not described.
- ``KeyboardInterrupt`` (■) stops the build: what was described so far is sent with a note, and
  the kernel's own handler cancels the cell as usual.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from types import FrameType
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")

#: Most seconds one object's description may take (a ``_repr_llm_``, a frame's schema).
OBJECT_SECONDS = 0.5
#: Most seconds the whole kernel context may take to build (then the rest is left out).
BUILD_SECONDS = 2.0


class TimeUp(BaseException):
    """Raised into a description that ran past its time limit (a BaseException, so a user's
    ``except Exception`` around a slow call does not swallow it)."""


class DescribeFailed(Exception):
    """A description could not be made; ``str()`` is the one-line note the model is shown."""


def on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """``TimeUp`` after ``seconds`` (main thread only); the previous handler and timer come back."""
    def handler(signum: int, frame: "FrameType | None") -> None:
        raise TimeUp

    previous = signal.signal(signal.SIGALRM, handler)
    earlier = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if earlier[0]:  # someone else's timer was running: give it back what is left of it
            signal.setitimer(signal.ITIMER_REAL, max(earlier[0] - seconds, 0.001), earlier[1])


def bounded_call(fn: Callable[[], T], seconds: float = OBJECT_SECONDS) -> T:
    """``fn()`` within ``seconds``; :class:`DescribeFailed` (with a one-line reason) when it
    raises, or runs past the limit. ``KeyboardInterrupt`` passes through."""
    started = time.perf_counter()
    try:
        if on_main_thread() and hasattr(signal, "setitimer"):
            with _alarm(seconds):
                result = fn()
        else:
            result = fn()
    except TimeUp:
        raise DescribeFailed(f"took longer than {seconds:g} s") from None
    except (KeyboardInterrupt, DescribeFailed):
        raise
    except BaseException as exc:  # noqa: BLE001 - a description never fails the prompt (SystemExit included)
        raise DescribeFailed(f"raised {type(exc).__name__}: {_first_line(exc)}") from None
    if time.perf_counter() - started > seconds:  # TimeUp was swallowed: the result is late, not used
        raise DescribeFailed(f"took longer than {seconds:g} s")
    return result


def _first_line(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises
        return "(message unreadable)"
    return text.splitlines()[0][:200] if text else ""


class Deadline:
    """The build's clock: :meth:`passed` once ``seconds`` are over."""

    def __init__(self, seconds: float = BUILD_SECONDS) -> None:
        self.seconds = seconds
        self.end = time.perf_counter() + seconds

    def passed(self) -> bool:
        return time.perf_counter() > self.end

    def left(self) -> float:
        return max(self.end - time.perf_counter(), 0.0)


__all__ = ["BUILD_SECONDS", "OBJECT_SECONDS", "Deadline", "DescribeFailed", "TimeUp", "bounded_call", "on_main_thread"]
