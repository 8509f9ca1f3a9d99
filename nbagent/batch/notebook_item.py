"""One item of a fleet run as a parameterised agent notebook: the notebook runs on the nbagent
kernel with ``item`` (the file's path), ``prompt`` and the item's task folder injected, like
papermill's parameters (after the cell tagged ``parameters``, else first).

The kernel's agent sessions persist in the item's task folder (``AgentMagics.task_root``), so
the row's cost, requests, retries and truncations are read from there; the executed notebook is
kept beside them (``executed.ipynb``). Needs the ``notebooks`` extra and the nbagent kernelspec.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..notebook.autorun import CANCEL_FAILED
from .item import ITEM_PLACEHOLDER, TASK_FOLDER, ItemResult, ItemRow, ItemSpec, within_admin, write_result

if TYPE_CHECKING:
    from nbformat import NotebookNode

EXECUTED = "executed.ipynb"
UNATTENDED_CLICK = ("Deny", CANCEL_FAILED)
"""What the run presses on a permission question (what ``--allow`` does not name is denied), and on
a request that failed for good (the item fails, rather than wait for Retry until the cell's timeout)."""


OWN_IMPORTS = "__import__('nbagent.notebook.warmup', fromlist=['_']).imported()  # pandas, the SDK: not from the item's folder"
"""First of all, before the template's cells: the kernel works in the submitted item's folder, and a
template's ``import pandas`` there took pandas's optional dependencies from it (a submitted
``pyarrow.py`` ran). Imported by nbagent first, they never come from the folder (see
:mod:`nbagent.engine.disk.own_imports`); the template's ``import solution`` still imports the item's."""


def parameters_source(spec: ItemSpec, task_root: Path) -> str:
    """The injected cell: nbagent's own imports, plain assignments and ``%config`` lines (values as Python literals)."""
    return "\n".join([
        "# Parameters injected by nbagent.batch",
        OWN_IMPORTS,
        f"item = {str(Path(spec.item).resolve())!r}",
        # `{item}` replaced by the file's name, as in a prompt item's prompt (the notebook has `item` too,
        # so nothing is added when the template does not name it): the model was sent "Check {item} …".
        f"prompt = {spec.prompt.replace(ITEM_PLACEHOLDER, Path(spec.item).name)!r}",
        f"%config AgentMagics.task_root = {str(task_root)!r}",
        f"%config AgentMagics.provider = {spec.provider!r}",
        # The item's folder (the kernel's working folder) is data, not the user's project: its
        # .mcp.json starts nothing, and its .nbagent/ records are neither replayed (a submitted
        # folder's forged answer was shown and counted as the item's, with no request sent) nor
        # written; the sessions go to the task folder above.
        "%config AgentMagics.mcp_json = False",
        "%config AgentMagics.record = False",
        *([f"%config AgentMagics.model = {spec.model!r}"] if spec.model else []),
        *([f"%config AgentMagics.max_budget = {budget!r}"] if (budget := within_admin(spec.max_budget_usd)) is not None else []),
        *([f"%config AgentMagics.allow = {list(spec.allow)!r}"] if spec.allow else []),
        *([f"%config AgentMagics.max_requests = {spec.max_requests!r}"] if spec.max_requests else []),
    ])


def with_parameters(nb: NotebookNode, source: str) -> NotebookNode:
    """``nb`` with the parameters cell after the one tagged ``parameters`` (else first), and its
    ``%config`` lines first of all where that is not first: the template's cells above its
    parameters run too, and ran with your defaults (no task folder, budget, nor ``record = False``:
    their requests went uncounted and uncapped, their sessions into the submitted item's folder)."""
    import nbformat

    cell = nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]})
    tagged = [i for i, c in enumerate(nb.cells) if "parameters" in c.get("metadata", {}).get("tags", [])]
    nb.cells.insert(tagged[0] + 1 if tagged else 0, cell)
    if tagged and tagged[0] > 0:
        settings = "\n".join(line for line in source.splitlines() if line.startswith("%config ") or line == OWN_IMPORTS)
        nb.cells.insert(0, nbformat.v4.new_code_cell(settings, metadata={"tags": ["injected-settings"]}))
    return nb


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
"""The colours of a cell's traceback (``\x1b[31mAssertionError\x1b[39m``): not text for summary.csv."""


