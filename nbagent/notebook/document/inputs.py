"""What a turn's answer depended on: recorded while it runs live, compared when its cell replays.

- Variables the agent's code read (every ``python`` / ``notebook_run`` execution is parsed before it
  runs; a name read that the turn's own code did not assign first is an input): content
  fingerprints taken before the code runs (:mod:`.fingerprint`).
- Variables the kernel context described in full (a frame's levels, missing counts, sample rows):
  content fingerprints too, taken when the context is built, since the model may answer from them
  without running code (:meth:`TurnWatch.told_in_full`).
- The ``Out[n]`` values the model was told (recent outputs): content fingerprints under their
  cell's text, taken then too; and the images of the cells whose plots it was sent (a digest).
- Variables the model was shown in a line only and did not read: what it was shown of them (type,
  shape, length, a scalar's value). One that is gone since is not reported: it was shown, not used.
- Files read during the turn (the agent's code through ``open``, pandas and numpy included, and
  ``read_file``): their size and SHA-256, taken when first opened; files the turn wrote are its
  own output, not an input. Seen through a process audit hook, active only during a live turn.
  What a ``shell`` command reads is not seen.
- The cells it had in context: the recent cells as the user last ran them (a cell run again with
  new text replaces its earlier text; a cell of ``%`` magics only, such as ``%config``, is set-up);
  and the cells its code became (:mod:`.made_cells`).

A replay compares them at that point of the run: the kernel's namespace and the files as they are
when the agent cell replays, which is the state the live turn started from when the notebook is
unchanged (the agent's code cells run after it).
"""

from __future__ import annotations

import ast
import builtins
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from .bindings import surely_bound
from .cell_log import CONTEXT_CELLS as CONTEXT_CELLS
from .cell_log import CellLog, cell_key, context_cells, parameter_names, ran_inputs
from .described import value_fingerprint
from .fingerprint import file_fingerprint, fingerprint, library_paths, shown_fingerprint
from .own_reads import unwatched, watching
from .turn_inputs import TurnInputs as TurnInputs  # re-exported: the record's schema, made here

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell


_HIDDEN = {"In", "Out", "exit", "quit", "get_ipython", "open"}
_SKIPPED_TYPES = ("module", "type", "builtin_function_or_method")
def user_variables(shell: InteractiveShell) -> Iterable[tuple[str, object]]:
    """The namespace's user variables, as the model is told about them (no modules, classes, hidden names)."""
    hidden = getattr(shell, "user_ns_hidden", {})
    for name, value in list(shell.user_ns.items()):
        if name.startswith("_") or name in _HIDDEN or name in hidden:
            continue
        if type(value).__name__ in _SKIPPED_TYPES:
            continue
        yield name, value


def holds_secret(value: object, redact: Callable[[str], str] | None) -> bool:
    """Whether ``value`` is a string (or bytes) in which ``redact`` finds a secret: its content
    fingerprint, an unsalted digest saved in the notebook's record, would let whoever receives the
    notebook check guesses of a short password offline."""
    if redact is None or not isinstance(value, (str, bytes, bytearray)):
        return False
    text = value if isinstance(value, str) else bytes(value).decode("utf-8", "replace")
    return redact(text) != text


SHORT_TEXT = 4096  # a password's length narrows guesses; a corpus's says nothing (and scanning 50 MB took 0.5 s)


def short_secret(value: object, redact: Callable[[str], str] | None) -> bool:
    """Whether ``value`` is a text of at most :data:`SHORT_TEXT` characters holding a secret."""
    return isinstance(value, (str, bytes, bytearray)) and len(value) <= SHORT_TEXT and holds_secret(value, redact)


# --- recording a live turn -------------------------------------------------------------------------


class _Active:
    watch: "TurnWatch | None" = None
    hooked = False


