"""■ reaching the agent's code on real kernels when its SIGINT lands on another thread of the kernel.

The kernel may hand ■'s process-directed SIGINT to any thread that does not block it (the stock
kernel's own threads do not). Here a thread of the kernel takes it on purpose, once the model's code
sleeps (seen in /proc), which is the CI flake of ``test_interrupt_reaches_the_code_the_agent_runs``
made certain: the sleep is not woken by the signal itself.
"""

from __future__ import annotations

import sys
import time

import pytest

from tests.kernel_driver import KernelDriver
from tests.notebook.test_magics_kernel import NEW, SETUP, assert_interrupted, state

pytestmark = [pytest.mark.kernel,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and pthread_kill: Linux")]

ANOTHER_THREAD_TAKES_THE_INTERRUPT = """\
import signal as _signal, threading as _threading, time as _time
from pathlib import Path as _Path
_sleeps_next = _threading.Event()
def _take_the_interrupt():
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {_signal.SIGINT})
    _sleeps_next.wait()
    wchan, give_up = _Path(f"/proc/self/task/{_threading.main_thread().native_id}/wchan"), _time.monotonic() + 10
    while "nanosleep" not in wchan.read_text() and _time.monotonic() < give_up:
        pass
    _signal.pthread_kill(_threading.get_ident(), _signal.SIGINT)
_threading.Thread(target=_take_the_interrupt, daemon=True).start()
class Sleepy:
    def __repr__(self):
        _sleeps_next.set()
        _time.sleep(30)
        return "slept"
slow = Sleepy()
"""


@pytest.mark.parametrize("kernel_name", ["python3", "nbagent"])
def test_an_interrupt_another_thread_took_still_stops_the_code_blocked_in_sleep(kernel_name, tmp_path):
    d = KernelDriver(kernel_name, cwd=str(tmp_path))
    try:
        assert d.wait_done(d.execute(SETUP), 60).status == "ok"
        assert d.wait_done(d.execute(NEW + "\n" + ANOTHER_THREAD_TAKES_THE_INTERRUPT), 30).status == "ok"
        t0 = time.monotonic()
        run = d.wait_done(d.execute("%%agent --allow python\nWhat is in `slow`?"), 60)
        took = time.monotonic() - t0
        assert_interrupted(run)
        assert "slept" not in run.text and took < 20, took  # not after the 30 s sleep
        assert state(d)["problems"] == []
    finally:
        d.close()
