"""The demo brain in a notebook, end to end: ``%agent fix`` after a misspelt column inserts code
that runs, "load X.csv" gives a DataFrame, "plot …" puts a PNG in the tool card. In an in-process
IPython shell (fast) and in a real kernel (the card's ``Output`` widget as a front-end sees it).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from IPython.utils.capture import capture_output

from nbagent.notebook import magics as magics_mod
from tests.kernel_driver import KernelDriver
from tests.notebook.support import list_content
from tests.notebook.test_magics_inprocess import ip  # noqa: F401  (fixture)

CSV = "region,revenue,units\nnorth,120.0,12\nsouth,95.5,9\nnorth,130.25,13\n"


@pytest.fixture
def sales(tmp_path: Any) -> None:
    """sales.csv in the in-process shell's working directory (the ``ip`` fixture chdirs to tmp_path)."""
    (tmp_path / "sales.csv").write_text(CSV)


def cell(shell: Any, code: str) -> Any:
    with capture_output():
        return shell.run_cell(code)


def last_answer() -> str:
    history = magics_mod.active_magics().session().agent.history
    return "\n".join(b["text"] for b in list_content(history[-1]) if b["type"] == "text")


def test_fix_after_a_misspelt_column_names_it_and_inserts_code_that_runs(ip: Any, sales: None) -> None:  # noqa: F811
    payloads: list[str] = []
    ip.set_next_input = lambda text, replace=False: payloads.append(text)  # type: ignore[method-assign]
    cell(ip, "import pandas as pd\ndf = pd.read_csv('sales.csv')")
    assert cell(ip, "df.groupby('regoin')['revenue'].sum()").error_in_exec is not None
    assert cell(ip, "%agent fix --insert-code").error_in_exec is None
    assert "no column 'regoin'" in last_answer() and "typo for 'region'" in last_answer()
    assert payloads == ["df.groupby('region')['revenue'].sum()"]
    result = cell(ip, payloads[0])
    assert result.error_in_exec is None and result.result["north"] == 250.25


def test_load_then_plot_puts_a_png_in_the_tool_card(ip, sales):  # noqa: F811
    pytest.importorskip("matplotlib")
    # A first load, as in a new notebook: a `sales` an earlier test of this shared shell left would be
    # kept, and the file loaded as `sales_csv` (tests/providers/ test that).
    ip.user_ns.pop("sales", None)
    assert cell(ip, "%%agent\nLoad sales.csv into a DataFrame").error_in_exec is None
    assert ip.user_ns["sales"].shape == (3, 3)
    executor = magics_mod.active_magics().session().executor
    assert 'sales = pd.read_csv("sales.csv")' in executor.history[-2].code
    cell(ip, "%matplotlib inline")  # what a notebook's kernel uses: plt.show() displays the figure once
    assert cell(ip, "%%agent\nplot revenue by region").error_in_exec is None
    record = executor.history[-1]
    assert ".plot.bar()" in record.code and record.result.error is None
    assert [d for d in record.displays if "image/png" in d["data"]]  # what the tool card shows
    assert 'Drew "Total revenue by region" from `sales`' in last_answer()


@pytest.mark.kernel
def test_fix_and_plot_in_a_real_kernel(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "sales.csv").write_text(CSV)
    d = KernelDriver("python3", cwd=str(tmp_path))
    try:
        setup = ("%load_ext nbagent\nfrom nbagent.notebook import magics as _m\n"
                 "_m.active_magics().new_session(allow=('python', 'read_file'))\n"
                 "import pandas as pd\ndf = pd.read_csv('sales.csv')")
        assert d.wait_done(d.execute(setup), 60).status == "ok"
        assert d.wait_done(d.execute("df.groupby('regoin')"), 30).status == "error"
        fix = d.wait_done(d.execute("%agent fix --insert-code"), 60)
        assert fix.status == "ok", fix.text
        inserted = [p["text"] for p in fix.reply["content"].get("payload", []) if p.get("source") == "set_next_input"]
        assert inserted == ["df.groupby('region')"]
        assert d.wait_done(d.execute(inserted[0]), 30).status == "ok"
        plot = d.wait_done(d.execute("%%agent\nplot revenue by region"), 60)
        assert plot.status == "ok", plot.text
        cards = [s for s in d.comms.values() if any("image/png" in o.get("data", {}) for o in s.get("outputs", ()))]
        assert cards, json.dumps([s.get("outputs") for s in d.comms.values() if s.get("outputs")])[:2000]
    finally:
        d.close()
