"""``ShellExecutor``: the python tool's executor in a notebook — the live kernel namespace.

Why not ``shell.run_cell``: measured in a real ipykernel 7.4 / IPython 9 kernel, a nested
``run_cell`` from a running top-level-await cell works for plain code but publishes an
``execute_result`` (``Out``) and tracebacks into the *agent's* cell, updates ``_``/history, fires
``pre/post_run_cell`` hooks, and fails with "This event loop is already running" for code that
uses ``await``. So the code is transformed (magics, ``!cmd``) and compiled like IPython does,
then run with ``exec``/``eval`` in ``shell.user_ns`` on the kernel's main thread; a trailing
expression's value is formatted by IPython's display formatter; output and ``display()`` calls
are captured instead of printed into the cell.

Interrupts: while synchronous code runs, the loop is blocked, and ipykernel's handler for an
async cell only *schedules* a cancellation (``time.sleep(10)`` would sleep on). So for that span
a SIGINT handler calls the previous handler (which cancels the cell and triggers the kernel's
abort hook) and then raises ``KeyboardInterrupt`` into the code — including the ``__repr__`` of a
trailing expression, which is the model's code as much as the body. The code gets a traceback in
``error``; the cell's ``CancelledError`` follows at the loop's next await.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import collections
import contextvars
import inspect
import io
import logging
import sys
import time
import traceback
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Callable, Mapping, TypedDict

from ..engine.contracts.config import DEFAULT_TOOL_CAPTURE_LIMIT
from ..tools.capture import BoundedText
from ..tools.executor import ExecutionResult, WorkingDirectoryBusy, format_user_traceback, working_directory
from .document.images import with_bounded_images
from .shown_displays import publisher_class, shown_bundles, shown_images
from .tool_code import tool_code
from .user_code_interrupt import CANCEL_TURNS, interrupt_user_code, raise_on_sigint, watch_sigint

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

HISTORY_KEPT = 64

_RECURSIVE = ("%%agent", "%agent")
RECURSIVE_ERROR = "The python tool cannot run %agent/%%agent: the agent is already running."

_IN_TOOL_CODE: contextvars.ContextVar[bool] = contextvars.ContextVar("nbagent_in_tool_code", default=False)
"""True while code a tool runs (the model's ``python``, an MCP client's ``run_code`` or ``notebook_run``)
executes: an agent prompt it starts (``get_ipython().run_cell_magic("agent", …)``, which the text check
above does not see) would show its Allow / Deny inside the captured output, seen by no one, and hold
the kernel until the call's time limit (attacker pass 22)."""


class AgentInToolCode(RuntimeError):
    """Code a tool runs started an agent prompt (``%%agent``, ``%agent fix`` / ``retry``): refused."""


def refuse_inside_tool_code() -> None:
    """Raise :class:`AgentInToolCode` when called from code a tool is running (see ``_IN_TOOL_CODE``)."""
    if _IN_TOOL_CODE.get():
        raise AgentInToolCode(RECURSIVE_ERROR + " Run the prompt in a cell of its own.")


class CapturedDisplay(TypedDict, total=False):
    """One ``display()`` call of the model's code, as IPython's capturing publisher keeps it."""

    data: dict[str, object]
    metadata: dict[str, object]
    transient: dict[str, object] | None
    update: bool


@dataclass(frozen=True)
class ExecutionRecord:
    """One execution, kept for the tool card and for audit: the code as given and its result."""

    code: str
    result: ExecutionResult
    started: float
    duration_s: float
    displays: tuple[CapturedDisplay, ...] = field(default=())
    execution_count: int | None = None
    """The execution count of the cell whose run called the tool (the agent cell's ``[N]``), None
    outside a cell: see :func:`running_cell_count`."""


