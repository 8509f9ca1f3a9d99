"""The nbagent kernelspec: package data = canonical files, install, and the real kernel running."""

from __future__ import annotations

import ast
import filecmp
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from nbagent.kernel import install as inst

REPO = Path(__file__).resolve().parents[2]
CANONICAL = REPO / "kernelspec" / "nbagent"
CLICK = {"method": "custom", "content": {"event": "click"}}


def test_package_resources_are_the_canonical_kernelspec() -> None:
    names = sorted(p.name for p in CANONICAL.iterdir())
    assert names == ["kernel.json", "logo-32x32.png", "logo-64x64.png"]
    assert sorted(p.name for p in inst.RESOURCES.iterdir() if p.is_file()) == names
    match, mismatch, errors = filecmp.cmpfiles(CANONICAL, inst.RESOURCES, names, shallow=False)
    assert mismatch == [] and errors == []


def test_kernel_json_and_logos() -> None:
    spec = json.loads((CANONICAL / "kernel.json").read_text())
    assert spec["display_name"] == "Python 3 (nbagent)"
    assert spec["interrupt_mode"] == "signal" and spec["language"] == "python"
    assert spec["argv"][1] == "-c" and "nbagent.kernel.__main__" in spec["argv"][2]
    assert spec["argv"][3:] == ["-f", "{connection_file}"]
    assert inst.kernel_json()["argv"][0] == sys.executable
    for size in (32, 64):
        data = (CANONICAL / f"logo-{size}x{size}.png").read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(data[16:20], "big") == size and int.from_bytes(data[20:24], "big") == size


def test_install_with_prefix_is_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    assert inst.main(["--prefix", str(tmp_path)]) == 0
    assert "Installed kernelspec nbagent" in capsys.readouterr().out
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share" / "jupyter"))
    specs = KernelSpecManager().find_kernel_specs()
    assert Path(specs["nbagent"]) == tmp_path / "share" / "jupyter" / "kernels" / "nbagent"
    spec = KernelSpecManager().get_kernel_spec("nbagent")
    assert spec.display_name == "Python 3 (nbagent)" and spec.interrupt_mode == "signal"
    assert spec.argv[0] == sys.executable
    assert (Path(specs["nbagent"]) / "logo-64x64.png").is_file()


# --- the real kernel ---------------------------------------------------------------------------

SHADOWS = {
    "nbagent/__init__.py": "open({marker!r}, 'a').write('nbagent ')",  # the kernel's own package
    "traitlets/__init__.py": "open({marker!r}, 'a').write('traitlets ')",  # one ipykernel imports at start
    "mistune.py": "open({marker!r}, 'a').write('mistune ')",  # one the warm-up imports
}


OLD_ARGV = ["python", "-m", "nbagent.kernel", "-f", "{connection_file}"]  # the kernelspec before attacker pass 10


@pytest.mark.kernel
@pytest.mark.parametrize("empty_entry, old_kernelspec", [(False, False), (True, False), (False, True)],
                         ids=["installed", "empty PYTHONPATH entry", "old -m kernelspec"])
def test_a_received_folders_packages_run_nothing_when_the_kernel_starts_there(
        tmp_path: Path, empty_entry: bool, old_kernelspec: bool) -> None:
    """``-m nbagent.kernel`` put the notebook's folder first on ``sys.path``: a received folder holding
    ``nbagent/`` or ``traitlets/`` ran its code as the kernel started, and (IPython puts the folder
    before site-packages) a ``mistune.py`` ran when the kernel warmed up (attacker pass 10). An empty
    ``PYTHONPATH`` entry (``export PYTHONPATH=$PYTHONPATH:/lib`` with none set) puts the folder's
    path there too; a kernelspec installed before still starts with ``-m``, where only nbagent
    itself is beyond reach."""
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    prefix, folder, marker = tmp_path / "prefix", tmp_path / "received", tmp_path / "ran.txt"
    installed = Path(inst.install(prefix=str(prefix)))
    if old_kernelspec:
        spec = json.loads((installed / "kernel.json").read_text())
        (installed / "kernel.json").write_text(json.dumps({**spec, "argv": [sys.executable, *OLD_ARGV[1:]]}))
    for name, code in SHADOWS.items():
        if not (old_kernelspec and name.startswith("nbagent/")):
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(code.format(marker=str(marker)) + "\n")
    (folder / "helpers.py").write_text("ANSWER = 42\n")  # the user's own module still imports
    ksm = KernelSpecManager(kernel_dirs=[str(prefix / "share" / "jupyter" / "kernels")])
    km = KernelManager(kernel_name="nbagent", kernel_spec_manager=ksm)
    paths = ["" if empty_entry else None, str(REPO), os.environ.get("PYTHONPATH") or None]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p is not None)}
    km.start_kernel(env=env, cwd=str(folder))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        code = "from nbagent.notebook import warmup\n_ = warmup._thread is None or warmup._thread.join(60)\n"
        reply, outputs = _run(kc, code + "import helpers\nhelpers.ANSWER")
        assert reply["content"]["status"] == "ok", outputs
        assert _result(outputs) == "42"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert not marker.exists(), marker.read_text()

