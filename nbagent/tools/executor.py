"""Running Python for the ``python`` tool: the :class:`Executor` interface and a script executor.

In a notebook the notebook layer supplies an executor that runs code in the live kernel namespace.
:class:`NamespaceExecutor` is the stand-alone one for scripts and tests: a persistent namespace
dict, IPython-like "repr of the last expression", captured stdout/stderr, and tracebacks as text.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextvars
import inspect
import io
import itertools
import linecache
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import Any, Protocol, TextIO, runtime_checkable

from nbagent.engine.config import DEFAULT_TOOL_CAPTURE_LIMIT

from .capture import BoundedText


@dataclass(frozen=True)
class ExecutionResult:
    """What running one piece of code produced.

    ``result_repr`` is the ``repr`` of a trailing expression (None when there is none or it is
    None); ``error`` is the formatted traceback; ``rich`` is an optional MIME bundle
    (``{"image/png": base64, "text/html": ...}``) from a kernel executor.
    """

    stdout: str = ""
    stderr: str = ""
    result_repr: str | None = None
    error: str | None = None
    rich: dict[str, Any] | None = None


@runtime_checkable
class Executor(Protocol):
    """Runs code for the ``python`` tool. Must not raise for errors in the code (put them in
    ``error``); may be cancelled (an abort) at its ``await``."""

    async def execute(self, code: str) -> ExecutionResult: ...


class _ThreadRouter(io.TextIOBase):
    """Stands in for ``sys.stdout``/``sys.stderr`` while executions run.

    ``contextlib.redirect_stdout`` swaps a process-wide global: output of *every* thread (the event
    loop's included) would land in the capture, and an abandoned (aborted) execution could restore
    the wrong stream later. The router sends a write to the buffer of the thread that made it, if
    that thread is capturing, and to the original stream otherwise.
    """

    def __init__(self, original: TextIO, which: str) -> None:
        self.original = original
        self._which = which

    def _target(self) -> TextIO:
        buf = getattr(_capture, self._which, None)
        return buf if buf is not None else self.original

    def write(self, s: str) -> int:  # type: ignore[override]
        return self._target().write(s)

    def writelines(self, lines: Any) -> None:  # type: ignore[override]
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._target().flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, ... of the real stream
        return getattr(self.original, name)


_capture = threading.local()
_router_lock = threading.Lock()
_router_users = 0


def _install_router() -> None:
    global _router_users
    with _router_lock:
        _router_users += 1
        if not isinstance(sys.stdout, _ThreadRouter):
            sys.stdout = _ThreadRouter(sys.stdout, "stdout")
        if not isinstance(sys.stderr, _ThreadRouter):
            sys.stderr = _ThreadRouter(sys.stderr, "stderr")


def _uninstall_router() -> None:
    global _router_users
    with _router_lock:
        _router_users -= 1
        if _router_users:
            return
        # Restore only our own wrappers: if someone replaced them meanwhile, theirs stays.
        if isinstance(sys.stdout, _ThreadRouter):
            sys.stdout = sys.stdout.original
        if isinstance(sys.stderr, _ThreadRouter):
            sys.stderr = sys.stderr.original


_counter = itertools.count(1)


def format_user_traceback(exc: BaseException, filename: str) -> str:
    """The traceback of code compiled as ``filename``, from its first frame on (the executor's own
    frames are noise to the model); just the exception line when none of its frames is there."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    if tb is None:
        return "".join(traceback.format_exception_only(type(exc), exc))
    return "".join(traceback.format_exception(type(exc), exc, tb))


class NamespaceExecutor:
    """Executes code in one persistent namespace, like a minimal IPython.

    Statements are executed; a trailing expression is evaluated, stored as ``_`` and returned as
    its ``repr``. Top-level ``await`` works (the code then runs in a fresh event loop in the
    worker thread). Code runs in a worker thread so that the caller can stop waiting on an
    abort (cancel the ``execute`` task); Python cannot kill a thread, so aborted code runs on in the background, and the next
    execution waits for it to finish (executions never overlap on one namespace).
    """

    def __init__(self, namespace: dict[str, Any] | None = None, *,
                 capture_limit: int = DEFAULT_TOOL_CAPTURE_LIMIT) -> None:
        self.capture_limit = capture_limit  # characters of stdout (and of stderr, and of a repr) kept
        self.namespace: dict[str, Any] = namespace if namespace is not None else {"__name__": "__main__"}
        self.namespace.setdefault("__builtins__", builtins)
        self._lock = threading.Lock()

    async def execute(self, code: str) -> ExecutionResult:
        """Run ``code``; errors in it come back in ``ExecutionResult.error``, never as exceptions.

        Runs in a daemon thread of its own rather than ``asyncio.to_thread``: an abandoned
        execution in the loop's default executor would make ``asyncio.run`` (and interpreter exit)
        wait for it at shutdown.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ExecutionResult] = loop.create_future()
        context = contextvars.copy_context()  # as asyncio.to_thread does

        def deliver(setter: Any, value: Any) -> None:
            if not future.done():  # the waiter may have been cancelled (an abort)
                setter(value)

        def work() -> None:
            try:
                result = context.run(self._execute_locked, code)
            except BaseException as exc:  # noqa: BLE001 - an executor bug; hand it to the waiter
                outcome: tuple[Any, Any] = (future.set_exception, exc)
            else:
                outcome = (future.set_result, result)
            try:
                loop.call_soon_threadsafe(deliver, *outcome)
            except RuntimeError:  # the loop closed while the code ran: nobody is waiting
                pass

        threading.Thread(target=work, name="nbagent-python", daemon=True).start()
        return await future

    def _execute_locked(self, code: str) -> ExecutionResult:
        with self._lock:
            out, err = BoundedText(self.capture_limit), BoundedText(self.capture_limit)
            _install_router()
            _capture.stdout, _capture.stderr = out, err
            try:
                result_repr, error = self._run(code)
            finally:
                _capture.stdout = _capture.stderr = None
                _uninstall_router()
            if result_repr is not None and len(result_repr) > self.capture_limit:
                cut = BoundedText(self.capture_limit)
                cut.write(result_repr)
                result_repr = cut.getvalue()
            return ExecutionResult(stdout=out.getvalue(), stderr=err.getvalue(), result_repr=result_repr, error=error)

    def _run(self, code: str) -> tuple[str | None, str | None]:
        filename = f"<agent-python-{next(_counter)}>"
        # Registered so tracebacks can quote the offending lines, as they do for files.
        linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        try:
            tree = ast.parse(code, filename, "exec")
            last: ast.Expression | None = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)  # type: ignore[attr-defined]
            # dont_inherit: this module's own `from __future__` imports must not leak into user code.
            body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
            tail = compile(last, filename, "eval", flags=flags, dont_inherit=True) if last is not None else None
        except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
            return None, "".join(traceback.format_exception_only(type(exc), exc))
        try:
            self._eval(body)
            value = self._eval(tail) if tail is not None else None
        except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt in user code too
            return None, format_user_traceback(exc, filename)
        if value is None:
            return None, None
        self.namespace["_"] = value
        try:
            return repr(value), None
        except Exception as exc:  # noqa: BLE001
            return None, f"repr() of the result failed: {type(exc).__name__}: {exc}"

    def _eval(self, code_obj: Any) -> Any:
        value = eval(code_obj, self.namespace)  # noqa: S307 - running the model's code is the point
        if inspect.CO_COROUTINE & code_obj.co_flags:
            value = asyncio.run(value)
        return value


__all__ = ["ExecutionResult", "Executor", "NamespaceExecutor"]
