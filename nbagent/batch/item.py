"""One item of a fleet run: the prompt over one notebook or data file, in its own task folder.

Its plain data (:class:`ItemSpec`, :class:`ItemResult`) and its ``result.json``; :mod:`.worker`
runs it.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, replace
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
    cost_usd: float | None = 0.0
    """What the item's requests cost; None (unknown, never $0) when one of them is of a model
    without prices."""
    requests: int = 0
    retries: int = 0
    truncations: int = 0
    rate_limit_wait_s: float = 0.0
    seconds: float = 0.0
    error: str | None = None
    resumed: bool = False
    budget_usd: float | None = None
    """What the fleet's total budget counts: ``cost_usd`` plus the requests of a model without prices
    at its family's highest price, as the item's own budget counted them (None in a result written
    before this field: ``cost_usd``)."""
    unpriced_requests: int = 0

    @property
    def counted_usd(self) -> float:
        """What this item took from the fleet's total budget."""
        value = self.budget_usd if self.budget_usd is not None else self.cost_usd
        return float(value) if value is not None else 0.0


class ItemRow(TypedDict):
    """:class:`ItemResult` as the dict a worker hands back (``asdict``; a test keeps the two alike)."""

    item: str
    outcome: str
    cost_usd: float | None
    requests: int
    retries: int
    truncations: int
    rate_limit_wait_s: float
    seconds: float
    error: str | None
    resumed: bool
    budget_usd: float | None
    unpriced_requests: int


def within_admin(budget_usd: float | None) -> float | None:
    """An item's per-prompt budget within the admin's ``max_budget_usd`` (None: the session's own
    default, which is the admin's where one is set). A fleet share above the admin's cap, or none
    given at all, was refused with ``AdminLockedError``: no item of a fleet ever ran under a cap."""
    from ..admin.policy import admin_policy

    policy = admin_policy()
    cap = policy.max_budget_usd if policy is not None else None
    return budget_usd if cap is None or budget_usd is None else min(budget_usd, cap)


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
    """The item's result, when it finished (None: not run, or interrupted, or a result whose money is
    not a finite amount >= 0, or unknown in both its fields: a negative or unknown one un-spent the
    fleet's budget for the items still to run)."""
    try:
        result = ItemResult(**json.loads((folder / RESULT_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
    money = (result.cost_usd, result.budget_usd)
    if not all(m is None or (type(m) in (int, float) and math.isfinite(m) and m >= 0) for m in money):
        return None
    if money == (None, None):  # no writer leaves both unknown: counted as $0, it would un-spend the budget
        return None
    return result


def spent_before(folder: Path, item: str = "") -> ItemResult:
    """What an unfinished item's task folder already spent, as a row's figures (a request of a model
    without prices at its family's highest price in ``budget_usd``, as the item's row will count it):
    an item interrupted in an earlier run continues its saved session, and its row adds that spend."""
    from ..classroom import _folder_figures

    task = folder / TASK_FOLDER
    figures = [f for f in (_folder_figures(m.parent) for m in task.glob("**/session.json")) if f is not None] \
        if task.is_dir() else []
    total = {k: sum(f[k] for f in figures) for k in ("cost_usd", "budget_usd", "requests", "unpriced_requests")}
    unpriced = int(total["unpriced_requests"])
    return ItemResult(item, "interrupted", cost_usd=None if unpriced else round(total["cost_usd"], 6),
                      budget_usd=round(total["budget_usd"], 6), requests=int(total["requests"]),
                      unpriced_requests=unpriced)


def write_result(folder: Path, result: ItemResult) -> ItemRow:
    from ..engine.contracts.config import DEFAULT_SECRET_ENV
    from ..engine.credentials.env_secrets import credential_env_values
    from ..engine.disk.persist import atomic_write_text
    from ..engine.loop.sanitize import Sanitizer, secret_values
    from ..providers.endpoints import profile_secret_env

    if result.error:  # an exception's text (a failing worker, a template's cell): the API key is never written
        names = (*DEFAULT_SECRET_ENV, *profile_secret_env())
        clean = Sanitizer(secret_values(names, credential_env_values())).redact(result.error)
        result = replace(result, error=clean)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / RESULT_FILE, json.dumps(asdict(result)))
    # asdict of an ItemResult has ItemRow's keys and types (test_item_row_has_the_fields_of_item_result)
    return cast("ItemRow", asdict(result))
