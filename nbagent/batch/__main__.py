"""``python -m nbagent.batch PROMPT ITEM…``: one prompt over many notebooks or data files.

Each item runs in its own task folder under ``--out`` (a process pool of ``--jobs`` workers, or a
Ray cluster with ``--ray ADDRESS``); the run prints one table (cost, requests, retries,
truncations, rate limit wait, outcome per item) and writes it to ``OUT/summary.csv``. Run the same
command again to continue an interrupted run: finished items are kept, unfinished ones continue
their saved sessions. ``{item}`` in the prompt is replaced by the item's file name.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .fleet import Fleet, as_spreadsheet_text, as_terminal_text, table
from .item import ItemSpec
from .pools import LocalPool, Pool, RayPool


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m nbagent.batch", description=__doc__.splitlines()[0].strip("`: "))
    p.add_argument("prompt", help="the prompt; {item} is replaced by each item's file name")
    p.add_argument("items", nargs="+", help="notebooks or data files, one item each")
    p.add_argument("--out", type=Path, default=Path("batch-runs"), help="folder of the task folders (default: batch-runs)")
    p.add_argument("--jobs", type=int, default=4, help="items run at once (default 4)")
    p.add_argument("--budget", type=float, default=None, help="total budget in USD over all items")
    p.add_argument("--provider", choices=["auto", "simulated", "anthropic"], default="auto")
    p.add_argument("--model", default=None)
    p.add_argument("--allow", nargs="*", action="extend", default=[], metavar="TOOL",
                   help="tools that run without asking (--allow a b, or --allow a --allow b)")
    p.add_argument("--max-requests", type=int, default=None, help="most API requests per item")
    p.add_argument("--notebook", type=Path, default=None, metavar="NB.ipynb",
                   help="run this parameterised agent notebook per item (item, prompt and the task folder "
                        "injected after its 'parameters' cell) instead of the prompt alone")
    p.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="run the items on a Ray cluster (ADDRESS, or 'local' for a Ray instance here)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the fleet; exit 0 when every item ended with an answer, 1 otherwise."""
    args = parser().parse_args(argv)
    if args.jobs < 1:
        parser().error("--jobs must be at least 1")
    if args.budget is not None and not args.budget >= 0:
        parser().error("--budget must be >= 0 (USD)")
    template = ItemSpec(item="", folder="", prompt=args.prompt, provider=args.provider, model=args.model,
                        allow=tuple(args.allow), max_requests=args.max_requests,
                        notebook=str(args.notebook.resolve()) if args.notebook else None)
    if args.notebook is not None and not args.notebook.is_file():
        parser().error(f"--notebook: no such file: {args.notebook}")
    fleet = Fleet(items=args.items, prompt=args.prompt, out=args.out, jobs=args.jobs, budget_usd=args.budget,
                  template=template)

    def pool(jobs: int) -> Pool:
        return RayPool(args.ray) if args.ray else LocalPool(jobs)

    try:
        results = fleet.run(pool)
    except KeyboardInterrupt:
        print("interrupted: run the same command again to continue the unfinished items", file=sys.stderr)
        return 130
    df = table(results)
    args.out.mkdir(parents=True, exist_ok=True)
    as_spreadsheet_text(df).to_csv(args.out / "summary.csv", index=False)
    print(as_terminal_text(df.drop(columns=["error"])).to_string(index=False))
    unpriced = int(df["unpriced_requests"].sum())
    # A request of a model without prices has no cost: the total is unknown, never the priced part as if whole.
    cost = (f"unknown ({unpriced} request(s) of a model without prices; the budget counted "
            f"${df['budget_usd'].fillna(df['cost_usd']).sum():.4f})") if unpriced else f"${df['cost_usd'].sum():.4f}"
    print(f"total: {cost}, {int(df['requests'].sum())} requests, "
          f"{(df['outcome'] == 'end_turn').sum()}/{len(df)} answered")
    return 0 if (df["outcome"] == "end_turn").all() else 1


if __name__ == "__main__":
    sys.exit(main())
