"""Which notebook a headless kernel runs, as far as the folder can tell.

nbclient, papermill and ``nbconvert --execute`` tell the kernel neither the notebook's path nor a
cell id: the execute request carries the cell's text and nothing else, the kernel's environment
and argv are the caller's, and only the working directory (the notebook's folder) is set. So two
notebooks of one folder that start with the same question are told apart by their files: a record
is this notebook's only if the notebook it names is in the folder and has a cell with this agent
cell's very text (the prompt with its ``%%agent`` options). A headless live turn records the name
of the one notebook of the folder that has its cell, where exactly one does, so that the next
headless run can tell its record from another notebook's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ...engine.disk.json_depth import TooManyValuesError, loads_within
from .bridge import executing_request
from .own_reads import unwatched

if TYPE_CHECKING:
    from .bridge_types import CellJSON

# A notebook larger than this is not read to look for a cell (a received folder could hold anything).
_MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024
MAX_NOTEBOOK_CONTAINERS = 2_000_000
"""The most JSON arrays and objects a notebook read to look for a cell may hold. Real outputs hold one
per 47 bytes at the densest measured (``IPython.display.JSON`` of records, stored as JSON objects: a
50 MB notebook of them holds 1,060,000, which the 1,000,000 first set here skipped); a map's GeoJSON
one per 100; HTML, images and code are strings, which do not count. A notebook of ``[],`` repeated (a
few hundred kB zipped, 60 MB unpacked) holds 20 million, which took 30 s and 1.7 GB to parse; at the
bound it is ~1.2 s."""
# nbconvert's default output beside its input: a copy of the notebook that ran, not another notebook.
_NBCONVERT_OUTPUT = ".nbconvert.ipynb"
# An agent cell: ``%%agent`` on its first line (any other cell magic may wrap a loop of prompts).
_AGENT_CELL = re.compile(r"\s*%%agent(?:[ \t\r]|$)", re.MULTILINE)  # \r: a cell saved with Windows line ends


def executing_code() -> str | None:
    """The text of the cell the kernel is executing, as every client sends it (None outside a kernel)."""
    content = executing_request().get("content")
    code = content.get("code") if isinstance(content, dict) else None
    return code if isinstance(code, str) else None


def runs_again_in_place(root: Path, notebook: str | None, prompt: str) -> bool:
    """Whether a later turn that the executing cell's id asked with ``prompt`` is this very cell run
    again (headless: :func:`.decisions.rerun_turn`). The cell asks one prompt a run: a ``%%agent``
    cell or chat mode's plain cell, not a loop of prompts (notebook 02's, even under ``%%time`` or
    ``%%capture``), whose later turn of the same prompt is the next one. And the recorded notebook
    has no other code cell with its text: JupyterLab keeps a cut cell's id when it is pasted (Cut,
    Undo, Paste makes two cells of one id), so a later turn of that id may be the other cell's,
    which then asked the model headless while this one showed its answer."""
    code = executing_code()
    if code is None or not (_AGENT_CELL.match(code) or code.strip() == prompt.strip()) or not plain_notebook_name(notebook):
        return False
    return sum(s.strip() == code.strip() for s in _sources(root / str(notebook))) == 1


def plain_notebook_name(name: object) -> bool:
    """Whether ``name`` (as nbagent records it, from an index that may have come with the notebook)
    is the file name of a notebook in the folder itself: no directory, not hidden, ``.ipynb``, and
    printable: a name with a line break or an escape in it would print a line of its own under the
    cell, so only such a name is ever named or opened."""
    return isinstance(name, str) and Path(name).name == name and not name.startswith(".") \
        and name.endswith(".ipynb") and name.isprintable() and len(name) <= 255


def _read(path: Path) -> dict[str, object]:
    """The notebook at ``path`` ({} when it is not a readable notebook)."""
    try:
        # never a FIFO or a device, nor a symlink out of the folder
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _MAX_NOTEBOOK_BYTES:
            return {}
        with unwatched():  # nbagent's own look, not an input of the turn running now
            text = path.read_text(encoding="utf-8")
        data = loads_within(text, containers=MAX_NOTEBOOK_CONTAINERS)
    except TooManyValuesError as exc:
        _say_skipped(path, exc)
        return {}
    except (OSError, ValueError):  # not a notebook, or ``[[[…`` nested past the bound
        return {}
    return data if isinstance(data, dict) else {}


_SKIPPED: set[tuple[str, int, int]] = set()
"""The notebooks (path, modification time, size) already said to be skipped: said once each."""


def _say_skipped(path: Path, exc: TooManyValuesError) -> None:
    """Say under the running cell that a notebook of the folder was not read (not silently: it may
    be the one that holds the cell, which then is not found there)."""
    try:
        st = path.stat()
    except OSError:
        return
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key in _SKIPPED:
        return
    _SKIPPED.add(key)
    from IPython.display import display  # not live_lines' show_line: it imports this module back

    display({"text/plain": f"nbagent: {path.name} was not read to find this agent cell: it holds {exc}, more than "
             "any notebook's outputs (reading it would take seconds and GBs). If it is yours, clear its outputs."},
            raw=True)


def _copy_of(path: Path) -> str | None:
    """The notebook that ``path`` is an output of: papermill names its input in the output's
    metadata (``papermill.input_path``), and writes the output as the run goes."""
    metadata = _read(path).get("metadata")
    papermill = metadata.get("papermill") if isinstance(metadata, dict) else None
    source = papermill.get("input_path") if isinstance(papermill, dict) else None
    return Path(source).name if isinstance(source, str) and source else None


def notebook_cells(path: Path) -> list[CellJSON]:
    """The cells of the notebook at ``path`` ([] when it is not a readable notebook; only cells that
    are JSON objects, as received: each value is still checked where it is read)."""
    cells = _read(path).get("cells")
    return [cast("CellJSON", c) for c in cells if isinstance(c, dict)] if isinstance(cells, list) else []


_SOURCES: dict[tuple[str, int, int], list[str]] = {}
"""Each notebook's code texts by path, modification time and size: every agent cell of a headless
Run All asks which notebook of the folder holds it, and each notebook is read and parsed once."""


def _sources(path: Path) -> list[str]:
    """The code cells' texts of the notebook at ``path`` ([] when it is not a readable notebook)."""
    try:
        stat = path.lstat()
    except OSError:
        return []
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _SOURCES:
        if len(_SOURCES) >= 64:  # a folder of many notebooks, or many versions of one: start again
            _SOURCES.clear()
        _SOURCES[key] = _read_sources(path)
    return _SOURCES[key]


