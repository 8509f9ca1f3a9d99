"""One item of a fleet run: the prompt over one notebook or data file, in its own task folder.

:func:`run_item` runs in a worker process (a local pool's or a Ray worker's): it is a top-level
function of plain data, and it writes the item's ``result.json`` atomically when the item is done,
so an interrupted run leaves no result and a later run continues that item's task folder.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict, cast

RESULT_FILE = "result.json"
TASK_FOLDER = "task"
ITEM_PLACEHOLDER = "{item}"


@dataclass(frozen=True)
class ItemSpec:
    """What a worker needs for one item (plain data: it crosses process and machine boundaries)."""

    item: str
    folder: str
    prompt: str
    provider: Literal["auto", "simulated", "anthropic"] = "auto"
    model: str | None = None
    allow: tuple[str, ...] = ()
    max_budget_usd: float | None = None
    max_requests: int | None = None
    notebook: str | None = None
    """A parameterised agent notebook to run for the item instead of the prompt alone (see
    :mod:`.notebook_item`)."""


@dataclass(frozen=True)
class ItemResult:
    """A row of the fleet's table (also the item's ``result.json``)."""

    item: str
    outcome: str
    cost_usd: float = 0.0
    requests: int = 0
    retries: int = 0
    truncations: int = 0
    rate_limit_wait_s: float = 0.0
    seconds: float = 0.0
    error: str | None = None
    resumed: bool = False


class ItemRow(TypedDict):
    """:class:`ItemResult` as the dict a worker hands back (``asdict``; a test keeps the two alike)."""

    item: str
    outcome: str
    cost_usd: float
    requests: int
    retries: int
    truncations: int
    rate_limit_wait_s: float
    seconds: float
    error: str | None
    resumed: bool


def slug(item: str, index: int) -> str:
    """A folder name for the ``index``-th item: readable, unique, safe on any file system."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(item).name).strip("._") or "item"
    return f"{index:04d}-{stem[:60]}"


def prompt_for(template: str, item: Path) -> str:
    """The prompt for ``item``: ``{item}`` replaced by its file name, or the name added at the end."""
    if ITEM_PLACEHOLDER in template:
        return template.replace(ITEM_PLACEHOLDER, item.name)
    return f"{template}\n\nThe file: {item.name}"


def read_result(folder: Path) -> ItemResult | None:
    """The item's result, when it finished (None: not run, or interrupted)."""
    try:
        return ItemResult(**json.loads((folder / RESULT_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def write_result(folder: Path, result: ItemResult) -> ItemRow:
    from ..engine.disk.persist import atomic_write_text

    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / RESULT_FILE, json.dumps(asdict(result)))
    # asdict of an ItemResult has ItemRow's keys and types (test_item_row_has_the_fields_of_item_result)
    return cast("ItemRow", asdict(result))


def run_item(spec: ItemSpec) -> ItemRow:
    """Run one item to its end and record it; returns the result as a dict. Never raises for the
    item's own failure (that is its outcome); a worker killed mid-way leaves no result."""
    if spec.notebook is not None:
        from .notebook_item import run_notebook_item

        return run_notebook_item(spec)
    from ..agent import Agent

    folder, item, started = Path(spec.folder), Path(spec.item), time.monotonic()
    if not item.is_file():
        return write_result(folder, ItemResult(spec.item, "error", error=f"no such file: {spec.item}"))
    task = folder / TASK_FOLDER
    resumed = task.is_dir() and any(task.iterdir())
    settings: dict[str, Any] = {"cwd": item.parent.resolve(), "allow": spec.allow, "max_budget_usd": spec.max_budget_usd}
    if spec.model:
        settings["model"] = spec.model
    if spec.max_requests:
        settings["max_requests"] = spec.max_requests
    try:
        agent = Agent.resume(task, provider=spec.provider, **settings) if resumed else \
            Agent(provider=spec.provider, task_dir=task, **settings)
        try:
            done = agent.run_sync(prompt_for(spec.prompt, item)).done
            totals, records = agent.totals, list(agent.session.records)
        finally:
            agent.close()  # releases the task folder's lock
    except Exception as exc:  # noqa: BLE001 - an item's failure is its row, not the fleet's end
        return write_result(folder, ItemResult(spec.item, "error", error=f"{type(exc).__name__}: {exc}",
                                                seconds=time.monotonic() - started, resumed=resumed))
    outcome = done.reason if done is not None else "error"
    error = (done.error or done.stopped) if done is not None else "the run ended without a Done event"
    return write_result(folder, ItemResult(
        spec.item, outcome, cost_usd=round(totals.spent_usd, 6), requests=totals.spent_requests,
        retries=totals.retries, truncations=totals.truncations,
        rate_limit_wait_s=round(sum(r.rate_limit_wait_s for r in records), 3),
        seconds=round(time.monotonic() - started, 3), error=error, resumed=resumed))
