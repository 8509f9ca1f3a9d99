"""Stop on a running python tool in real JupyterLab + Chromium, on both kernels: the tool's clock
advances while its code blocks the kernel, and Stop ends the run within a second or two with the
same short ending as ■ (it used to be ignored: the tool ran to its end and the agent went on)."""

from __future__ import annotations

import time

import pytest

from tests.soak import first_by_default

from .test_jupyterlab import SHOTS, _open, _run_all, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import _put_notebook

pytestmark = _lab_marks

SLOW = '''%load_ext nbagent
import time, nbagent
class Sleepy:
    def __repr__(self):
        time.sleep(30)
        return "slept"
slow = Sleepy()
nbagent.notebook.magics.active_magics().new_session(allow=("python",))'''


@pytest.mark.parametrize("kernel", first_by_default(["nbagent", "python3"]))
def test_stop_ends_a_running_python_tool_and_its_clock_advances(browser, lab, kernel):  # noqa: F811
    name = _put_notebook(lab, f"stop_{kernel}.ipynb", kernel, [SLOW, "%%agent\nWhat is in `slow`?", "after = 42"])
    page = _open(browser, lab, name)
    _run_all(page)
    page.get_by_text("running python (3 s)").first.wait_for(timeout=60_000)  # the clock advances
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"stop_{kernel}_running.png"), full_page=False)
    t0 = time.monotonic()
    page.locator("button:text-is('Stop'):enabled").first.click()
    page.get_by_text("interrupted — session spent so far").first.wait_for(timeout=60_000)
    elapsed = time.monotonic() - t0
    page.screenshot(path=str(SHOTS / f"stop_{kernel}_stopped.png"), full_page=False)
    # Not the 30 s the code sleeps. The click's actionability checks, the kernel's round trip and the
    # page's render all count here: 5 s left a loaded 2-core CI machine (two Chromiums' worth of work
    # on the other worker) little room, and the text's wait itself was 10 s.
    assert elapsed < 20.0, elapsed
    assert page.get_by_text("history kept; the next %%agent continues").count() >= 1
    assert page.get_by_text("done: end_turn").count() == 0  # no request after the stopped tool
    page.close()
