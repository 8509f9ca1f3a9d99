"""The kernel context of a data-science namespace: its size, its build time, and whether it holds
the facts schema questions need.

The namespace: 30 variables, 10 of them DataFrames — ``sales`` (1,000 rows: a float column with
NaNs, a datetime, a category) and nine of 50 columns — and a figure a cell displayed. For each of 20
schema questions ("which columns have missing values and what are their dtypes?") the kernel
context is built as the agent builds it before a prompt, and the bench reports:

- tokens of kernel context per request (text, and the images' estimate), goal <= 3,000 for the text;
- time to build it (wall and CPU, median and max over the questions), goal <= 50 ms; and with a
  hostile object named in the prompt (a ``_repr_llm_`` that sleeps, a ``__len__`` that sleeps),
  goal <= 5 s;
- for each question, whether every fact its answer needs is in the request (the dtype, missing
  count, levels, range ... computed from the data itself), goal 20/20;
- the same for the context nbagent sent before (name, type, shape, first 12 columns), built in
  alternating pairs with the new one, so the time ratio is measured in one run.

Run: ``.venv/bin/python bench/bench_kernel_context.py [--verbose]``.
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

sys.path.insert(0, os.environ.get("NBAGENT_SRC", str(Path(__file__).resolve().parents[1])))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from nbagent.engine.api_facts.tokens import count_text_tokens  # noqa: E402
from nbagent.engine.loop.facts import FactsFocus, FactsSnapshot, VariableInfo  # noqa: E402
from nbagent.notebook.kernel_context import KernelContext  # noqa: E402
from nbagent.notebook.kernel_context.figures import DisplayedImages  # noqa: E402
from nbagent.notebook.kernel_context.told import image_tokens  # noqa: E402

TEXT_GOAL, BUILD_GOAL_S, HOSTILE_GOAL_S = 3_000, 0.050, 5.0


def sales_frame(rng: np.random.Generator) -> pd.DataFrame:
    df = pd.DataFrame({
        "order_id": np.arange(1_000),
        "day": pd.date_range("2025-01-01", periods=1_000, freq="6h"),
        "region": pd.Categorical(rng.choice(["north", "south", "east", "west"], 1_000)),
        "price": rng.gamma(2.0, 20.0, 1_000).round(2),
        "units": rng.integers(1, 9, 1_000),
        "customer": [f"c{n:04d}" for n in rng.integers(0, 600, 1_000)],
    })
    df.loc[rng.choice(1_000, 87, replace=False), "price"] = np.nan
    return df


def wide_frame(rng: np.random.Generator, k: int) -> pd.DataFrame:
    cols: dict[str, Any] = {}
    for j in range(50):
        kind = (j + k) % 5
        if kind == 0:
            cols[f"m{j}"] = rng.normal(size=200)
        elif kind == 1:
            cols[f"m{j}"] = rng.integers(0, 1_000, 200)
        elif kind == 2:
            cols[f"m{j}"] = rng.choice(["low", "mid", "high"], 200)
        elif kind == 3:
            values = rng.normal(size=200)
            values[rng.choice(200, 5 + j % 7, replace=False)] = np.nan
            cols[f"m{j}"] = values
        else:
            cols[f"m{j}"] = pd.Categorical(rng.choice(["a", "b", "c", "d"], 200))
    return pd.DataFrame(cols)


class Model:
    """A user object that says what the model sees of it."""

    def _repr_llm_(self) -> str:
        return "GradientBoosting(n_estimators=300), trained on sales, validation R2 0.71"


class Hostile:
    def _repr_llm_(self) -> str:
        time.sleep(60)
        return ""

    def __len__(self) -> int:
        time.sleep(60)
        return 0


def namespace() -> dict[str, Any]:
    rng = np.random.default_rng(35)
    ns: dict[str, Any] = {"sales": sales_frame(rng)}
    ns.update({f"f{k}": wide_frame(rng, k) for k in range(1, 10)})
    ns.update({
        "weights": np.where(rng.random(500) < 0.04, np.nan, rng.random(500)),
        "totals": ns["sales"].groupby("region", observed=True)["price"].sum(),
        "model": Model(), "threshold": 0.35, "n_folds": 5, "title": "Q1 revenue", "paths": ["a.csv", "b.csv"],
        "params": {"lr": 0.1, "depth": 4}, "seen": {"north", "south"}, "matrix": rng.normal(size=(40, 3)),
    })
    ns.update({f"x{i}": i * 1.5 for i in range(9)})
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    ax.set_title("price by day")  # nothing drawn: the figure the user asks about
    ns["fig"] = fig
    assert len(ns) == 30, len(ns)
    return ns


@dataclass(frozen=True)
class Question:
    prompt: str
    facts: Callable[[dict[str, Any]], list[str]]
    """The strings the answer needs, computed from the data (each must be in the request)."""
    image: bool = False


def missing_and_dtypes(name: str) -> Callable[[dict[str, Any]], list[str]]:
    def facts(ns: dict[str, Any]) -> list[str]:
        df = ns[name]
        return [f"{c}: {df[c].dtype}, {int(n):,} missing" for c, n in df.isna().sum().items() if n]
    return facts


def dtypes_of(name: str, kind: str) -> Callable[[dict[str, Any]], list[str]]:
    def facts(ns: dict[str, Any]) -> list[str]:
        return [f"{c}: {d}," for c, d in ns[name].dtypes.items() if str(d) == kind]
    return facts


def levels_of(name: str, column: str) -> Callable[[dict[str, Any]], list[str]]:
    def facts(ns: dict[str, Any]) -> list[str]:
        cats = list(ns[name][column].cat.categories)
        return [f"{column}: category, 0 missing, levels [{', '.join(repr(c) for c in cats)}]"]
    return facts


QUESTIONS = [
    Question("Which columns of `sales` have missing values and what are their dtypes?", missing_and_dtypes("sales")),
    Question("What are the levels of region in sales?", levels_of("sales", "region")),
    Question("Over which dates does `sales` run?", lambda ns: ["day: datetime64[us], 0 missing, 2025-01-01 00:00:00 .. "
                                                              f"{ns['sales'].day.max()}"]),
    Question("How many rows and columns has sales, and what is its index?",
             lambda ns: ["shape (1000, 6)", "index: RangeIndex, 1,000 entries, 0 .. 999"]),
    Question("What does a row of `sales` look like?", lambda ns: ["first 3 rows:", "c" + ns["sales"].customer[0][1:]]),
    Question("What is the price range in sales?",
             lambda ns: [f"price: float64, 87 missing, {ns['sales'].price.min():.6g} .. {ns['sales'].price.max():.6g}"]),
    Question("Which columns of `f1` have missing values and what are their dtypes?", missing_and_dtypes("f1")),
    Question("Which columns of `f2` are integers?", dtypes_of("f2", "int64")),
    Question("Which columns of f3 are categorical?", dtypes_of("f3", "category")),
    Question("What are the levels of `f4.m0`?", levels_of("f4", "m0")),
    Question("Which columns of `f5` have missing values and what are their dtypes?", missing_and_dtypes("f5")),
    Question("Which columns of `f6` are text?", dtypes_of("f6", "str")),
    Question("How much memory does `f7` use and what is its shape?", lambda ns: ["shape (200, 50)", "memory "]),
    Question("Which columns of `f8` have missing values and what are their dtypes?", missing_and_dtypes("f8")),
    Question("Compare the dtypes of `f9` and `f1`", lambda ns: dtypes_of("f9", "float64")(ns) + dtypes_of("f1", "int64")(ns)),
    Question("How many NaN are in `weights`?", lambda ns: [f"values: {int(np.isnan(ns['weights']).sum()):,} NaN"]),
    Question("What are the totals per region (`totals`)?", lambda ns: ["dtype float64", "first 4:"]),
    Question("What does `model` say about its validation?", lambda ns: ["validation R2 0.71"]),
    Question("Why is this plot empty?", lambda ns: ["Image displayed by In[12]"], image=True),
    Question("Why is `fig` empty?", lambda ns: ["axes 0: title 'price by day'", "EMPTY: nothing drawn"], image=True),
]


def shell_for(ns: dict[str, Any]) -> tuple[Any, DisplayedImages]:
    # A stand-in for the InteractiveShell, with the attributes the kernel context and DisplayedImages
    # read (DisplayedImages is typed for the real shell only).
    shell: Any = SimpleNamespace(user_ns={"In": [""] * 12 + ["fig.savefig('p.png')"], **ns}, user_ns_hidden={},
                                 execution_count=12, display_pub=SimpleNamespace(publish=lambda data, **kw: None))
    displayed = DisplayedImages(shell)
    out = io.BytesIO()
    ns["fig"].savefig(out, format="png")
    shell.display_pub.publish({"image/png": base64.b64encode(out.getvalue()).decode(), "text/plain": "<Figure>"})
    return shell, displayed


def before(ns: dict[str, Any]) -> str:
    """The kernel context nbagent sent before: name, type, shape, the first 12 columns, 50 names."""
    lines = []
    for name, value in list(ns.items())[:50]:
        shape = getattr(value, "shape", None) if type(value).__module__.split(".")[0] in ("numpy", "pandas") else None
        if isinstance(shape, tuple):
            cols = getattr(value, "columns", None)
            summary = f"shape {shape}" + (f", columns {list(cols)[:12]}" if cols is not None else "")
        elif type(value) in (list, tuple, dict, set, str):
            summary = f"len {len(value)}"
        elif type(value) in (int, float, bool):
            summary = repr(value)
        else:
            summary = ""
        lines.append(VariableInfo(name, type(value).__name__, summary))
    return FactsSnapshot.of(lines, []).full_text()


def build(ctx: KernelContext, prompt: str) -> tuple[str, int, float, float]:
    """The request's kernel context (text + image labels), image tokens, wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    state = ctx.focused(FactsFocus(prompt))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    text = FactsSnapshot.of(*state).full_text()
    labels = [b["text"] for b in state.images if b["type"] == "text"]
    return "\n".join([text, *labels]), sum(image_tokens(b) or 0 for b in state.images if b["type"] == "image"), wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print each question's missing facts")
    verbose = parser.parse_args().verbose
    ns = namespace()
    shell, displayed = shell_for(ns)
    build(KernelContext(shell, None, displayed), "warm up")  # imports, tokenizer
    rows, old_walls = [], []
    for q in QUESTIONS:
        ctx = KernelContext(shell, None, displayed)  # a fresh session per question: nothing sent before
        old_wall, old_cpu = time.perf_counter(), time.process_time()
        old_text = before(ns)
        old_walls.append((time.perf_counter() - old_wall, time.process_time() - old_cpu))
        text, img, wall, cpu = build(ctx, q.prompt)
        needed = q.facts(ns)
        missing = [f for f in needed if f not in text]
        rows.append((q, count_text_tokens(text), img, wall, cpu, missing, [f for f in needed if f not in old_text]))
        if verbose and missing:
            print(f"  {q.prompt}: missing {missing}")
    hostile_ns = {**ns, "trap": Hostile()}
    hostile_shell, _ = shell_for(hostile_ns)
    _, _, hostile_wall, _ = build(KernelContext(hostile_shell), "what is `trap`?")
    tokens = [r[1] for r in rows]
    walls, cpus = [r[3] for r in rows], [r[4] for r in rows]
    old_wall_ms = statistics.median(w for w, _ in old_walls) * 1e3
    old_cpu_ms = max(statistics.median(c for _, c in old_walls) * 1e3, 1e-3)
    complete = sum(not r[5] for r in rows)
    complete_before = sum(not r[6] for r in rows)
    print(f"kernel context, {len(ns)} variables ({sum(isinstance(v, pd.DataFrame) for v in ns.values())} DataFrames), "
          f"{len(QUESTIONS)} schema questions")
    print(f"  tokens of text per request: median {statistics.median(tokens):,.0f}, max {max(tokens):,} "
          f"(goal <= {TEXT_GOAL:,}); images: {max(r[2] for r in rows):,} tokens when the prompt is about the plot")
    print(f"  build: wall median {statistics.median(walls) * 1e3:.1f} ms, max {max(walls) * 1e3:.1f} ms; "
          f"CPU median {statistics.median(cpus) * 1e3:.1f} ms (goal <= {BUILD_GOAL_S * 1e3:.0f} ms)")
    print(f"  build with a hostile object named: {hostile_wall:.2f} s (goal <= {HOSTILE_GOAL_S:.0f} s)")
    print(f"  questions whose every fact is in the request: {complete}/{len(QUESTIONS)} (goal {len(QUESTIONS)}/"
          f"{len(QUESTIONS)}); before (name, type, shape, 12 columns): {complete_before}/{len(QUESTIONS)}, "
          f"{count_text_tokens(before(ns)):,} tokens, built in {old_wall_ms:.1f} ms")
    print(f"  build time now / before (alternating, same run): wall {statistics.median(walls) * 1e3 / old_wall_ms:.0f}x, "
          f"CPU {statistics.median(cpus) * 1e3 / old_cpu_ms:.0f}x (before read no column, no value)")
    ok = (max(tokens) <= TEXT_GOAL and statistics.median(walls) <= BUILD_GOAL_S and hostile_wall <= HOSTILE_GOAL_S
          and complete == len(QUESTIONS))
    print("  all goals met" if ok else "  GOALS NOT MET")


if __name__ == "__main__":
    main()
