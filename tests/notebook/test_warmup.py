"""The warm-up thread (issue 28): what it imports, and that the kernel starts it once, after replying."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from nbagent.notebook import warmup

ROOT = Path(__file__).resolve().parents[2]

# A first %%agent in a fresh shell, after the warm-up's imports: which modules did the prompt itself
# import? Those are what the user still waits for before the first text.
FIRST_PROMPT = """
import json, os, sys
os.environ.pop("ANTHROPIC_API_KEY", None)
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from nbagent.notebook import warmup
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "nbagent")
assert warmup.import_all() == []
before = set(sys.modules)
with capture_output():
    result = shell.run_cell("%%agent --simulated\\nSay hello.")
assert result.success, result
print(json.dumps(sorted(set(sys.modules) - before)))
"""
HEAVY = ("nbagent", "anthropic", "httpx", "httpx2", "pydantic", "pydantic_core", "ipywidgets", "tiktoken", "pandas", "numpy")


def test_the_warm_up_imports_what_the_first_prompt_needs(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", FIRST_PROMPT], capture_output=True, text=True, cwd=tmp_path,
                         env={**_env(), "PYTHONPATH": str(ROOT)}, timeout=180)
    assert out.returncode == 0, out.stderr
    imported = json.loads(out.stdout.strip().splitlines()[-1])
    late = [m for m in imported if m.split(".")[0] in HEAVY]
    assert late == [], late


def test_a_failing_import_is_reported_not_raised() -> None:
    assert warmup.import_all(("nbagent.no_such_module_xyz", "json"), ()) == ["nbagent.no_such_module_xyz"]


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    yield before
    gc.set_threshold(*before)


def test_automatic_collection_pauses_during_the_imports_and_comes_back(thresholds: tuple[int, int, int]) -> None:
    seen: list[tuple[int, ...]] = []
    with warmup.fewer_collections():
        seen.append(gc.get_threshold())
    assert seen == [(0, *thresholds[1:])] and gc.get_threshold() == thresholds
    assert gc.isenabled()  # gc.disable() is the user's switch: untouched
    with pytest.raises(RuntimeError), warmup.fewer_collections():
        raise RuntimeError("a failing step")
    assert gc.get_threshold() == thresholds


def test_a_threshold_the_user_sets_meanwhile_is_kept(thresholds: tuple[int, int, int]) -> None:
    with warmup.fewer_collections():
        gc.set_threshold(1234, 5, 5)  # a cell running while the warm-up imports
    assert gc.get_threshold() == (1234, 5, 5)


@pytest.fixture
def fresh_warmup(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(warmup, "_thread", None)

    def import_all(modules: tuple[str, ...] = warmup.MODULES, later: tuple[str, ...] = ()) -> list[str]:
        calls.append(modules)
        return []
    monkeypatch.setattr(warmup, "import_all", import_all)
    monkeypatch.delenv(warmup.DISABLE_ENV, raising=False)
    return calls


def test_the_warm_up_starts_once_on_a_daemon_thread(fresh_warmup: list[tuple[str, ...]]) -> None:
    thread = warmup.start_once()
    assert isinstance(thread, threading.Thread) and thread.daemon
    thread.join(5)
    assert warmup.start_once() is None
    assert fresh_warmup == [warmup.MODULES]


def test_the_warm_up_can_be_turned_off(fresh_warmup: list[tuple[str, ...]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(warmup.DISABLE_ENV, "1")
    assert warmup.start_once() is None
    assert fresh_warmup == []


def test_the_kernel_starts_the_warm_up_after_its_kernel_info_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from ipykernel.ipkernel import IPythonKernel

    from nbagent.kernel.kernel import NbAgentKernel

    order: list[str] = []

    async def reply(self: Any, *args: Any, **kwargs: Any) -> None:
        order.append("reply")

    monkeypatch.setattr(IPythonKernel, "kernel_info_request", reply)
    monkeypatch.setattr(warmup, "start_once", lambda: order.append("warm-up"))
    kernel = NbAgentKernel.__new__(NbAgentKernel)  # the handler only: no sockets
    kernel.extension_loaded = True
    asyncio.run(kernel.kernel_info_request(None, None, {}))
    assert order == ["reply", "warm-up"]


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
