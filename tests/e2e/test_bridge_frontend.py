"""The front-end bridge (labextension/, comm target ``nbagent.bridge``) in real JupyterLab and real
Notebook 7, driven by a stock ipykernel with no nbagent code: the kernel side is played by a comm
opened in a notebook cell, and requests are sent from later executions (the kernel is idle between
them, so the front-end's replies reach it). Protocol: docs/bridge-protocol.md.
"""

from __future__ import annotations

import ast
import hashlib
import json
import time
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest
from jupyter_core.paths import jupyter_path

from .test_jupyterlab import SHOTS, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import _put_notebook

pytestmark = _lab_marks

# ?reset: JupyterLab would otherwise restore the previous test's tabs from its workspace.
URLS = {"jupyterlab": "lab/tree/{}?reset&", "notebook": "notebooks/{}?"}
SETUP = """import json
from comm import create_comm
replies, closed = [], []
bridge = create_comm(target_name="nbagent.bridge", data={"version": 1})
bridge.on_msg(lambda msg: replies.append(msg["content"]["data"]))
bridge.on_close(lambda msg: closed.append(msg["content"]))
print("bridge opened")"""
# A 1x1 PNG, drawn 48x24 by the renderer: enough to see an image output in the screenshot.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
MATERIALISED = {
    "cell_type": "code",
    "source": "print('materialised')",
    "execution_count": 7,
    "metadata": {"nbagent": {"session": "s1", "turn": 1, "tool_use_id": "toolu_1"}, "tags": ["keep-me"],
                 "trusted": True},  # dropped: a request never makes JupyterLab trust outputs
    "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "materialised\n"},
        {"output_type": "display_data", "data": {"image/png": PNG, "text/plain": "<Figure>"},
         "metadata": {"image/png": {"width": 48, "height": 24}}},
    ],
}

_KERNEL_JS = """async ([code, expr]) => {
  const k = window.__nb.sessionContext.session.kernel;
  const reply = await k.requestExecute({code, store_history: false, user_expressions: {r: expr}}).done;
  if (reply.content.status !== 'ok') throw new Error(reply.content.ename + ': ' + reply.content.evalue);
  const r = reply.content.user_expressions.r;
  if (r.status !== 'ok') throw new Error(r.ename + ': ' + r.evalue);
  return r.data['text/plain'];
}"""


def _require_installed_bridge() -> None:
    if not any((Path(d) / "nbagent-bridge" / "package.json").is_file() for d in jupyter_path("labextensions")):
        pytest.fail("the nbagent-bridge labextension is not installed: `pip install -e .` (make test does it)")


def _open(browser, lab, name: str, frontend: str):  # noqa: F811
    base, token = lab
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{base}/{URLS[frontend].format(name)}token={token}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    page.wait_for_function(
        "(name) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget; "
        "if (!w || !w.context || w.context.path !== name) return false; "
        "const k = w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel; "
        "if (k && k.status === 'idle' && k.connectionStatus === 'connected' && w.sessionContext.isReady) "
        "{ window.__nb = w; return true; } return false; }", arg=name, timeout=60_000)
    return page


def _kernel(page, code: str, expr: str = "None"):
    """Runs code in the notebook's kernel (not in a cell) and returns the Python value of expr."""
    return ast.literal_eval(page.evaluate(_KERNEL_JS, [code, expr]))


