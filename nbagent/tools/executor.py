"""Running Python for the ``python`` tool: the :class:`Executor` interface and a script executor.

In a notebook the notebook layer supplies an executor that runs code in the live kernel namespace.
:class:`NamespaceExecutor` is the stand-alone one for scripts and tests: a persistent namespace
dict, IPython-like "repr of the last expression", captured stdout/stderr, and tracebacks as text.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
import contextvars
import ctypes
import inspect
import io
import itertools
import linecache
import os
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Iterable, Iterator, Mapping, Protocol, TextIO, TypeGuard, runtime_checkable

from nbagent.engine.contracts.config import DEFAULT_TOOL_CAPTURE_LIMIT

from .capture import BoundedText


@dataclass(frozen=True)
class ExecutionResult:
    """What running one piece of code produced.

    ``result_repr`` is the ``repr`` of a trailing expression (None when there is none or it is
    None); ``error`` is the formatted traceback; ``rich`` is an optional MIME bundle
    (``{"image/png": base64, "text/html": ...}``) of the trailing expression's value from a kernel
    executor. ``displayed`` is the plain text of what the code passed to ``display()`` (one line or
    block per call): without it a ``display(df)`` read as "(no output)" to the model or an MCP
    client, which drew the wrong conclusion (the notebook draws the displays themselves).
    ``images`` are the images the cell ends up showing, ``(media type, base64)`` in its order
    (the displays', then the value's): a loop of ``display(fig)`` sent the model its last figure only.
    """

    stdout: str = ""
    stderr: str = ""
    result_repr: str | None = None
    error: str | None = None
    rich: Mapping[str, object] | None = None
    displayed: str = ""
    images: tuple[tuple[str, str], ...] = ()


@runtime_checkable
class Executor(Protocol):
    """Runs code for the ``python`` tool. Must not raise for errors in the code (put them in
    ``error``); may be cancelled (an abort) at its ``await``."""

    async def execute(self, code: str) -> ExecutionResult: ...


class ExecutorWithCwd(Protocol):
    """An :class:`Executor` whose ``execute`` also takes the working directory (``cwd=``)."""

    async def execute(self, code: str, *, cwd: str | Path | None = None) -> ExecutionResult: ...


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

    def write(self, s: str) -> int:
        return self._target().write(s)

    def writelines(self, lines: Iterable[str]) -> None:  # type: ignore[override]
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._target().flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> object:  # encoding, fileno, ... of the real stream
        return getattr(self.original, name)


_capture = threading.local()
# Process-wide because sys.stdout is: the router stays installed while any execution, of any
# Agent, runs, and the last one out restores the original streams.
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

BUSY_GRACE_S = 2.0
"""How long a call waits for an earlier, aborted call still running before it reports that instead
of waiting (until the next abort) for code that may never end."""

class WorkingDirectory:
    """A claim on the process's working directory, for one execution.

    The working directory belongs to the whole process (in a notebook: the user's kernel), so it is
    changed under a process-wide lock: executions that want the same directory share it, one that
    wants another waits (at most :data:`BUSY_GRACE_S`, then raises :class:`WorkingDirectoryBusy`),
    and the last one to leave restores the directory found by the first. An aborted execution
    releases its claim at once (:meth:`release` is idempotent): code nobody waits for must not
    hold the directory, or keep the next call waiting."""

    _cond = threading.Condition()
    _users = 0
    _target: str | None = None
    _before = ""

    def __init__(self, cwd: str | Path) -> None:
        self.target, self._held = os.fspath(cwd), False

    def acquire(self) -> None:
        cls = WorkingDirectory
        with cls._cond:
            if not cls._cond.wait_for(lambda: cls._users == 0 or cls._target == self.target, timeout=BUSY_GRACE_S):
                raise WorkingDirectoryBusy(self.target, cls._target)
            if cls._users == 0:
                cls._before = os.getcwd()
                os.chdir(self.target)
                cls._target = self.target
            cls._users += 1
            self._held = True

    def release(self) -> None:
        cls = WorkingDirectory
        with cls._cond:
            if not self._held:
                return
            self._held = False
            cls._users -= 1
            if cls._users == 0:
                cls._target = None
                with contextlib.suppress(OSError):  # the old directory may be gone: stay where we are
                    os.chdir(cls._before)
                cls._cond.notify_all()


class WorkingDirectoryBusy(RuntimeError):
    """Another execution in this process runs in another working directory."""

    def __init__(self, wanted: str, held: str | None) -> None:
        super().__init__(f"Not run: another python execution in this process is running in {held!r}, not in "
                         f"{wanted!r}; the working directory is shared by the whole process. Try again when it ends.")


@contextlib.contextmanager
def working_directory(cwd: str | Path | None) -> Iterator[None]:
    """Run the block in ``cwd`` (see :class:`WorkingDirectory`); ``None`` changes nothing."""
    if cwd is None:
        yield
        return
    claim = WorkingDirectory(cwd)
    claim.acquire()
    try:
        yield
    finally:
        claim.release()


def takes_cwd(executor: Executor) -> TypeGuard[ExecutorWithCwd]:
    """Whether ``executor.execute`` accepts ``cwd=`` (executors written before it do not)."""
    try:
        return "cwd" in inspect.signature(executor.execute).parameters
    except (TypeError, ValueError):
        return False


def _interrupt_thread(ident: int) -> None:
    """Raise ``KeyboardInterrupt`` in thread ``ident`` at its next bytecode (Python's only way to
    stop a thread; code blocked in a C call sees it when the call returns)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(KeyboardInterrupt))


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
    abort (cancel the ``execute`` task). An aborted execution gets a ``KeyboardInterrupt`` raised
    into it (a runaway loop stops at once; code blocked in a C call only when the call returns);
    executions never overlap on one namespace, and one that finds an aborted one still running
    after :data:`BUSY_GRACE_S` reports that instead of waiting for it.
    """

    def __init__(self, namespace: dict[str, object] | None = None, *,
                 capture_limit: int = DEFAULT_TOOL_CAPTURE_LIMIT) -> None:
        self.capture_limit = capture_limit  # characters of stdout (and of stderr, and of a repr) kept
        self.namespace: dict[str, object] = namespace if namespace is not None else {"__name__": "__main__"}
        self.namespace.setdefault("__builtins__", builtins)
        self._lock = threading.Lock()
        self._state = threading.Lock()  # guards _in_user_code against the interrupting thread
        self._in_user_code: int | None = None  # the thread running the model's code, if any
        self._claim: WorkingDirectory | None = None  # the running execution's working directory

    async def execute(self, code: str, *, cwd: str | Path | None = None) -> ExecutionResult:
        """Run ``code`` (with the process's working directory set to ``cwd``, when given); errors
        in it come back in ``ExecutionResult.error``, never as exceptions.

        Runs in a daemon thread of its own rather than ``asyncio.to_thread``: an abandoned
        execution in the loop's default executor would make ``asyncio.run`` (and interpreter exit)
        wait for it at shutdown.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ExecutionResult] = loop.create_future()
        context = contextvars.copy_context()  # as asyncio.to_thread does

        def deliver(outcome: ExecutionResult | BaseException) -> None:
            if future.done():  # the waiter may have been cancelled (an abort)
                return
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

        def work() -> None:
            try:
                result = context.run(self._execute_locked, code, cwd)
            except BaseException as exc:  # noqa: BLE001 - an executor bug; hand it to the waiter
                outcome: ExecutionResult | BaseException = exc
            else:
                outcome = result
            try:
                loop.call_soon_threadsafe(deliver, outcome)
            except RuntimeError:  # the loop closed while the code ran: nobody is waiting
                pass

        worker = threading.Thread(target=work, name="nbagent-python", daemon=True)
        worker.start()
        try:
            return await future
        except asyncio.CancelledError:
            self._interrupt(worker)
            raise

    def _interrupt(self, worker: threading.Thread) -> None:
        """Stop an abandoned execution's code (never the executor's own bookkeeping around it)."""
        with self._state:
            if worker.ident is not None and self._in_user_code == worker.ident:
                _interrupt_thread(worker.ident)
            claim = self._claim
        if claim is not None:
            claim.release()

    def _execute_locked(self, code: str, cwd: str | Path | None = None) -> ExecutionResult:
        if not self._lock.acquire(timeout=BUSY_GRACE_S):
            return ExecutionResult(error=(
                "Not run: an earlier python call that was aborted is still running in the background "
                "(it is blocked and could not be interrupted). Wait for it to finish, or restart the kernel."))
        try:
            out, err = BoundedText(self.capture_limit), BoundedText(self.capture_limit)
            _install_router()
            _capture.stdout, _capture.stderr = out, err
            claim = WorkingDirectory(cwd) if cwd is not None else None
            try:
                if claim is not None:
                    claim.acquire()
                    with self._state:
                        self._claim = claim
                result_repr, error = self._run(code)
            except WorkingDirectoryBusy as exc:
                result_repr, error = None, str(exc)
            finally:
                with self._state:
                    self._claim = None
                if claim is not None:
                    claim.release()
                _capture.stdout = _capture.stderr = None
                _uninstall_router()
            if result_repr is not None and len(result_repr) > self.capture_limit:
                cut = BoundedText(self.capture_limit)
                cut.write(result_repr)
                result_repr = cut.getvalue()
            return ExecutionResult(stdout=out.getvalue(), stderr=err.getvalue(), result_repr=result_repr, error=error)
        finally:
            self._lock.release()

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

    def _eval(self, code_obj: CodeType) -> object:
        with self._state:
            self._in_user_code = threading.get_ident()
        try:
            value = eval(code_obj, self.namespace)  # noqa: S307 - running the model's code is the point
            if inspect.CO_COROUTINE & code_obj.co_flags:
                value = asyncio.run(value)
            return value
        finally:
            # An interrupt raised just as the code ends lands here, still inside _run's handler.
            with self._state:
                self._in_user_code = None


__all__ = ["ExecutionResult", "Executor", "NamespaceExecutor", "WorkingDirectory", "WorkingDirectoryBusy", "takes_cwd",
           "working_directory"]
