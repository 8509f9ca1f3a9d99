"""After the notebook is opened again, the serve cell is told to be run again in its outputs, but
only while it is still the ``%agent serve`` cell: a cell the user has since rewritten and run (its
outputs are theirs now) is never overwritten by nbagent."""

from __future__ import annotations

import pytest

from .served import Served, text

pytestmark = pytest.mark.kernel

REOPEN = "FRONT.answer = True\nfrom nbagent.notebook.document.bridge import bridge\nFRONT.connect(bridge())"
REWRITE = """\
cell = [c for c in FRONT.cells if c["id"] == "serve-cell"][0]
cell["source"] = "result = long_computation()\\nprint(result)"
cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "RESULT 42\\n"}]
"""


async def test_a_rewritten_serve_cell_keeps_its_outputs_after_a_reopen(tmp_path):
    served = Served(tmp_path)
    try:
        served.run(REWRITE)
        served.run(REOPEN)  # the notebook closed and opened again: a new connection
        async with served.client("claude-code") as client:
            refused = await served.call(client, "run_code", {"code": "REOPEN_RAN = 1"})
        assert refused.is_error and "Run that cell again" in text(refused)  # still nothing runs unseen
        cell = [c for c in served.cells() if c["id"] == "serve-cell"][0]
        assert cell["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "RESULT 42\n"}]
        assert "NameError" in served.run("REOPEN_RAN")
    finally:
        served.close()


async def test_the_serve_cell_still_says_what_to_do_after_a_reopen(tmp_path):
    served = Served(tmp_path)
    try:
        served.run(REOPEN)
        async with served.client("claude-code") as client:
            refused = await served.call(client, "run_code", {"code": "REOPEN_RAN = 1"})
        assert refused.is_error and "Run that cell again" in text(refused)
        cell = [c for c in served.cells() if c["id"] == "serve-cell"][0]
        assert "run this cell again" in cell["outputs"][1]["text"]
    finally:
        served.close()