def running_cell_count(shell: "InteractiveShell") -> int | None:
    """The execution count of the cell running now, as the front-end numbers it (``[N]``), or None
    outside a cell. IPython adds one to ``shell.execution_count`` as a cell *starts*, so during the
    cell that counter is already the next cell's; the running cell's own number is on the
    ``ExecutionResult`` IPython hands its display hook for the cell's duration."""
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    return count if isinstance(count, int) else None


def _jsonable(bundle: Mapping[str, object]) -> dict[str, object]:
    """Binary MIME data (e.g. PNG bytes) as base64 text, like the kernel would send it."""
    out: dict[str, object] = {}
    for mime, value in bundle.items():
        out[mime] = base64.b64encode(value).decode("ascii") if isinstance(value, (bytes, bytearray)) else value
    return out


class ShellExecutor:
    """Runs the model's code in an IPython shell's user namespace (``shell.user_ns``).

    ``history`` holds an :class:`ExecutionRecord` per call; ``on_execute`` (if given) is called
    with each record, on the loop's thread, after the code ran.
    """

    def __init__(self, shell: "InteractiveShell", *, on_execute: Callable[[ExecutionRecord], object] | None = None,
                 capture_limit: int = DEFAULT_TOOL_CAPTURE_LIMIT) -> None:
        self.shell = shell
        self.on_execute = on_execute
        self.capture_limit = capture_limit  # characters of stdout (and of stderr) kept per execution
        # The latest executions only: each holds its (bounded) output, and a session runs many.
        self.history: collections.deque[ExecutionRecord] = collections.deque(maxlen=HISTORY_KEPT)
        self._counter = 0
        self.before_execute: Callable[[str], object] | None = None
        """Called with each code before it runs (a live turn records what the code reads)."""
        self.after_execute: Callable[[bool], object] | None = None
        """Called once that code ran, with whether it failed (raised, or was stopped)."""

    bounded_images = staticmethod(with_bounded_images)
    """What the python tool applies to its result's images: bounded as ``notebook_read`` bounds a
    cell's (the model's request, and a ``run_code`` client's, took an 18 MB PNG whole)."""

    @property
    def last_code(self) -> str | None:
        """The code of the latest execution (for the tool card)."""
        return self.history[-1].code if self.history else None

    async def execute(self, code: str, *, cwd: str | Path | None = None) -> ExecutionResult:
        """Run ``code``; errors in it come back in ``ExecutionResult.error``, never raised.

        ``cwd``: the kernel's working directory during the execution (restored after it; see
        :func:`~nbagent.tools.executor.working_directory`). A cancellation (abort / kernel
        interrupt) while awaiting inside the code propagates.
        """
        async with _namespace_lock(self.shell):  # executions on one namespace never overlap
            if self.before_execute is not None:
                self.before_execute(code)
            started = time.time()
            t0 = time.monotonic()
            displays: list[CapturedDisplay] = []
            try:
                marked = _IN_TOOL_CODE.set(True)
                try:
                    with working_directory(cwd), watch_sigint(self):
                        result = await self._execute(code, displays)
                finally:
                    _IN_TOOL_CODE.reset(marked)
            except WorkingDirectoryBusy as exc:
                result = ExecutionResult(error=str(exc))
            except BaseException:  # stopped (an abort, the kernel's interrupt): it may not have run
                if self.after_execute is not None:
                    self.after_execute(True)
                raise
            if self.after_execute is not None:
                self.after_execute(result.error is not None)
            record = ExecutionRecord(code, result, started, time.monotonic() - t0, tuple(displays),
                                     running_cell_count(self.shell))
            self.history.append(record)
            if self.on_execute is not None:
                self.on_execute(record)
            return result

    # --- the steps ------------------------------------------------------------------------------

    def _compile(self, code: str) -> tuple[CodeType, CodeType | None, str]:
        """Transform and compile: (body code object, tail expression code object or None, filename)."""
        shell = self.shell
        self._counter += 1
        with tool_code():  # code, also in chat mode
            transformed = shell.transform_cell(code)
        # Registered in linecache (as IPython does for cells) so tracebacks quote the lines.
        filename = shell.compile.cache(transformed, 10_000_000 + self._counter, raw_code=code)
        tree = shell.compile.ast_parse(transformed, filename=filename, symbol="exec")
        transform_ast = getattr(shell, "transform_ast", None)
        if transform_ast is not None:
            tree = transform_ast(tree)
        tail_tree = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            tail_tree = ast.Expression(tree.body.pop().value)
        flags = shell.compile.flags | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
        tail = compile(tail_tree, filename, "eval", flags=flags, dont_inherit=True) if tail_tree is not None else None
        return body, tail, filename

    async def _execute(self, code: str, displays: list[CapturedDisplay]) -> ExecutionResult:
        stripped = code.lstrip()
        if stripped.startswith(_RECURSIVE):
            return ExecutionResult(error=RECURSIVE_ERROR)
        try:
            body, tail, filename = self._compile(code)
        except Exception as exc:  # SyntaxError, or a failing input transformer
            return ExecutionResult(error="".join(traceback.format_exception_only(type(exc), exc)))

        # Bounded like the namespace executor: a print of 200 MB must not fill the kernel's memory.
        out, err = BoundedText(self.capture_limit), BoundedText(self.capture_limit)
        error: str | None = None
        value: object = None
        # A ■ just before this call went to the kernel's own handler, which only schedules the cell's
        # cancellation, a few loop turns later: those turns, so that it lands here and not never
        # (the code below runs without one: an endless loop in it ran on, the ■ lost).
        for _ in range(CANCEL_TURNS):
            await asyncio.sleep(0)
        with _Capture(self.shell, out, err, displays):
            try:
                await self._run(body)
                if tail is not None:
                    value = await self._run(tail)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt/SystemExit in user code too
                error = format_user_traceback(exc, filename)
            result_repr, rich = None, None
            if error is None and value is not None:
                result_repr, rich, error = self._format_interruptible(value, filename)
        shown = shown_bundles(displays)
        return ExecutionResult(stdout=out.getvalue(), stderr=err.getvalue(), result_repr=result_repr, error=error,
                               rich=rich, displayed=self._displayed_text(shown), images=shown_images([*shown, rich or {}]))

    async def _run(self, code_obj: CodeType) -> object:
        ns = self.shell.user_ns
        with raise_on_sigint(self):
            value = eval(code_obj, self.shell.user_global_ns, ns)  # noqa: S307 - running the model's code is the point
        if inspect.CO_COROUTINE & code_obj.co_flags:
            value = await value  # top-level await in the model's code: other tasks run meanwhile
        return value

    def _format_interruptible(self, value: object, filename: str) -> tuple[str | None, dict[str, object] | None, str | None]:
        """Format the tail value; its ``__repr__`` is the model's code too, so ■ must reach it."""
        try:
            with raise_on_sigint(self):
                text, rich = self._format(value)
            return text, rich, None
        except KeyboardInterrupt as exc:
            return None, None, format_user_traceback(exc, filename)

    def _format(self, value: object) -> tuple[str | None, dict[str, object] | None]:
        try:
            formatter = self.shell.display_formatter
            if formatter is None:  # not an IPython shell's: reported as a failed repr
                raise AttributeError("the shell has no display formatter")
            data, _md = formatter.format(value)
        except Exception as exc:  # noqa: BLE001 - a broken repr is the code's problem, reported as such
            return f"<repr failed: {type(exc).__name__}: {exc}>", None
        text = data.get("text/plain")
        try:
            text = text if text is not None else repr(value)
        except Exception as exc:  # noqa: BLE001
            text = f"<repr failed: {type(exc).__name__}: {exc}>"
        rich = {k: v for k, v in data.items() if k != "text/plain"}
        return text, (_jsonable(rich) if rich else None)

    def _displayed_text(self, shown: list[Mapping[str, object]]) -> str:
        """The plain text of each ``display()`` call as the cell ends up showing it, bounded like
        stdout (a display of a huge frame must not fill the kernel's memory twice)."""
        text = BoundedText(self.capture_limit)
        for bundle in shown:
            if isinstance(plain := bundle.get("text/plain"), str) and plain:
                text.write(plain.rstrip("\n") + "\n")
        return str(text.getvalue())


