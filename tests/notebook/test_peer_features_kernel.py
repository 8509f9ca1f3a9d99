"""The features users of the peers rely on, end to end on both real kernels (jupyter_client):
structured output into a variable, permission modes, the last error and ``%agent fix``,
compaction on demand. The simulated API answers; nothing is clicked (the modes decide)."""

from __future__ import annotations

import pytest

from tests.kernel_driver import KernelDriver

pytestmark = pytest.mark.kernel

SETUP = """\
%load_ext nbagent
import nbagent, pydantic

class City(pydantic.BaseModel):
    name: str
    population: int
"""


@pytest.fixture(params=["python3", "nbagent"], scope="module")
def kernel(request, tmp_path_factory):
    d = KernelDriver(request.param, cwd=str(tmp_path_factory.mktemp("cwd")))
    run = d.wait_done(d.execute(SETUP), 60)
    assert run.status == "ok", run.text
    yield d
    d.close()


def ok(d: KernelDriver, code: str, timeout: float = 60) -> str:
    run = d.wait_done(d.execute(code), timeout)
    assert run.status == "ok", run.text
    return run.text


def test_structured_output_lands_in_a_variable(kernel):
    ok(kernel, "%%agent --new --out city --schema City\nParis has 2100000 people; give me the city.")
    assert "City(name='Paris', population=2100000)" in ok(kernel, "print(repr(city))")


def test_plan_mode_denies_code_without_asking(kernel):
    text = ok(kernel, "%%agent --new --permissions plan\nWhat is 17 * 23?")
    assert "plan" in text and "denied" in text
    assert "permissions  plan" in ok(kernel, "%agent status")


def test_the_last_error_reaches_the_model_and_fix_sends_the_traceback(kernel):
    run = kernel.wait_done(kernel.execute("stock = {'apples': 3}\nstock['pears']"), 30)
    assert run.status == "error"
    ok(kernel, "%%agent --new --permissions plan\nWhy did my last cell fail?")
    assert "raised KeyError: 'pears'" in ok(kernel, "%agent saw")
    ok(kernel, "%agent fix")
    assert "In[" in ok(kernel, "%agent saw") and "stock['pears']" in ok(kernel, "%agent saw")


def test_compaction_on_demand(kernel):
    ok(kernel, "%%agent --new --permissions plan\nWhat is 2 + 2?")
    ok(kernel, "%%agent --permissions plan\nAnd 3 + 3?")
    ok(kernel, "%%agent --permissions plan\nAnd 4 + 4?")
    assert "Compacted messages" in ok(kernel, "%agent compact")
    assert "compact" in ok(kernel, "print(nbagent.session().records[-1].keep)")