def _read_sources(path: Path) -> list[str]:
    out = []
    for cell in notebook_cells(path):
        source = cell.get("source") if cell.get("cell_type") == "code" else None
        if isinstance(source, list):
            source = "".join(s for s in source if isinstance(s, str))
        if isinstance(source, str):
            out.append(source)
    return out


def holds_cell(root: Path, name: str, prompt: str, code: str | None) -> bool:
    """Whether the notebook ``name`` is in the folder ``root`` and has this agent cell: a code cell
    whose text is ``code`` (the executing cell's), or, where that is unknown, one asking ``prompt``."""
    if not plain_notebook_name(name):
        return False  # a name from a received index never leads out of the folder
    sources = _sources(root / name)
    if code is not None:
        return any(s.strip() == code.strip() for s in sources)
    return any(prompt in s for s in sources)


def notebook_with_cell(root: Path, code: str | None) -> str | None:
    """The one notebook of the folder with a cell whose text is ``code`` (None: none, or several),
    not counting an output of another one found (``X.nbconvert.ipynb`` beside ``X.ipynb``, or a
    papermill output naming its input): a copy of the notebook that ran is not another notebook."""
    if code is None or not code.strip():
        return None
    found = {p.name for p in root.glob("*.ipynb") if holds_cell(root, p.name, "", code)}
    outputs = {n for n in found if n.endswith(_NBCONVERT_OUTPUT) and n[:-len(_NBCONVERT_OUTPUT)] + ".ipynb" in found}
    if len(found) > 1:  # a papermill output names its input: read only where there is more than one
        outputs |= {n for n in found if _copy_of(root / n) in found - {n}}
    rest = found - outputs
    return rest.pop() if len(rest) == 1 else None


__all__ = ["executing_code", "holds_cell", "notebook_cells", "notebook_with_cell", "plain_notebook_name",
           "runs_again_in_place"]
