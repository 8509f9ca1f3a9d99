"""``%agent context`` / ``nbagent.session().messages_df()`` say what the model still sees of each
history message: a masked tool result, a file read replaced by its notice and the tool results left
out after a hidden range are named so (not "kept"), and measured as they were sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import nbagent
from nbagent.engine.contracts.messages import is_tool_result
from nbagent.notebook import magics as magics_mod


@pytest.fixture
def ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    shell = InteractiveShell.instance()
    saved = shell.display_pub
    shell.display_pub = CapturingDisplayPublisher()
    shell.run_cell("%load_ext nbagent")
    try:
        yield shell
    finally:
        shell.display_pub = saved


def ask(ip: Any, cell: str) -> None:
    with capture_output():
        result = ip.run_cell(cell)
    assert result.error_in_exec is None and result.error_before_exec is None, result


def last_request_results() -> list[str]:
    """The text of every tool result in the last request the simulated API received."""
    body = nbagent.session().agent.simulated_api.requests[-1].body
    return [str(b.get("content")) for m in body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if is_tool_result(b)]


def test_masked_tool_results_are_shown_masked_at_their_placeholders_size(ip: Any, tmp_path: Path) -> None:
    for k in range(4):
        (tmp_path / f"n{k}.txt").write_text("".join(f"Line {i} of file {k}: the numbers were reviewed.\n" for i in range(300)))
    magics_mod.active_magics().new_session(allow=("read_file",))
    for k in range(4):
        ask(ip, f"%%agent --context mask:keep=1:clear=500\nRead n{k}.txt and tell me what it says.")
    sent = last_request_results()
    assert sum("Old tool result cleared" in r for r in sent) == 3  # the model saw 3 placeholders
    df = nbagent.session().messages_df()
    results = df[df["kind"] == "tool_result"]
    assert results["status"].tolist() == ["masked", "masked", "masked", "kept"]
    tokens = results["est. tokens"].tolist()
    assert max(tokens[:3]) < tokens[3] / 20  # each its placeholder's size, not the 3,000 tokens of the file
    # The turn table says where: a masking was seen only as the cache write's jump.
    actions = nbagent.session().turns_df()["context actions"].tolist()
    assert sum(a.startswith("mask −") for a in actions) == 3


def test_tool_results_left_out_after_the_hidden_range_are_not_shown_kept(ip: Any, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("".join(f"Line {i}: the quarterly numbers for region {i % 4} were reviewed.\n" for i in range(60)))
    # A kernel context of a few tokens: the shell is shared with other tests, whose cells and
    # variables would otherwise move where truncation cuts (a user prompt first kept, not a result).
    magics_mod.active_magics().new_session(context_window=4000, allow=("read_file",), kernel_context_tokens=40)
    for i in range(4):
        with notes.open("a") as f:
            f.write(f"Update {i}: revised.\n")
        ask(ip, "%%agent\nRead notes.txt and tell me what it says.")
    session = nbagent.session()
    assert session.agent.deleted_range is not None
    first_kept = session.agent.deleted_range[1] + 1
    df = session.messages_df()
    row = df.loc[first_kept]
    assert row["kind"] == "tool_result"  # its tool call was hidden: the request leaves its result out
    assert row["status"] == "results omitted" and row["est. tokens"] < 50
    shown_kept = {r for r in df.index if df.loc[r, "status"] == "kept" and df.loc[r, "kind"] == "tool_result"}
    assert len(shown_kept) == sum(r.startswith("File notes.txt") for r in last_request_results())


def test_agent_saw_stars_the_placeholders_the_context_manager_sent(ip: Any, tmp_path: Path) -> None:
    """``%agent saw`` marks (★) every text the context manager put in a message's place: the masked
    results' placeholders were shown as if the model's own tool results."""
    for k in range(3):
        (tmp_path / f"m{k}.txt").write_text("".join(f"Line {i} of file {k}: the numbers were reviewed.\n" for i in range(300)))
    magics_mod.active_magics().new_session(allow=("read_file",))
    for k in range(3):
        ask(ip, f"%%agent --context mask:keep=1:clear=500\nRead m{k}.txt and tell me what it says.")
    with capture_output() as saw:
        ip.run_cell(f"%agent saw {nbagent.session().turn}")
    shown = saw.stdout + "\n".join(str(o.data.get("text/plain", "")) for o in saw.outputs)
    lines = shown.splitlines()
    cleared = [i for i, line in enumerate(lines) if "[Old tool result cleared to save context" in line]
    assert cleared
    assert all(lines[i - 1].endswith("★") for i in cleared), [lines[i - 1] for i in cleared]