def notebook_read(digests: Mapping[str, str | None], sources: Mapping[str, str | None] | None = None) -> None:
    """Tell the live turn's watch, if any, the outputs and cell texts the notebook tools showed the
    model (see :meth:`TurnWatch.notebook_read`)."""
    if _Active.watch is not None and (digests or sources):
        _Active.watch.notebook_read(digests, sources or {})


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event != "open":
        return
    watch = _Active.watch
    if watch is None or not watching():
        return
    with unwatched():  # hashing opens the file again
        try:
            watch.opened(*args[:3])
        except Exception:  # noqa: BLE001 - an audit hook must never break the code that opens a file
            pass


class TurnWatch:
    """Records one live turn's inputs: start it before the run, :meth:`before_code` before each
    execution, ``with watch:`` around the run (files), :meth:`inputs` at the end."""

    def __init__(self, shell: InteractiveShell, root: Path, log: CellLog | None,
                 redact: Callable[[str], str] | None = None) -> None:
        # ``redact``: the session's sanitizer (its secrets as of this turn); what is saved holds none
        self.shell, self.root, self._redact = shell, root.resolve(), redact
        self._secret = (lambda text: redact(text) != text) if redact is not None else None
        """Whether a text holds a secret: a value holding one anywhere gets no fingerprint."""
        self._libraries = library_paths()
        # A password is not kept even by its length (whoever receives the record reads it).
        self.shown = {name: shown_fingerprint(value) for name, value in user_variables(shell)
                      if not short_secret(value, redact)}
        self.cells = context_cells(shell, log, redact)
        self.cell_ids = {key: log.ids[key] for key in self.cells if log is not None and key in log.ids}
        self.log = log
        self._agent_texts = dict(log.agent_texts) if log is not None else {}
        self.read: dict[str, str] = {}
        self.unchecked: list[str] = []
        self.assigned: set[str] = set()  # names an unconditional top-level statement bound
        self.code_read: set[str] = set()  # names the turn's code loaded (before or after binding them)
        self.fresh: set[str] = set()  # of ``assigned``: bound before the turn's code read them
        self._pending: tuple[set[str], set[str]] | None = None  # the running call's (bound, fresh)
        self.files: dict[str, str] = {}
        self.written: set[str] = set()
        self.outputs: dict[str, str] = {}
        self.images: dict[str, str] = {}
        self.read_outputs: dict[str, str] = {}
        self.read_sources: dict[str, str] = {}
        self._turns_cells: set[str] = set()  # cells the turn replaced or ran: their outputs are its work
        self.ran_code = False
        """Whether the turn ran code in the kernel (every tool that does goes through the executor)."""
        for name in parameter_names(shell):  # papermill's values: by content, not as a context cell
            self._read(name)

    def before_code(self, code: str) -> None:
        """Fingerprint the namespace's values this code reads, before it runs."""
        self.ran_code = True
        try:
            tree = ast.parse(self.shell.transform_cell(code))
        except Exception:  # noqa: BLE001 - code that does not parse reads nothing
            return
        # Statement by statement, in the order they run: `df = pd.read_csv(…)` then `df.head()` reads
        # the turn's own `df`, not the one the kernel had (which a fresh kernel's replay lacks). Within
        # one statement (`x = x + 1`, a loop) the loads count first. Only an assignment that surely ran
        # makes a name the turn's own: one under `if`/`try`/`for`/`with`, in a function or a
        # comprehension may not have, and a missed change is worse than a false one.
        # A call's bindings count for the turn's later calls only once it ran to its end
        # (:meth:`after_code`): `sales = pd.read_csv("missing.csv")` that raised bound nothing, and
        # the next call's `sales` is the user's. Within the call, a read after a binding ran after it.
        bound: set[str] = set()
        fresh: set[str] = set()
        for statement in tree.body:
            augmented = {id(n.target) for n in ast.walk(statement) if isinstance(n, ast.AugAssign)}
            loads = [node.id for node in ast.walk(statement) if isinstance(node, ast.Name)
                     and (isinstance(node.ctx, ast.Load) or id(node) in augmented)]  # `x += 1` reads x
            for name in dict.fromkeys(loads):
                if name not in bound:
                    self._read(name)
            self.code_read.update(loads)
            for name in surely_bound(statement):
                if name not in self.code_read:
                    fresh.add(name)  # bound before any read: F1's "loaded again" (see _left_values)
                bound.add(name)
        self._pending = (bound, fresh)

    def after_code(self, failed: bool) -> None:
        """The code :meth:`before_code` read has run: to its end (its bindings are the turn's own from
        now on), or not (``failed``: it raised or was stopped, so they may not have happened)."""
        if self._pending is not None and not failed:
            self.assigned |= self._pending[0]
            self.fresh |= self._pending[1]
        self._pending = None

    def told(self, full: Iterable[str], outputs: Iterable[int], images: Mapping[int, str],
             described: Mapping[str, str] | None = None) -> None:
        """What the kernel context told the model, when it is built (before the turn's code runs):
        the variables described in full (``described``: the text of those described by their own),
        the execution counts of the ``Out[n]`` it quoted, and the cells whose displayed images it
        sent (cell number → their digest)."""
        self.told_in_full(full, described)
        self.told_outputs(outputs)
        raw = ran_inputs(self.shell)
        for n, digest in images.items():
            source = raw[n] if 0 < n < len(raw) else ""
            if source.strip() and (self._redact is None or self._redact(source) == source):
                self.images[cell_key(source)] = digest

    def told_outputs(self, counts: Iterable[int]) -> None:
        """Fingerprint by content each ``Out[n]`` the model was told, under its cell's text: an answer
        read off a cell's output is stale when that cell's output differs at the replay."""
        raw, out = ran_inputs(self.shell), self.shell.user_ns.get("Out", {})
        for n in counts:
            source = raw[n] if 0 < n < len(raw) else ""
            if not source.strip() or not isinstance(out, dict) or n not in out:
                continue
            if self._redact is not None and self._redact(source) != source:
                continue  # a cell holding a secret is no input (see context_cells)
            value = out[n]
            fp = None if holds_secret(value, self._redact) else fingerprint(value, secret=self._secret)
            if fp is not None:
                self.outputs[cell_key(source)] = fp

    def notebook_read(self, digests: Mapping[str, str | None], sources: Mapping[str, str | None]) -> None:
        """The outputs and texts of cells ``notebook_read`` showed the model (cell id → digest, see
        :mod:`.read_outputs`): the last read counts. None: the turn's ``notebook_edit`` replaced the
        cell or its ``notebook_run`` ran it, so its outputs are the turn's work (in nbagent's own form,
        which a kernel's Run All never gives again), not an input, before or after that."""
        for kept, read in ((self.read_outputs, digests), (self.read_sources, sources)):
            for cell_id, digest in read.items():
                if digest is None:
                    kept.pop(cell_id, None)
                    self._turns_cells.add(cell_id)
                elif cell_id not in self._turns_cells:
                    kept[cell_id] = digest

    def told_in_full(self, names: Iterable[str], described: Mapping[str, str] | None = None) -> None:
        """The variables the kernel context described in full to the model (a frame's columns with
        their levels, missing counts and sample rows): fingerprinted by content, as a value the code
        read is, when the context is built (before any of the turn's code runs). The answer may
        rest on any of it, so a changed row, level or missing value is a change, not only a changed
        shape (what a variable described in a line is compared by). ``described``: the text each was
        told by, where it is its own (``_repr_llm_``): fingerprinted by it, not described again."""
        for name in names:
            self._read(name, (described or {}).get(name))

    def _read(self, name: str, told: str | None = None) -> None:
        """Fingerprint the value of ``name`` as it is now, once per turn, unless the turn made it."""
        ns = self.shell.user_ns
        hidden = getattr(self.shell, "user_ns_hidden", {})
        if name in self.assigned or name in self.read or name in self.unchecked or name not in ns:
            return
        if name.startswith("_") or name in _HIDDEN or name in hidden or hasattr(builtins, name):
            return
        value = ns[name]
        if type(value).__name__ in _SKIPPED_TYPES:
            return
        fp = None if holds_secret(value, self._redact) else value_fingerprint(value, secret=self._secret, told=told)
        (self.unchecked.append(name) if fp is None else self.read.__setitem__(name, fp))

    # --- files (the audit hook) ---------------------------------------------------------------
    def __enter__(self) -> "TurnWatch":
        if not _Active.hooked:
            import sys

            sys.addaudithook(_audit)  # process-wide and permanent: it does nothing outside a watch
            _Active.hooked = True
        _Active.watch = self
        return self

    def __exit__(self, *exc: object) -> None:
        if _Active.watch is self:
            _Active.watch = None

    def opened(self, path: object, mode: object = None, flags: object = 0) -> None:
        if not isinstance(path, (str, bytes, os.PathLike)):  # a file descriptor, or nothing to name
            return
        full = os.path.realpath(os.fsdecode(os.fspath(path)))
        rel = self._relative(full)
        if rel is None:
            return
        if _writes(mode, flags):
            self.written.add(rel)
        elif rel not in self.written and rel not in self.files and os.path.isfile(full):
            fp = file_fingerprint(Path(full), self._secret)
            if fp is not None:
                self.files[rel] = fp

    def _relative(self, full: str) -> str | None:
        return followed(full, self.root, self._libraries)

    def inputs(self, made: Mapping[str, str] | None = None) -> TurnInputs:
        """The turn's inputs; ``made``: tool call id → the code its cell was made with."""
        from .made_cells import made_keys

        read = dict(self.read)
        shown = {k: v for k, v in self.shown.items() if k not in read}
        files = {k: v for k, v in self.files.items() if k not in self.written}
        return TurnInputs(read, shown, files, dict(self.cells), dict(self.cell_ids), tuple(self.unchecked),
                          self._left_cells(), self._left_values(read, shown), dict(self.outputs),
                          dict(self.images), made_keys(made or {}, self._redact), dict(self.read_outputs),
                          dict(self.read_sources))

    def _left_values(self, read: Mapping[str, str], shown: Mapping[str, str]) -> dict[str, str]:
        """The inputs whose value differs at the turn's end (its own code's work), as they are now;
        one the turn left holding a secret gets no digest, as an input holding one gets none. None
        where the turn ran no code: nothing of it changed them (each value was read again, a
        ``_repr_llm_`` called again, at every prompt's end)."""
        ns, left = self.shell.user_ns, dict[str, str]()
        if not self.ran_code:
            return left

        def content(value: object) -> str | None:
            return None if holds_secret(value, self._redact) else value_fingerprint(value, secret=self._secret)

        for names, fingerprint_of in ((read, content), (shown, shown_fingerprint)):
            for name, found in names.items():
                now = fingerprint_of(ns[name]) if name in ns else None
                # A name the code bound before reading it is kept even as found: undefined at the
                # replay, the turn's code cells below make it again. One it read first is not.
                if now is not None and (now != found or (names is read and name in self.fresh)):
                    left[name] = now
        return left

    def _left_cells(self) -> dict[str, str]:
        """The cells in context this turn's own notebook tools changed, with the text it left them with."""
        now = self.log.agent_texts if self.log is not None else {}
        in_context = set(self.cell_ids.values())
        return {cell_id: cell_key(text) for cell_id, text in now.items()
                if cell_id in in_context and self._agent_texts.get(cell_id) != text
                and (self._redact is None or self._redact(text) == text)}  # a secret's text: no digest


def followed(full: str, root: Path, libraries: tuple[str, ...]) -> str | None:
    """``full`` (a resolved path) relative to the notebook's folder ``root`` (resolved), or None for
    a file nbagent does not follow (outside it, hidden, installed code, compiled caches)."""
    if full.startswith(libraries):
        return None
    try:
        rel = Path(full).relative_to(root)
    except ValueError:
        return None
    if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
        return None
    return rel.as_posix()


def _writes(mode: object, flags: object) -> bool:
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))


__all__ = ["CellLog", "TurnInputs", "TurnWatch", "cell_key", "context_cells", "followed", "holds_secret", "ran_inputs",
           "short_secret", "unwatched", "user_variables"]
