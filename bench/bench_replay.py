"""Replay: Restart & Run All of a 50-turn agent notebook ÷ running its materialised code cells alone.

A 50-turn session is recorded live through nbclient against the offline simulated API (each turn one
``python`` call). Its materialised notebook is then built as the bridge builds it in JupyterLab:
each agent cell followed by the code cell of its call. Both notebooks run in fresh kernels through
nbclient (what Restart & Run All or papermill costs, kernel start included):

- replay: the agent cells replay from the record (no request: the kernel has no key and no model)
  and the code cells re-execute;
- code alone: only the code cells.

Goal: replay ≤ 1.5× code alone. Rounds alternate their order; the ratio is the median of the
per-round ratios. It also prints what the records carried in the agent cells' metadata (the record
that travels with the notebook, see docs/replay.md) add to the ``.ipynb``, in bytes of JSON.
Run: ``.venv/bin/python bench/bench_replay.py [TURNS] [ROUNDS]``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

SETUP = "%load_ext nbagent\n%config AgentMagics.allow = ['python']"


def prompts(turns: int) -> list[str]:
    return [f"what is {n} * 7? use python" for n in range(1, turns + 1)]


def execute(cells: list[str], cwd: Path) -> tuple[float, Any]:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    started = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return time.perf_counter() - started, nb


def recorded_code(cwd: Path) -> list[list[str]]:
    """Each turn's python calls, from the record (what the bridge would have put in cells)."""
    from nbagent.engine.contracts import events as ev
    from nbagent.engine.state.session import Session
    from nbagent.notebook.document.replay import sessions_dir

    (folder,) = sorted(sessions_dir(cwd).iterdir())
    session = Session.load(folder)
    try:
        by_turn: dict[int, list[str]] = {}
        turn = 0
        for event in session.events:
            if isinstance(event, ev.ApiRequestStarted):
                turn = event.turn
            elif isinstance(event, ev.ToolUse) and event.name == "python" and isinstance(event.input, dict):
                by_turn.setdefault(turn, []).append(event.input["code"])
        return [by_turn.get(t, []) for t in range(1, session.turn + 1)]
    finally:
        session.close()


def notebook_record_bytes(cwd: Path) -> list[int]:
    """The JSON size of each turn's record as its agent cell's metadata would carry it."""
    import json

    from nbagent.engine.contracts.json_types import JSONObject
    from nbagent.notebook.document.embedded import make_record
    from nbagent.notebook.document.inputs import TurnInputs
    from nbagent.notebook.document.replay import INDEX, RECORD_DIR

    sizes = []
    (folder,) = sorted((cwd / RECORD_DIR / INDEX).glob("*/"))
    for path in sorted(folder.glob("*.json"), key=lambda p: int(p.stem)):
        saved = json.loads(path.read_text())
        outcome = saved["outcome"]
        done = type("Done", (), {"reason": outcome["reason"], "error": outcome["error"]})()
        inputs = TurnInputs.from_json(saved["inputs"]) if "inputs" in saved else None
        summary: JSONObject = {"model": "claude-sonnet-5-5", "requests": 2, "input_tokens": 3000, "output_tokens": 200,
                               "cost_usd": 0.0123}
        record = make_record(session=folder.name, turn=int(path.stem), prompt="what is 1 * 7? use python",
                             cell_id="0f8a3c1e-5b7d-4e2a-9c6f-1d2e3f4a5b6c", provider="simulated",
                             bundle=saved["bundle"], done=done, inputs=inputs, summary=summary)
        sizes.append(len(json.dumps({"record": record}, ensure_ascii=False).encode()))
    return sizes


def main(turns: int = 50, rounds: int = 3) -> None:
    os.environ.pop("ANTHROPIC_API_KEY", None)  # the offline simulated model records; replay needs none
    cwd = Path(tempfile.mkdtemp(prefix="nbagent-replay-"))
    agent_cells = [f"%%agent\n{p}" for p in prompts(turns)]
    live_s, _ = execute([SETUP, *agent_cells], cwd)
    code = recorded_code(cwd)
    materialised = [SETUP]
    for agent_cell, calls in zip(agent_cells, code, strict=True):
        materialised += [agent_cell, *calls]
    code_alone = [c for calls in code for c in calls]
    ratios, replay_times, code_times = [], [], []
    for r in range(rounds):
        order = ("replay", "code") if r % 2 == 0 else ("code", "replay")
        times = {}
        for which in order:
            times[which], nb = execute(materialised if which == "replay" else code_alone, cwd)
            if which == "replay":
                replayed = sum("replayed: session" in str(c.outputs) for c in nb.cells)
                assert replayed == turns, f"{replayed} of {turns} agent cells replayed"
        ratios.append(times["replay"] / times["code"])
        replay_times.append(times["replay"])
        code_times.append(times["code"])
    print(f"recorded live: {turns} turns, {sum(map(len, code))} python calls in {live_s:.1f} s")
    print(f"Run All, replaying {turns} agent cells + their code cells: {statistics.median(replay_times):.2f} s")
    print(f"Run All, the {len(code_alone)} code cells alone:                {statistics.median(code_times):.2f} s")
    print(f"replay ÷ code alone = {statistics.median(ratios):.2f} (goal ≤ 1.5; per round "
          f"{', '.join(f'{x:.2f}' for x in ratios)})")
    sizes = notebook_record_bytes(cwd)
    print(f"records in the agent cells' metadata: {sum(sizes):,} bytes for {len(sizes)} turns "
          f"(mean {statistics.mean(sizes):,.0f}, max {max(sizes):,} per agent cell)")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
