"""An allowed card says so when the call then does not happen: the user edited the cell while the
card waited (the edit is refused once allowed), so "✓ allowed" alone would read as done."""

from __future__ import annotations

import asyncio

import pytest

from .served import Served, text

pytestmark = pytest.mark.kernel

USER_EDITS = 'for c in FRONT.cells:\n    if c["source"] == "x = 40": c["source"] = "x = 41  # the user typed"'


async def test_an_allowed_edit_of_a_cell_the_user_changed_meanwhile_says_not_done_on_its_card(tmp_path):
    served = Served(tmp_path)
    try:
        target = next(c["id"] for c in served.cells() if c["source"] == "x = 40")
        async with served.client("claude-code") as client:
            await client.call_tool("notebook_read", {})
            call = asyncio.ensure_future(client.call_tool(
                "notebook_edit", {"action": "replace", "cell_id": target, "source": "x = 'client'"}))
            while (button := await asyncio.to_thread(served.fresh_button, "Allow")) is None:
                pass  # until the card is shown
            served.run(USER_EDITS)  # the user types in that cell while the card waits
            await asyncio.to_thread(served.d.click, button)
            refused = await asyncio.wait_for(call, 30)
        assert refused.is_error and "changed since you last read it" in text(refused)
        html = served.html()
        assert "✓ allowed" in html and "✗ then not done: " in html and "changed since you last read it" in html
        assert [c["source"] for c in served.cells() if c["id"] == target] == ["x = 41  # the user typed"]
    finally:
        served.close()


async def test_an_allowed_run_whose_code_raised_says_it_ran_then_failed_not_that_it_was_not_done(tmp_path):
    # It said "✗ then not done" for code that had run up to its error (a file it wrote stayed written).
    served = Served(tmp_path)
    try:
        async with served.client("claude-code") as client:
            failed = await served.call(client, "run_code", {"code": "PARTLY = 1\n1 / 0"}, click="Allow")
        assert failed.is_error and "ZeroDivisionError" in text(failed)
        html = served.html()
        assert "✗ then failed: " in html and "ZeroDivisionError" in html and "then not done" not in html
        assert served.run("print(PARTLY)").strip() == "1"  # it ran up to its error
    finally:
        served.close()