@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    prefix = tmp_path_factory.mktemp("prefix")
    inst.install(prefix=str(prefix))
    ksm = KernelSpecManager(kernel_dirs=[str(prefix / "share" / "jupyter" / "kernels")])
    km = KernelManager(kernel_name="nbagent", kernel_spec_manager=ksm)
    env = dict(os.environ)
    # Importable even when the project is not pip-installed in this environment.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["JUPYTER_PATH"] = str(prefix / "share" / "jupyter")
    km.start_kernel(env=env, cwd=str(prefix))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _reply(kc: Any, msg_id: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        msg = kc.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.1))
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg


def _run(kc: Any, code: str, timeout: float = 30) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    outputs: list[dict[str, Any]] = []
    reply = kc.execute_interactive(code, timeout=timeout, output_hook=outputs.append)
    return reply, outputs


def _result(outputs: list[dict[str, Any]]) -> str | None:
    for m in outputs:
        if m["msg_type"] == "execute_result":
            return m["content"]["data"]["text/plain"]
    return None


@pytest.mark.kernel
def test_kernel_runs_code(kernel: tuple[Any, Any]) -> None:
    km, kc = kernel
    assert km.kernel_spec.display_name == "Python 3 (nbagent)"
    reply, outputs = _run(kc, "1+1")
    assert reply["content"]["status"] == "ok" and _result(outputs) == "2"
    info = kc.kernel_info(reply=True, timeout=30)["content"]
    assert info["implementation"] == "nbagent" and "nbagent" in info["banner"]
    _, outputs = _run(kc, "type(get_ipython().kernel).__name__")
    assert _result(outputs) == "'NbAgentKernel'"


