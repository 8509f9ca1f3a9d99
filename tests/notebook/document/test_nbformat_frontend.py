"""The bridge's front-end over an nbformat notebook (what autorun uses): the protocol's ops on the
run's own cells, with the browser extension's guarantees (no trusted cells, only the nbagent
metadata key touched, no user cell or running cell deleted), and the kernel's Bridge talking to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.nbformat_frontend import NotebookDocument
from nbagent.notebook.document.tools import NotebookTools

MARK = {"session": "S", "turn": 1, "tool_use_id": "t1", "kind": "code"}


def document() -> NotebookDocument:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"),
                                         nbformat.v4.new_code_cell("%%agent\nhi"),
                                         nbformat.v4.new_code_cell("mine = 1")])
    return NotebookDocument(nb.cells, "a.ipynb", nbformat.from_dict)


def ask(doc: NotebookDocument, op: str, **args: Any) -> Any:
    return doc.answer({"type": "request", "id": 7, "op": op, **args})


def cells_of(doc: NotebookDocument) -> list[Any]:
    """The document's cells, for tests that look deep into them."""
    return doc.cells


def test_a_request_addressed_to_this_client_is_answered() -> None:
    # The kernel addresses a running cell's requests to the page running it (its session): autorun
    # is that page, so "client" is part of the envelope, not an argument of the op.
    reply = document().answer({"type": "request", "id": 3, "op": "read", "client": "autorun-session"})
    assert reply["ok"] and reply["id"] == 3 and len(reply["result"]["cells"]) == 3


def test_insert_read_replace_move_follow_the_protocol() -> None:
    doc = document()
    agent_id, mine_id = cells_of(doc)[1]["id"], cells_of(doc)[2]["id"]
    reply = ask(doc, "insert", cell={"cell_type": "code", "source": "x = 1", "metadata": {"nbagent": MARK, "trusted": True}},
                after_id=agent_id)
    assert reply["ok"] and reply["id"] == 7 and reply["result"]["index"] == 2
    new = cells_of(doc)[2]
    assert new["source"] == "x = 1" and "trusted" not in new["metadata"] and new["outputs"] == []
    cells = ask(doc, "read")["result"]["cells"]
    assert [c["source"] for c in cells] == ["# Title", "%%agent\nhi", "x = 1", "mine = 1"]
    ask(doc, "replace", cell_id=new["id"], outputs=[{"output_type": "stream", "name": "stdout", "text": "1\n"}],
        metadata={"nbagent": {**MARK, "kind": "edit"}})
    assert cells_of(doc)[2]["outputs"][0]["text"] == "1\n" and cells_of(doc)[2]["metadata"]["nbagent"]["kind"] == "edit"
    cells_of(doc)[3]["metadata"]["tags"] = ["keep"]
    ask(doc, "replace", cell_id=mine_id, metadata={"nbagent": None})
    assert cells_of(doc)[3]["metadata"] == {"tags": ["keep"]}  # only the nbagent key is nbagent's
    assert ask(doc, "move", cell_id=mine_id, index=0)["result"] == {"index": 0} and cells_of(doc)[0]["id"] == mine_id
    assert not ask(doc, "replace", cell_id="nope", source="x")["ok"]
    assert not ask(doc, "frobnicate")["ok"]


def test_delete_removes_only_agent_made_cells_and_never_the_running_one() -> None:
    doc = document()
    agent_id, mine_id = cells_of(doc)[1]["id"], cells_of(doc)[2]["id"]
    mark = {**MARK, "origin": "O"}
    made = [ask(doc, "insert", cell={"cell_type": "code", "source": f"x = {i}", "metadata": {"nbagent": mark}},
                after_id=agent_id)["result"]["id"] for i in range(3)]
    stamp = cells_of(doc)[2]["metadata"]["nbagent"]["made"]
    assert stamp["source_sha256"] and "execution_count" in stamp  # stamped here, not by the request
    cells_of(doc)[1]["metadata"]["nbagent"] = {"origin": "O", "session": "S", "turn": 1, "kind": "agent"}
    doc.running = agent_id
    edited = next(c for c in doc.cells if c["id"] == made[1])
    edited["source"] = "x = 'mine now'"  # the user typed in it: theirs
    cells_of(doc)[2]["metadata"]["nbagent"]["origin"] = "another kernel"  # before a restart: not ours
    reply = ask(doc, "delete", ids=[agent_id, *made, mine_id, "missing"], expect={"origin": "O", "kinds": ["code"]},
                protect=[])["result"]
    assert reply["removed"] == [made[0]] and reply["deleted"] == 1  # the count is what was really removed
    assert dict((k["id"], k["reason"]) for k in reply["kept"]) == {
        agent_id: "running", made[2]: "other-origin", made[1]: "edited", mine_id: "not-nbagent", "missing": "missing"}
    assert [c["id"] for c in doc.cells][1:] == [agent_id, made[2], made[1], mine_id]
    assert len(doc.run_cells) == 3  # the run's list changes only at sync(), between cells
    doc.sync()
    assert doc.run_cells == doc.cells


