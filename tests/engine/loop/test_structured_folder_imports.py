"""A structured answer's JSON schema is checked with ``jsonschema``, imported on first use; its
optional modules (``rfc3987``, lark's ``interegular``) never come from the notebook's folder, a
received one's included (review of attacker pass 19)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

CODE = {
    "a prompt with a dict schema": (
        "from nbagent import Agent\n"
        "agent = Agent(model='claude-sonnet-4-5', tools=[])\n"
        "agent.run_sync('name a city', output={'type': 'object', 'properties': {'name': {'type': 'string'}},"
        " 'required': ['name']})\n"
        "print(agent.last_output)\n"),
    "an MCP tool's input schema": (
        "from nbagent.tools.mcp.schema import input_check\n"
        "print(input_check({'type': 'object', 'properties': {'name': {'type': 'string'}}}).validator is not None)\n"),
}


def run_in_received_folder(tmp_path: Path, code: str, planted: tuple[str, ...] = ("rfc3987", "interegular", "atomicwrites"),
                           ) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``code`` run in a folder holding ``planted`` (the optional modules jsonschema and lark try), each writing
    ``ran.txt``; the folder is behind the installed packages, as the nbagent kernel puts it."""
    folder, marker = tmp_path / "received", tmp_path / "ran.txt"
    folder.mkdir()
    for name in planted:
        (folder / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r} + ' ')\nraise ImportError\n")
    prelude = "import sys\nsys.path[:] = [p for p in sys.path if p] + ['']\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])), HOME=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", prelude + code], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120)
    return done, marker


def test_a_dict_schemas_first_prompt_imports_nothing_from_the_notebooks_folder(tmp_path: Path) -> None:
    done, marker = run_in_received_folder(tmp_path, CODE["a prompt with a dict schema"])
    assert done.returncode == 0 and done.stdout.strip() == "{'name': 'simulated name'}", done.stderr[-2000:]
    assert not marker.exists(), f"the notebook's folder ran: {marker.read_text()}"
