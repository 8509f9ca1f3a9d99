"""Shared test fixtures.

No test may reach the network: pytest-socket (``addopts`` in pyproject.toml) lets sockets connect
only to loopback hosts and unix paths.
"""

from __future__ import annotations

import gc
import sys
from types import FrameType
from typing import Iterator

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--soak", action="store_true", help="also run the heavy soaks (marker: soak)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Heavy soaks keep the default run short; `make test` runs them explicitly with --soak.
    if config.getoption("--soak"):
        return
    skip = pytest.mark.skip(reason="heavy soak: run with --soak (make test does)")
    for item in items:
        if "soak" in item.keywords:
            item.add_marker(skip)


class ModulesAndBrowserScheduling:
    """How ``make test`` shares its tests between pytest-xdist's two workers (``-n 2 --dist
    loadscope``): a module's tests on one worker, in order, so its module-scoped kernels, servers
    and executed notebooks are made once; and every browser test (``tests/e2e/``) on the same one, so
    that two Chromiums and two JupyterLabs never starve each other (their waits are clocks) while
    the other worker runs the rest. (xdist's own ``loadgroup`` marks do not reach its scheduler
    under pytest 9: the node ids it suffixes are read-only there.)"""

    @staticmethod
    def scope(nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return "tests/e2e/" if path.startswith("tests/e2e/") else path

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: object) -> object:
        if config.getvalue("dist") != "loadscope":
            return None
        from xdist.scheduler import LoadScopeScheduling

        scope = self.scope

        class Scheduling(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return scope(nodeid)

        return Scheduling(config, log)  # type: ignore[arg-type]


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist"):  # an extra of the tests: a plain pytest runs without it
        config.pluginmanager.register(ModulesAndBrowserScheduling(), "nbagent-scheduling")


@pytest.fixture
def no_jitter(monkeypatch: pytest.MonkeyPatch) -> None:
    """The deterministic retry schedule (2/4/8 s backoff, a server's ``retry-after`` exactly), for
    tests that check it; jitter itself is tested in tests/engine/loop/test_pacing.py."""
    from nbagent.engine.loop import pacing

    monkeypatch.setattr(pacing, "JITTER", False)


@pytest.fixture(autouse=True)
def own_pacing_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's kernels share a rate limit budget of their own (engine/loop/shared_budget.py): one
    test's bookings on a loopback server's key never delay the next test, nor the user's kernels."""
    from nbagent.engine.disk.shared_file import PACING_DIR_ENV

    monkeypatch.setenv(PACING_DIR_ENV, str(tmp_path_factory.mktemp("pacing")))


@pytest.fixture(autouse=True)
def own_mcp_trust_file(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Approvals of ``.mcp.json`` files go to a file of the test's own, never the user's."""
    from nbagent.tools.mcp.trust import TRUST_FILE_ENV

    monkeypatch.setenv(TRUST_FILE_ENV, str(tmp_path_factory.mktemp("mcp-trust") / "mcp_trust.json"))


_HEADROOM_FRAMES = 60
"""Frames a finalizer may need when a collection runs it (a warning, a logging call)."""


def _descend(levels: int) -> int:
    return 0 if levels == 0 else _descend(levels - 1) + 1


@pytest.fixture
def collections_keep_stack_left() -> Iterator[None]:
    """Fails the test if a garbage collection during it ran with less than :data:`_HEADROOM_FRAMES`
    of stack left: the code recursed near the limit (``[[[…`` parsed or walked before its depth was
    checked), and a finalizer run then loses its error ("Failed to process unraisable exception",
    which failed CI once). Collections are made frequent so that any deep stretch meets one."""
    short: list[str] = []

    def check(phase: str, info: dict[str, int]) -> None:
        if phase != "start":
            return
        try:
            _descend(_HEADROOM_FRAMES)
        except RecursionError:
            frame: FrameType | None = sys._getframe(1)  # a loop, not a call: there is no stack to spare
            names: list[str] = []
            while frame is not None and len(names) < 8:
                names.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")
                frame = frame.f_back
            short.append(" <- ".join(names))

    threshold = gc.get_threshold()
    gc.set_threshold(50, threshold[1], threshold[2])
    gc.callbacks.append(check)
    try:
        yield
    finally:
        gc.callbacks.remove(check)
        gc.set_threshold(*threshold)
    assert not short, f"a collection ran with no stack left, in {short[0]}"
