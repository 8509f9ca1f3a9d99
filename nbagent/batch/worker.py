"""Run one fleet item in a worker process (a local pool's or a Ray worker's).

:func:`run_item` is a top-level function of plain data, and it writes the item's ``result.json``
atomically when the item is done, so an interrupted run leaves no result and a later run continues
that item's task folder.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from .item import TASK_FOLDER, ItemResult, ItemRow, ItemSpec, prompt_for, within_admin, write_result


def warm_up() -> None:
    """Load what every prompt item's agent needs (the SDK, the simulated API, the tools, the
    tokenizer's tables) before the item's clock starts: a fresh worker's first item read ~10 s
    against 0.1 s for the next ones, and ``seconds`` is the item's time, not the worker's start."""
    from .. import tools  # noqa: F401 - imported for their import time
    from ..engine.api_facts.tokens import encoding
    from ..providers import anthropic, simulated  # noqa: F401

    encoding()


def run_item(spec: ItemSpec) -> ItemRow:
    """Run one item to its end and record it; returns the result as a dict. Never raises for the
    item's own failure (that is its outcome); a worker killed mid-way leaves no result."""
    if spec.notebook is not None:
        from .notebook_item import run_notebook_item

        return run_notebook_item(spec)
    from ..agent import Agent

    warm_up()
    folder, item, started = Path(spec.folder), Path(spec.item), time.monotonic()
    if not item.is_file():
        return write_result(folder, ItemResult(spec.item, "error", error=f"no such file: {spec.item}"))
    task = folder / TASK_FOLDER
    resumed = task.is_dir() and any(task.iterdir())
    settings: dict[str, Any] = {"cwd": item.parent.resolve(), "allow": spec.allow}
    budget = within_admin(spec.max_budget_usd)
    if budget is not None:  # none given: the session's default (the admin's cap, where one is set)
        settings["max_budget_usd"] = budget
    if spec.model:
        settings["model"] = spec.model
    if spec.max_requests:
        settings["max_requests"] = spec.max_requests
    # The item's folder is where the data came from (a download, a shared drive, a class's
    # submissions), not a project of the user's: its .mcp.json would start commands for every item.
    wiring: dict[str, Any] = {"provider": spec.provider, "read_mcp_json": False}
    agent: Agent | None = None
    try:
        agent = Agent.resume(task, **wiring, **settings) if resumed else Agent(task_dir=task, **wiring, **settings)
        try:
            done = agent.run_sync(prompt_for(spec.prompt, item)).done
            totals, records, spent = agent.totals, list(agent.session.records), agent.session.spent
        finally:
            agent.close()  # releases the task folder's lock
    except Exception as exc:  # noqa: BLE001 - an item's failure is its row, not the fleet's end
        failed = ItemResult(spec.item, "error", error=f"{type(exc).__name__}: {exc}",
                            seconds=time.monotonic() - started, resumed=resumed)
        if agent is not None:  # requests sent before the failure were billed: counted, never $0
            billed = agent.session.spent
            failed = dataclasses.replace(
                failed, cost_usd=None if billed.unpriced_requests else round(billed.cost_usd, 6),
                budget_usd=round(billed.budget_usd, 6), unpriced_requests=billed.unpriced_requests,
                requests=billed.requests)
        return write_result(folder, failed)
    outcome = done.reason if done is not None else "error"
    error = (done.error or done.stopped) if done is not None else "the run ended without a Done event"
    return write_result(folder, ItemResult(
        # A request of a model without prices has no cost: the item's is unknown (never $0), and the
        # fleet's budget counts it as the item's own budget did (its family's highest price).
        spec.item, outcome, cost_usd=None if spent.unpriced_requests else round(totals.spent_usd, 6),
        budget_usd=round(spent.budget_usd, 6), unpriced_requests=spent.unpriced_requests, requests=totals.spent_requests,
        retries=totals.retries, truncations=totals.truncations,
        rate_limit_wait_s=round(sum(r.rate_limit_wait_s for r in records), 3),
        seconds=round(time.monotonic() - started, 3), error=error, resumed=resumed))