class _NamespaceLocks:
    """The key of the locks of shells that cannot be weakly referenced."""


_NAMESPACE_LOCKS: weakref.WeakKeyDictionary[object, weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]] = \
    weakref.WeakKeyDictionary()


def _namespace_lock(shell: object) -> asyncio.Lock:
    """The lock of ``shell``'s namespace on the running loop, shared by every executor on it.

    One per executor was not enough: nbagent's agent and a ``%agent serve`` client each have one,
    and while one's code awaited the other's ran, each swapping the process-wide streams
    (:class:`_Capture`) and restoring them out of order: one's output went into the other's result
    and stdout was left on a finished run's buffer."""
    loop = asyncio.get_running_loop()
    try:
        per_loop = _NAMESPACE_LOCKS.setdefault(shell, weakref.WeakKeyDictionary())
    except TypeError:  # a shell object with no weak references (a stand-in): one lock per loop for all
        per_loop = _NAMESPACE_LOCKS.setdefault(_NamespaceLocks, weakref.WeakKeyDictionary())
    lock = per_loop.get(loop)
    if lock is None:
        lock = per_loop[loop] = asyncio.Lock()
    return lock


class _Capture:
    """Swap stdout/stderr and the shell's display publisher for the duration of one execution.

    Executions are serialised by the namespace's lock, and synchronous code blocks the loop, so a
    process-wide swap only catches foreign output while the model's code itself awaits.

    Not ``IPython.utils.capture.capture_output``: that one swaps the display publisher of
    ``get_ipython()`` rather than of the executor's ``shell``, keeps the displays only as
    ``RichOutput`` objects (the raw bundles, which the tool card shows, sit in a private list), and
    also replaces ``sys.displayhook``, which the executor does not use (it formats the value itself).
    """

    def __init__(self, shell: "InteractiveShell", out: io.TextIOBase, err: io.TextIOBase,
                 displays: list[CapturedDisplay]) -> None:
        self.shell, self.out, self.err, self.displays = shell, out, err, displays

    def __enter__(self) -> None:
        self.saved = (sys.stdout, sys.stderr, self.shell.display_pub)
        pub = publisher_class()()
        pub.outputs, pub.streams = self.displays, (self.out, self.err)
        self.kernel_log = _KernelLogAside(self.saved[1])
        COMM_LOG.addFilter(self.kernel_log)
        sys.stdout, sys.stderr = self.out, self.err
        self.shell.display_pub = pub

    def __exit__(self, *exc: object) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        sys.stdout, sys.stderr, self.shell.display_pub = self.saved
        COMM_LOG.removeFilter(self.kernel_log)


COMM_LOG = logging.getLogger("Comm")
"""The ``comm`` package's logger: ipykernel's comm manager logs there from the thread that handles
comm messages (e.g. "No such comm", for a widget of a page that was reloaded)."""


class _KernelLogAside(logging.Filter):
    """Keeps the kernel's comm log lines out of a capture: with no handler configured, logging
    writes them to whatever ``sys.stderr`` is at that moment, which during an execution is the
    model's captured output (they would reach the model as the code's stderr). They are written
    where they would have gone without the capture."""

    def __init__(self, stderr: object) -> None:
        super().__init__()
        self.stderr = stderr

    def filter(self, record: logging.LogRecord) -> bool:
        write = getattr(self.stderr, "write", None)
        if write is not None and record.levelno >= logging.WARNING:
            try:
                write(record.getMessage() + "\n")
            except Exception:  # noqa: BLE001 - a log line must never fail the comm's handling
                pass
        return False


__all__ = ["ShellExecutor", "ExecutionRecord", "ExecutionResult", "interrupt_user_code"]