def _replies(page, predicate: str, timeout: float = 20.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = json.loads(_kernel(page, "", f"json.dumps([r for r in replies if {predicate}])"))
        if got:
            return got
        time.sleep(0.1)  # polling: the reply lands when the kernel next reads its shell channel
    raise AssertionError(f"no reply matching {predicate} within {timeout} s")


class Bridge:
    """The kernel side of the protocol, as the tests play it."""

    def __init__(self, page):
        self.page, self.next_id = page, 100

    def hello(self) -> dict:
        return _replies(self.page, "r.get('type') == 'hello'")[-1]

    def request(self, op: str, **args) -> dict:
        self.next_id += 1
        msg = {"type": "request", "id": self.next_id, "op": op, **args}
        _kernel(self.page, f"import json\nbridge.send(json.loads({json.dumps(json.dumps(msg))}))")
        (reply,) = _replies(self.page, f"r.get('id') == {self.next_id}")
        assert reply["type"] == "reply"
        return reply

    def ok(self, op: str, **args) -> dict:
        reply = self.request(op, **args)
        assert reply["ok"], reply
        return reply["result"]


def _cell_texts(page) -> list[str]:
    return page.locator(".jp-Notebook .jp-Cell").all_inner_texts()


def _on_disk(page, name: str):
    """The .ipynb as the server reads it from disk (its contents API), through the page's own login.

    Not the page config's serverRoot: Notebook 7's pages do not always carry it."""
    url = urlsplit(page.url)
    got = page.request.get(f"{url.scheme}://{url.netloc}/api/contents/{name}?content=1&type=notebook")
    if not got.ok:
        return None  # the server is writing it (not atomically): read it again
    return nbformat.from_dict(got.json()["content"])


def _wait_saved(page, name: str, predicate, timeout: float = 30.0):
    """The saved .ipynb once it satisfies predicate (the save is asynchronous)."""
    deadline, nb = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        nb = _on_disk(page, name)
        if nb is not None and predicate(nb):
            return nb
        time.sleep(0.2)
    held = None if nb is None else [(c.source[:30], (c.metadata.get("nbagent") or {}).get("turn")) for c in nb.cells]
    raise AssertionError(f"{name} was not saved with the expected cells; the file holds {held}")


@pytest.mark.parametrize("frontend", ["jupyterlab", "notebook"])
def test_bridge_edits_the_live_notebook_and_the_saved_file(browser, lab, frontend):  # noqa: F811
    _require_installed_bridge()
    name = _put_notebook(lab, f"bridge_{frontend}.ipynb", "python3", [SETUP, "x = 41"])
    page = _open(browser, lab, name, frontend)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.get_by_text("bridge opened").first.wait_for(timeout=30_000)
    bridge = Bridge(page)
    try:
        hello = bridge.hello()
        assert hello == {"type": "hello", "version": 2, "frontend": frontend, "path": name}

        first = bridge.ok("read")
        assert first["path"] == name
        assert [c["source"] for c in first["cells"]] == [SETUP, "x = 41"]
        assert first["cells"][0]["outputs"][0]["text"] == "bridge opened\n"
        assert first["cells"][0]["metadata"] == {}  # JupyterLab's in-memory "trusted" flag is not sent
        setup_id, x_id = (c["id"] for c in first["cells"])

        added = bridge.ok("insert", cell=MATERIALISED, after_id=setup_id)
        assert added["index"] == 1 and added["id"] not in (setup_id, x_id)
        cell = page.locator(".jp-Notebook .jp-Cell").nth(1)
        cell.get_by_text("materialised", exact=True).wait_for(timeout=10_000)
        assert cell.locator(".jp-OutputArea-output img").count() == 1
        mark = page.evaluate("() => window.__nb.content.model.sharedModel.cells[1].getMetadata('nbagent')")
        made = mark.pop("made")  # the front-end's stamp: the source and count as nbagent made them
        assert mark == MATERIALISED["metadata"]["nbagent"]
        assert made == {"cell_id": added["id"], "execution_count": 7,  # the id it made the cell with: a copy has another
                        "source_sha256": hashlib.sha256(MATERIALISED["source"].encode()).hexdigest()}
        assert page.evaluate("() => window.__nb.content.model.cells.get(1).trusted") is False
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"bridge_{frontend}.png"), full_page=False)

        missing = bridge.request("insert", cell=MATERIALISED, after_id="no-such-cell")
        assert missing["ok"] is False and "no cell with id" in missing["error"]

        new_meta = {"nbagent": {"origin": "e2e", "session": "s1", "turn": 2, "tool_use_id": "toolu_2", "kind": "code"}}
        assert bridge.ok("replace", cell_id=added["id"], source="print('replaced')", execution_count=8, metadata=new_meta,
                         outputs=[{"output_type": "stream", "name": "stdout", "text": "replaced\n"}]) == {"id": added["id"]}
        cell.get_by_text("replaced", exact=True).wait_for(timeout=10_000)
        assert cell.locator(".jp-OutputArea-output img").count() == 0

        # Arguments may also be nested under "args", where the cell's id can be plain "id".
        assert bridge.ok("move", args={"id": added["id"], "index": 0}) == {"index": 0}
        cells = bridge.ok("read")["cells"]
        assert [c["id"] for c in cells] == [added["id"], setup_id, x_id]
        moved = cells[0]
        assert moved["metadata"]["tags"] == ["keep-me"]  # other keys kept
        assert {k: v for k, v in moved["metadata"]["nbagent"].items() if k != "made"} == new_meta["nbagent"]
        assert moved["execution_count"] == 8 and moved["outputs"][0]["text"] == "replaced\n"

        # The user ran x's cell (Run All), so JupyterLab trusts it: what the bridge writes there still
        # renders untrusted (sanitised: no onerror), and the cell is no longer trusted.
        assert page.evaluate("() => window.__nb.content.model.cells.get(2).trusted") is True
        html = '<b>bridge-html</b><img src="nope.png" onerror="window.__pwned = 1">'
        bridge.ok("replace", cell_id=x_id, outputs=[
            {"output_type": "display_data", "data": {"text/html": html, "text/plain": "html"}, "metadata": {"trusted": True}}])
        page.locator(".jp-Notebook .jp-Cell").nth(2).get_by_text("bridge-html").wait_for(timeout=10_000)
        assert page.evaluate("() => window.__nb.content.model.cells.get(2).trusted") is False
        assert page.evaluate("() => window.__pwned === undefined") is True
        assert "onerror" not in page.locator(".jp-Notebook .jp-Cell").nth(2).inner_html()

        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        saved = _wait_saved(page, name, lambda nb: len(nb.cells) == 3)
        assert saved.cells[0].source == "print('replaced')"
        assert saved.cells[0].metadata["nbagent"]["turn"] == 2
        assert saved.cells[0].outputs[0]["text"] == "replaced\n"

        unknown = bridge.request("explode")
        assert unknown["ok"] is False and "unknown op" in unknown["error"]

        refused = bridge.request("delete", ids=[added["id"]])  # a protocol-1 request: no expectations
        assert refused["ok"] is False and "expect.origin" in refused["error"]
        assert bridge.ok("delete", ids=[setup_id], expect={"origin": "e2e"}) == {
            "deleted": 0, "removed": [], "kept": [{"id": setup_id, "reason": "not-nbagent"}]}
        assert bridge.ok("delete", ids=[added["id"], "no-such-cell"], expect={"origin": "e2e", "session": "s1"}) == {
            "deleted": 1, "removed": [added["id"]], "kept": [{"id": "no-such-cell", "reason": "missing"}]}
        page.wait_for_function("document.querySelectorAll('.jp-Notebook .jp-Cell').length === 2", timeout=10_000)
        assert not any("replaced" in t for t in _cell_texts(page))
        # A new cell type rebuilds the cell in place under the same id.
        assert bridge.ok("replace", cell_id=x_id, cell_type="markdown", source="# notes") == {"id": x_id}
        assert [(c["id"], c["cell_type"], c["source"]) for c in bridge.ok("read")["cells"]][1] == (x_id, "markdown", "# notes")
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        _wait_saved(page, name, lambda nb: len(nb.cells) == 2)
    except Exception:
        page.screenshot(path=str(SHOTS / f"bridge_{frontend}_failure.png"), full_page=True)
        raise
    page.close()


