"""A tool that runs code in the kernel (``runs_in_kernel``: python, notebook_run) is redacted with the
secrets read once its code ran: what it writes with ``ctx.redact`` (notebook_run's outputs, saved in the
cell) and its result (attacker pass 13)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pydantic
import pytest

from nbagent.engine.contracts.abort import AbortGuard
from nbagent.engine.contracts.messages import ToolUseBlockParam
from nbagent.engine.contracts.permissions import PermissionGate
from nbagent.engine.contracts.tool_api import Tool, ToolContext, ToolOutput
from nbagent.engine.loop.sanitize import Sanitizer
from nbagent.engine.loop.tool_runner import NO_SECRETS, ToolAnswer, run_tool_call

MADE = "Made-By-The-Cell-Pa55"


class RunCell(Tool):
    """A cell that makes a credential variable and prints it; its outputs are "written" redacted."""

    name = "run_cell"
    description = "Run the cell."
    read_only = False
    runs_in_kernel = True

    class Input(pydantic.BaseModel):
        pass

    def __init__(self, namespace: dict[str, str]) -> None:
        self.namespace, self.written = namespace, ""

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.namespace["db_password"] = MADE  # the cell ran
        self.written = ctx.redact(f"password is {MADE}") if ctx.redact else ""
        return ToolOutput(f"printed {MADE}")


async def test_a_secret_a_kernel_tools_code_made_is_redacted_in_what_it_writes_and_returns() -> None:
    namespace: dict[str, str] = {}
    tool = RunCell(namespace)
    guard = AbortGuard(asyncio.Event())
    guard.start()
    use: ToolUseBlockParam = {"type": "tool_use", "id": "toolu_k", "name": tool.name, "input": {}}
    try:
        answers = [e async for e in run_tool_call(
            use, tools={tool.name: tool}, gate=PermissionGate(allow=[tool.name]), guard=guard,
            make_context=lambda uid: ToolContext(cwd=Path("."), tool_use_id=uid, redact=NO_SECRETS.redact),
            turn=1, output_limit=30_000, sanitizer=NO_SECRETS,
            refresh=lambda: Sanitizer(secrets=tuple(namespace.values())))
            if isinstance(e, ToolAnswer)]
    finally:
        guard.stop()
    assert tool.written == "password is [redacted]"
    assert answers[0].block["content"] == "printed [redacted]"


HELPER_PW = "Helper-Pw-2024x"  # no key's shape: known only as the literal your module names password=


async def test_a_password_your_module_names_is_redacted_where_the_python_tools_traceback_quotes_it(
        tmp_path: Path, monkeypatch: Any) -> None:
    from nbagent.tools.python import Python

    (tmp_path / "db_helpers_tb.py").write_text(
        "def connect(**kw):\n    raise ConnectionError('could not reach db')\n\n"
        f"def fetch():\n    return connect(host='db.internal', user='ana', password='{HELPER_PW}')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    tool = Python()
    guard = AbortGuard(asyncio.Event())
    guard.start()
    use: ToolUseBlockParam = {"type": "tool_use", "id": "toolu_tb", "name": tool.name,
                              "input": {"code": "from db_helpers_tb import fetch\nfetch()"}}
    try:
        answers = [e async for e in run_tool_call(
            use, tools={tool.name: tool}, gate=PermissionGate(allow=[tool.name]), guard=guard,
            make_context=lambda uid: ToolContext(cwd=tmp_path, tool_use_id=uid, redact=NO_SECRETS.redact),
            turn=1, output_limit=30_000, sanitizer=NO_SECRETS, refresh=lambda: NO_SECRETS)
            if isinstance(e, ToolAnswer)]
    finally:
        guard.stop()
    content = str(answers[0].block["content"])
    assert "ConnectionError: could not reach db" in content and "password='[redacted]'" in content, content
    assert HELPER_PW not in content


async def _python_result(code: str, tmp_path: Path, monkeypatch: Any) -> str:
    from nbagent.tools.python import Python

    (tmp_path / "db_helpers_tb.py").write_text(
        "def connect(**kw):\n    raise ConnectionError('could not reach db')\n\n"
        f"def fetch():\n    return connect(host='db.internal', user='ana', password='{HELPER_PW}')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    tool = Python()
    guard = AbortGuard(asyncio.Event())
    guard.start()
    use: ToolUseBlockParam = {"type": "tool_use", "id": "toolu_tb2", "name": tool.name, "input": {"code": code}}
    try:
        answers = [e async for e in run_tool_call(
            use, tools={tool.name: tool}, gate=PermissionGate(allow=[tool.name]), guard=guard,
            make_context=lambda uid: ToolContext(cwd=tmp_path, tool_use_id=uid, redact=NO_SECRETS.redact,
                                                 capture_limit=1_000_000),
            turn=1, output_limit=2_000_000, sanitizer=NO_SECRETS, refresh=lambda: NO_SECRETS, capture_limit=1_000_000)
            if isinstance(e, ToolAnswer)]
    finally:
        guard.stop()
    return str(answers[0].block["content"])


async def test_a_traceback_the_models_code_printed_itself_has_your_modules_password_redacted(
        tmp_path: Path, monkeypatch: Any) -> None:
    content = await _python_result("import traceback\nfrom db_helpers_tb import fetch\ntry:\n    fetch()\n"
                                   "except ConnectionError:\n    traceback.print_exc()", tmp_path, monkeypatch)
    assert "password='[redacted]'" in content and HELPER_PW not in content, content


async def test_a_traceback_after_a_huge_output_has_your_modules_password_redacted(tmp_path: Path, monkeypatch: Any) -> None:
    content = await _python_result("from db_helpers_tb import fetch\nprint('x' * 300_000)\nfetch()", tmp_path, monkeypatch)
    assert "password='[redacted]'" in content and HELPER_PW not in content, content[-2000:]


async def test_a_raised_traceback_after_many_printed_ones_has_your_modules_password_redacted(
        tmp_path: Path, monkeypatch: Any) -> None:
    content = await _python_result(
        "import traceback\nfrom db_helpers_tb import fetch\nfor _ in range(300):\n    try:\n        raise ValueError('noise')\n"
        "    except ValueError:\n        traceback.print_exc()\nfetch()", tmp_path, monkeypatch)
    assert "password='[redacted]'" in content and HELPER_PW not in content, content[-2000:]


@pytest.mark.parametrize("code", [
    # a deep recursion first: the module's frame comes last, past any window from the top
    "import traceback, sys\nsys.setrecursionlimit(5000)\nfrom db_helpers_tb import fetch\n"
    "def down(n):\n    return fetch() if n == 0 else down(n - 1)\ntry:\n    down(2000)\n"
    "except ConnectionError:\n    traceback.print_exc()",
    "import sys\nsys.setrecursionlimit(5000)\nfrom db_helpers_tb import fetch\n"
    "def down(n):\n    return fetch() if n == 0 else down(n - 1)\ndown(2000)",
    # an error message as long as a data set, holding the marker the output uses itself
    "from db_helpers_tb import fetch\ntry:\n    fetch()\nexcept ConnectionError as e:\n"
    "    raise RuntimeError('job log:\\n[error]\\n' + repr(list(range(30_000)))) from e",
], ids=["printed-deep", "raised-deep", "long-message"])
async def test_a_deep_or_long_traceback_has_your_modules_password_redacted(code: str, tmp_path: Path, monkeypatch: Any) -> None:
    content = await _python_result(code, tmp_path, monkeypatch)
    assert "password='[redacted]'" in content and HELPER_PW not in content


@pytest.mark.parametrize("code", [
    # a frame with no source line (importlib's frozen frames) before the module's own
    "import runpy, os\nrunpy.run_path(os.path.join(os.getcwd(), 'db_top_tb.py'))",
    "import traceback, json\nfrom db_helpers_tb import fetch\ntry:\n    fetch()\nexcept Exception:\n"
    "    print(json.dumps({'level': 'error', 'exc': traceback.format_exc()}))",
    "import traceback\nfrom db_helpers_tb import fetch\ntry:\n    fetch()\nexcept Exception:\n"
    "    for line in traceback.format_exc().splitlines(): print('2026-12-06 ERROR ' + line.replace('    ', '\\t'))",
    "import asyncio\nfrom db_helpers_tb import fetch\nasync def job():\n    fetch()\n"
    "async with asyncio.TaskGroup() as tg:\n    tg.create_task(job())",
    "import sys\nfrom IPython.core.ultratb import FormattedTB\nfrom db_helpers_tb import fetch\ntry:\n    fetch()\n"
    "except Exception:\n    print(FormattedTB(mode='Context', theme_name='linux').text(*sys.exc_info()))",
], ids=["frozen-frames", "json-log", "log-prefix-tabs", "exception-group", "ipython-coloured"])
async def test_a_traceback_however_formatted_has_your_modules_password_redacted(
        code: str, tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "db_top_tb.py").write_text(
        f"from db_helpers_tb import connect\nconn = connect(host='db', password='{HELPER_PW}')\n")
    content = await _python_result(code, tmp_path, monkeypatch)
    assert "[redacted]" in content and HELPER_PW not in content, content[-1500:]
