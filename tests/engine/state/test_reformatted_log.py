"""A task folder whose logs were reformatted by an editor or ``jq`` (pretty-printed, or compacted
onto one line) still holds the same JSON: it loads, says so once, and is rewritten at once in the
form nbagent appends to (one entry a line), so the session's next writes succeed. Before, it
loaded without a word and every append failed ("does not end as nbagent writes it")."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from nbagent import Agent
from nbagent.engine.contracts.events import Done
from nbagent.engine.state.store import HISTORY_FILE, UI_FILE

JQ = shutil.which("jq")


def reformat(path: Path, style: str) -> None:
    """As a user would: ``jq .`` (pretty-printed) or ``jq -c .`` (one line); Python's json if no jq."""
    if JQ is not None:
        args = [JQ, "."] if style == "pretty" else [JQ, "-c", "."]
        text = subprocess.run(args, input=path.read_text(), capture_output=True, text=True, check=True).stdout
    else:
        data = json.loads(path.read_text())
        text = json.dumps(data, indent=2) + "\n" if style == "pretty" else json.dumps(data, separators=(",", ":"))
    assert json.loads(text) == json.loads(path.read_text()) and text != path.read_text()
    path.write_text(text)


def as_nbagent_writes(path: Path) -> bool:
    raw = path.read_text()
    items = json.loads(raw)
    return raw == "[]" or (raw.startswith("[\n") and raw.endswith("\n]") and raw.count("\n") == len(items) + 1)


@pytest.mark.parametrize("style", ["pretty", "compact"])
@pytest.mark.parametrize("name", [UI_FILE, HISTORY_FILE])
def test_a_reformatted_log_is_repaired_on_load_with_a_notice(tmp_path: Path, style: str, name: str) -> None:
    task = tmp_path / "task"
    first = Agent(provider="simulated", cwd=tmp_path, task_dir=task)
    first.run_sync("what is 2+3")
    first.close()
    before = json.loads((task / name).read_text())
    reformat(task / name, style)

    resumed = Agent.resume(task, provider="simulated", cwd=tmp_path)
    assert as_nbagent_writes(task / name) and json.loads((task / name).read_text()) == before
    events = resumed.run_sync("what is 4+4")
    done = [e for e in events if isinstance(e, Done)][-1]
    assert done.reason == "end_turn", done.error
    said = " ".join(str(getattr(e, "message", "")) for e in events)
    assert f"{name} was not in the form nbagent writes" in said
    history = resumed.history
    resumed.close()
    assert as_nbagent_writes(task / name)
    again = Agent.resume(task, provider="simulated", cwd=tmp_path)
    assert again.history == history and len(history) > len(first.history)
    again.close()