def test_a_copy_of_an_agent_cell_is_kept_as_the_users() -> None:
    doc = document()
    agent_id = cells_of(doc)[1]["id"]
    made = ask(doc, "insert", cell={"cell_type": "code", "source": "2 * 3", "metadata": {"nbagent": {**MARK, "origin": "O"}}},
               after_id=agent_id)["result"]["id"]
    original = next(c for c in cells_of(doc) if c["id"] == made)
    assert original["metadata"]["nbagent"]["made"]["cell_id"] == made
    copy = nbformat.from_dict({**original, "id": "pasted1"})  # paste and Duplicate: the metadata, another id
    doc.cells.append(copy)
    reply = ask(doc, "delete", ids=[made, "pasted1"], expect={"origin": "O", "kinds": ["code"]})["result"]
    assert reply["removed"] == [made] and reply["kept"] == [{"id": "pasted1", "reason": "copied"}]
    assert doc.cells[-1] is copy


def test_a_queued_cell_is_never_deleted_and_find_says_it_runs() -> None:
    doc = document()
    queued = cells_of(doc)[2]
    queued["metadata"]["nbagent"] = {"origin": "O", "session": "S", "turn": 1, "kind": "code",
                                     "made": {"source_sha256": "whatever"}}
    doc.queued = {queued["id"]}  # Run All's queue: it will still run
    reply = ask(doc, "delete", ids=[queued["id"]], expect={"origin": "O"})["result"]
    assert reply["removed"] == [] and reply["kept"] == [{"id": queued["id"], "reason": "running"}]
    found = ask(doc, "find", cell_id=queued["id"])["result"]
    assert {k: found[k] for k in ("index", "running", "outputs_hidden", "in_collapsed_section")} == {
        "index": 2, "running": True, "outputs_hidden": False, "in_collapsed_section": False}
    assert ask(doc, "find", cell_id="gone")["result"] == {"index": -1, "running": False}
    assert not ask(doc, "delete", ids=[queued["id"]])["ok"]  # protocol 1's delete (no expect) is refused


async def test_the_kernels_bridge_and_the_notebook_tools_work_on_it() -> None:
    doc = document()
    bridge = Bridge()

    class Comm:
        comm_id = "c"

        def send(self, data: dict[str, Any]) -> None:
            bridge._on_data(doc.answer(data))

        def close(self) -> None:
            pass

    bridge._comm = Comm()
    bridge._on_data(doc.hello())
    assert bridge.connected and bridge.frontend == "nbclient" and bridge.path == "a.ipynb"
    tools = {t.name: t for t in NotebookTools(bridge, lambda: "S").tools()}
    out = await tools["notebook_read"].run({}, ToolContext(cwd=Path("."), turn=1, tool_use_id="t"))
    assert "3 cells" in out.content and "mine = 1" in out.content


def _document(*cells: dict[str, object]) -> tuple[NotebookDocument, list[str], NotebookNode]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.from_dict(c) for c in cells]
    return NotebookDocument(nb.cells, "nb.ipynb", nbformat.from_dict), [c["id"] for c in nb.cells], nb


def test_a_replace_that_changes_a_cells_type_leaves_a_valid_cell() -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_markdown_cell("note")]
    nb.cells[0]["outputs"] = [nbformat.v4.new_output("stream", text="1\n")]
    nb.cells[0]["execution_count"] = 1
    doc = NotebookDocument(nb.cells, "nb.ipynb", nbformat.from_dict)
    first, second = (c["id"] for c in nb.cells)
    assert doc.answer({"type": "request", "id": 1, "op": "replace", "cell_id": first, "cell_type": "markdown"})["ok"]
    assert doc.answer({"type": "request", "id": 2, "op": "replace", "cell_id": second, "cell_type": "code"})["ok"]
    doc.sync()
    nbformat.validate(nb)  # a Markdown cell with outputs, a code cell without: invalid before
    assert nb.cells[1]["outputs"] == [] and nb.cells[1]["execution_count"] is None


def test_a_markdown_cell_with_an_attachment_made_code_leaves_a_valid_cell() -> None:
    # notebook_edit's cell_type is "code" unless the model says otherwise (review of atk16): a template's
    # Markdown cell with a pasted image became a code cell with attachments, which nbformat refuses.
    note = nbformat.v4.new_markdown_cell("See ![plot](attachment:plot.png)")
    note["attachments"] = {"plot.png": {"image/png": "iVBORw0KGgo="}}
    doc, (cell_id,), nb = _document(note)
    request = {"type": "request", "id": 1, "op": "replace", "cell_id": cell_id, "source": "x = 1", "cell_type": "code"}
    assert doc.answer(request)["ok"]  # what notebook_edit sends for a replace that names no cell_type
    doc.sync()
    nbformat.validate(nb)
    assert "attachments" not in nb.cells[0] and nb.cells[0]["outputs"] == []


def test_outputs_or_a_bad_type_for_a_cell_that_cannot_hold_them_are_refused_as_the_browser_refuses_them() -> None:
    doc, (note, code), nb = _document(nbformat.v4.new_markdown_cell("note"), nbformat.v4.new_code_cell("x = 1"))
    stream = [nbformat.v4.new_output("stream", text="1\n")]
    for request in ({"cell_id": note, "outputs": stream}, {"cell_id": code, "cell_type": "markdown", "outputs": stream},
                    {"cell_id": note, "execution_count": 3}, {"cell_id": code, "cell_type": "heading"}):
        reply = doc.answer({"type": "request", "id": 1, "op": "replace", **request})
        assert not reply["ok"], request
    doc.sync()
    nbformat.validate(nb)  # nothing changed: a Markdown cell with outputs was written before
    assert [c["cell_type"] for c in nb.cells] == ["markdown", "code"]