def error_line(exc: Exception) -> str:
    """The line of a failed run the row shows: a failing cell's error (the message's last line), or,
    for a cell that timed out, nbclient's first line ("A cell timed out …, after 300 seconds."): its
    last is the dashes under the cell's preview, which is all the row said."""
    lines = ANSI.sub("", str(exc)).strip().splitlines()
    if not lines:
        return ""
    return lines[0] if type(exc).__name__ == "CellTimeoutError" else lines[-1]


def run_notebook_item(spec: ItemSpec) -> ItemRow:
    """Execute the notebook for one item and record its row (a failing cell is the item's error)."""
    from ..classroom import _folder_figures
    from ..notebook.autorun import run_notebook

    # Absolute: the kernel works in the item's folder, where a relative task folder (--out runs)
    # put the item's sessions into the item's folder and counted none of them (0 requests, $0).
    folder, started = Path(spec.folder).resolve(), time.monotonic()
    if not Path(spec.item).is_file():
        return write_result(folder, ItemResult(spec.item, "error", error=f"no such file: {spec.item}"))
    import nbformat

    task_root = folder / TASK_FOLDER
    # Cut short before (Ctrl-C: no result): the notebook runs again from its first cell, its agent
    # cells ask the model again, and the earlier run's sessions stay in its row's figures. The row
    # said resumed False, as for an item never started: nothing told the user it had spent before.
    resumed = task_root.is_dir() and any(task_root.glob("**/session.json"))
    task_root.mkdir(parents=True, exist_ok=True)
    nb = with_parameters(nbformat.read(str(spec.notebook), as_version=4), parameters_source(spec, task_root))
    source = folder / "parameterised.ipynb"
    nbformat.write(nb, str(source))
    outcome, error = "end_turn", None
    try:
        # Nobody watches: a question is answered Deny, as a prompt item's is (no one to ask), so only
        # the tools of --allow run. Autorun's default, Allow, let the model (and whatever the item's
        # data told it) run code, shell commands and protected writes unasked.
        # The folder the item is listed in, as for a prompt item: never where a symlinked item points
        # (a submitted ``data.csv -> ~/project/x`` put the kernel, and the model's tools, in that folder).
        run_notebook(source, folder / EXECUTED, kernel_name="nbagent", cwd=Path(spec.item).parent.resolve(),
                     click=UNATTENDED_CLICK)
    except Exception as exc:  # noqa: BLE001 - a failing cell (CellExecutionError) is this item's outcome
        # (Ctrl-C is not: run_notebook raises KeyboardInterrupt, and the item keeps no result.)
        outcome, error = "error", f"{type(exc).__name__}: {error_line(exc)}"
    figures = [f for f in (_folder_figures(m.parent) for m in task_root.glob("**/session.json")) if f is not None]
    total = {k: sum(f[k] for f in figures) for k in ("cost_usd", "requests", "retries", "truncations", "rate_limit_wait_s",
                                                     "budget_usd", "unpriced_requests")}
    unpriced = int(total["unpriced_requests"])
    return write_result(folder, ItemResult(
        spec.item, outcome, cost_usd=None if unpriced else round(total["cost_usd"], 6),
        budget_usd=round(total["budget_usd"], 6), unpriced_requests=unpriced, requests=int(total["requests"]),
        retries=int(total["retries"]), truncations=int(total["truncations"]),
        rate_limit_wait_s=round(total["rate_limit_wait_s"], 3), seconds=round(time.monotonic() - started, 3),
        error=error, resumed=resumed))