@pytest.mark.parametrize("frontend", ["jupyterlab", "notebook"])
def test_bridge_answers_again_after_a_kernel_restart(browser, lab, frontend):  # noqa: F811
    _require_installed_bridge()
    name = _put_notebook(lab, f"bridge_restart_{frontend}.ipynb", "python3", ["x = 1"])
    page = _open(browser, lab, name, frontend)
    # The page learns the new kernel's status from the IOPub status of a tracked request (the server
    # marks kernel_info's as untracked), and the first ones after a restart can be lost before the
    # server's IOPub subscription is up (ZMQ's slow joiner): an empty silent execute is asked again
    # until a status reaches the page, bounded by a deadline.
    status = page.evaluate(
        "async () => { const k = window.__nb.sessionContext.session.kernel; await k.restart();"
        " const deadline = Date.now() + 90000;"
        " while (k.status !== 'idle' && Date.now() < deadline) {"
        "  const idle = new Promise(resolve => {"
        "   const on = (_, s) => { if (s === 'idle') { k.statusChanged.disconnect(on); resolve(); } };"
        "   k.statusChanged.connect(on);"
        "   setTimeout(() => { k.statusChanged.disconnect(on); resolve(); }, 3000); });"
        "  try { k.requestExecute({code: '', silent: true, store_history: false}); } catch (e) { }"
        "  await idle; }"
        " return k.status; }")
    assert status == "idle", status
    _kernel(page, SETUP)
    assert Bridge(page).hello()["frontend"] == frontend
    assert Bridge(page).ok("read")["cells"][0]["source"] == "x = 1"
    page.close()


def test_a_console_on_the_same_kernel_in_another_window_does_not_close_the_bridge(browser, lab):  # noqa: F811
    _require_installed_bridge()
    name = _put_notebook(lab, "bridge_console.ipynb", "python3", ["x = 1"])
    page = _open(browser, lab, name, "jupyterlab")
    kernel_id = page.evaluate("() => window.__nb.sessionContext.session.kernel.id")
    # Another window with only a console on that kernel: its connection handles comms (in the
    # notebook's own window a second connection does not), so it sees the kernel's comm_open.
    base, token = lab
    other = browser.new_page(viewport={"width": 1000, "height": 700})
    other.goto(f"{base}/lab?reset&token={token}")
    other.wait_for_function("!!window.jupyterapp", timeout=60_000)
    # Wait for the restore (it opens a launcher that would take the focus), then hold the console
    # itself rather than whatever widget is current.
    other.evaluate("async (id) => { await window.jupyterapp.restored;"
                   " window.__console = await window.jupyterapp.commands.execute("
                   "'console:create', {kernelPreference: {id}}); }", kernel_id)
    other.wait_for_function(
        "(() => { const s = window.__console.sessionContext;"
        " return s.session && s.session.kernel && s.session.kernel.status === 'idle'; })()", timeout=60_000)
    _kernel(page, SETUP)
    bridge = Bridge(page)
    assert bridge.hello()["frontend"] == "jupyterlab"
    assert bridge.ok("read")["cells"][0]["source"] == "x = 1"
    # Without the console's silent target, the console's connection answers comm_open with comm_close.
    assert _kernel(page, "", "closed") == []
    other.close()
    page.close()
