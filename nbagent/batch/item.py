"""One item of a fleet run: the prompt over one notebook or data file, in its own task folder.

Its plain data (:class:`ItemSpec`, :class:`ItemResult`) and its ``result.json``; :mod:`.worker`
runs it.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, TypedDict, cast

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