@pytest.mark.kernel
def test_fast_path_resolves_a_synchronous_wait(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    _, outputs = _run(kc, (
        "import ipywidgets as _w\nfrom nbagent.notebook import waiting as _W\n"
        "_d = _W.Decision(); _b = _w.Button(description='ok'); _W.register_button(_b.model_id, _d, 'clicked')\n"
        "_b.model_id"
    ))
    result = _result(outputs)
    assert result is not None
    model_id = result.strip("'")
    # A synchronous wait blocks the main thread: only the shell-channel fast path can answer it.
    # Clicked once the cell runs (its main thread busy from then on), not after a fixed 0.3 s: on a
    # loaded machine the click could arrive before the cell began, and the test then proved nothing.
    msg_id = kc.execute("print('WAITING', flush=True)\n_ok = _d.wait_sync(20); (_ok, _d.value)")
    _stream_until(kc, msg_id, "WAITING")
    kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": model_id, "data": CLICK}))
    start = time.monotonic()
    assert _reply(kc, msg_id)["content"]["status"] == "ok"
    assert time.monotonic() - start < 5
    _, outputs = _run(kc, "(_ok, _d.value)")
    assert _result(outputs) == "(True, 'clicked')"


SIGINT_BLOCKED = """import os, threading
from ipykernel.kernelapp import IPKernelApp
def _sigint_blocked(thread):  # SigBlk in /proc: a hex mask, SIGINT (2) its second bit
    status = open(f"/proc/self/task/{thread.native_id}/status").read()
    return bool(int(status.split("SigBlk:")[1].split()[0], 16) & 2)
_app = IPKernelApp.instance()
_threads = {"main": threading.main_thread(), "iopub": _app.iopub_thread.thread, "heartbeat": _app.heartbeat,
            "control": _app.kernel.control_thread, "shell channel": _app.kernel.shell_channel_thread}
"""


@pytest.mark.kernel
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the threads' signal masks in /proc")
def test_only_the_main_thread_takes_an_interrupt(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    reply, outputs = _run(kc, SIGINT_BLOCKED + "{name: _sigint_blocked(t) for name, t in _threads.items()}")
    assert reply["content"]["status"] == "ok", reply["content"]
    assert ast.literal_eval(_result(outputs) or "None") == {
        "main": False, "iopub": True, "heartbeat": True, "control": True, "shell channel": True}


@pytest.mark.kernel
def test_interrupt_sets_aborts_and_leaves_the_kernel_alive(kernel: tuple[Any, Any]) -> None:
    km, kc = kernel
    # stop_on_error=False: otherwise ipykernel aborts requests queued right after the error.
    msg_id = kc.execute("import time\nprint('SLEEPING', flush=True)\ntime.sleep(10)", stop_on_error=False)
    _stream_until(kc, msg_id, "SLEEPING")  # in the cell's code (a fixed 0.3 s after execute_input was a guess)
    start = time.monotonic()
    km.interrupt_kernel()
    reply = _reply(kc, msg_id)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - start < 5
    assert km.is_alive()
    reply, outputs = _run(kc, "1+1")
    assert _result(outputs) == "2", (reply["content"], [(m["msg_type"], m["content"]) for m in outputs])

    # An awaiting cell: the registered abort is set, and the cell still sees the interrupt.
    msg_id = kc.execute(
        "import asyncio\nfrom nbagent.notebook import aborts as _A, waiting as _W\n_ev = asyncio.Event()\n"
        "with _A.abort_scope(_ev):\n"
        # Printed by the loop once the cell's task is suspended in the wait: an interrupt before that
        # (a fixed 0.3 s sleep on a loaded machine) would land in the cell's code, not in the wait.
        "    asyncio.get_running_loop().call_soon(lambda: print('WAITING', flush=True))\n"
        "    await _W.wait_for_decision(_W.Decision())",
        stop_on_error=False,
    )
    _stream_until(kc, msg_id, "WAITING")
    km.interrupt_kernel()
    reply = _reply(kc, msg_id)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "CancelledError"
    _, outputs = _run(kc, "_ev.is_set()")
    assert _result(outputs) == "True"


@pytest.mark.kernel
def test_a_cell_cancelled_just_as_it_finishes_still_gets_its_reply(kernel: tuple[Any, Any]) -> None:
    """An interrupt's cancel that lands just before the cell task's last step (an aborted agent
    run finishing by itself) makes asyncio mark the finished task cancelled. ipykernel 7 then sends
    neither a reply nor the idle status (the stock kernel leaves the cell running forever); the
    nbagent kernel answers it as an interrupt and stays usable."""
    _, kc = kernel
    msg_id = kc.execute("import asyncio\nawait asyncio.sleep(0)\nasyncio.current_task().cancel()",
                        stop_on_error=False)
    reply = _reply(kc, msg_id)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
    assert isinstance(reply["content"]["execution_count"], int)
    _, outputs = _run(kc, "6 * 7")
    assert _result(outputs) == "42"


def _stream_until(kc: Any, msg_id: str, needle: str, timeout: float = 30) -> str:
    """The first whole line ``msg_id`` printed with ``needle`` in it. Read across stream messages: one
    print can arrive as several (the kernel flushes its stream on a 0.2 s timer, which on a loaded
    machine can fall between the print's writes: 'BUTTON', then ' <id>\\n')."""
    deadline = time.monotonic() + timeout
    printed = ""
    while True:
        m = kc.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.1))
        if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "stream":
            printed += m["content"]["text"]
            line = next((ln for ln in printed.splitlines(keepends=True) if needle in ln and ln.endswith("\n")), None)
            if line is not None:
                return line


@pytest.mark.kernel
def test_permission_prompt_click_reaches_an_awaiting_cell(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    code = (
        "import asyncio\nfrom nbagent.notebook.view import AgentView\n"
        "_v = AgentView(model='m')\n"
        "_t = asyncio.ensure_future(_v.ask_permission('python', {'code': '1'}))\n"
        "await asyncio.sleep(0.05)\n"
        "print('BUTTON', _v.permission.always_button.model_id, flush=True)\n"
        "print('DECIDED', await _t)"
    )
    msg_id = kc.execute(code)
    model_id = _stream_until(kc, msg_id, "BUTTON").split()[1]
    kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": model_id, "data": CLICK}))
    assert "Allow(always=True)" in _stream_until(kc, msg_id, "DECIDED")
    assert _reply(kc, msg_id)["content"]["status"] == "ok"


@pytest.mark.kernel
def test_shell_executor_inside_a_running_cell(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    reply, outputs = _run(kc, (
        "from nbagent.notebook.executor import ShellExecutor\n"
        "_r = await ShellExecutor(get_ipython()).execute("
        "'import asyncio\\nawait asyncio.sleep(0)\\nz = 21\\nprint(\\'p\\')\\nz * 2')\n"
        "(_r.stdout, _r.result_repr, _r.error, z)"
    ))
    assert reply["content"]["status"] == "ok"
    assert _result(outputs) == "('p\\n', '42', None, 21)"
    # Nothing of the inner execution leaked into the cell: one execute_result, no stream.
    assert [m["msg_type"] for m in outputs if m["msg_type"] in ("stream", "execute_result", "error")] == ["execute_result"]
