"""Opening a received notebook folder on the nbagent kernel runs none of the folder's modules, also
those named like an optional dependency that the installed libraries try and lack (attacker pass 19)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from nbagent.kernel import install as inst

REPO = Path(__file__).resolve().parents[2]
PLANTED = (
    "nt.py", "_winapi.py",  # pathlib's ntpath tries them (Windows' own), before the kernel's code runs
    "storemagic.py",  # IPython tries its default extension as a top-level module first, the folder on sys.path
    "colorama.py",  # tornado tries it as ipykernel is imported (kernel start)
    "argcomplete.py",  # IPython, at its import (kernel start)
    "org/__init__.py",  # pickle (``org.python.core``: Jython), at kernel start
    "pyarrow.py", "numexpr.py", "bottleneck.py", "pytz.py",  # pandas, at the warm-up or a first prompt
    "brotli.py",  # httpx, with the SDK
    "httptools.py",  # uvicorn, as `%agent serve` starts
)
"""Each writes its name into ``ran.txt`` when imported; where a real one is installed, it is not
looked for in the folder at all (and the test still holds)."""


SORTING_LINE = ("import os, sys; sys.path.sort(key=lambda p: p in ('', os.getcwd())); "
                "from nbagent.kernel.__main__ import main; sys.exit(main())")
"""The kernelspec's ``-c`` line before attacker pass 19 (the folder moved last, still searched)."""


def _kernel(folder: Path, prefix: Path, env: dict[str, str], installed_before: bool = False) -> tuple[Any, Any]:
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    spec_dir = Path(inst.install(prefix=str(prefix)))
    if installed_before:
        spec = json.loads((spec_dir / "kernel.json").read_text())
        spec["argv"][2] = SORTING_LINE
        (spec_dir / "kernel.json").write_text(json.dumps(spec))
    ksm = KernelSpecManager(kernel_dirs=[str(prefix / "share" / "jupyter" / "kernels")])
    km = KernelManager(kernel_name="nbagent", kernel_spec_manager=ksm)
    km.start_kernel(env=env, cwd=str(folder))
    kc = km.client()
    kc.start_channels()
    return km, kc


def _stream(outputs: list[dict[str, Any]]) -> str:
    return "".join(m["content"].get("text", "") for m in outputs if m["msg_type"] == "stream")


def _env(tmp_path: Path, *paths: Path) -> dict[str, str]:
    """The test process's environment for a kernel that runs this checkout's nbagent, no warm-up."""
    return {**os.environ, "NBAGENT_NO_WARMUP": "1", "IPYTHONDIR": str(tmp_path / "ipython"),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), *map(str, paths), os.environ.get("PYTHONPATH")]))}


def _run_once(folder: Path, tmp_path: Path, env: dict[str, str], code: str) -> tuple[str, str]:
    """Start a kernel in ``folder``, run ``code``, shut it down: the reply's status and the printed text."""
    km, kc = _kernel(folder, tmp_path / "prefix", env)
    outputs: list[dict[str, Any]] = []
    try:
        kc.wait_for_ready(timeout=60)
        reply = kc.execute_interactive(code, timeout=60, output_hook=outputs.append)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return reply["content"]["status"], _stream(outputs)


def _configure_extensions(tmp_path: Path, *names: str) -> None:
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text(f"c.InteractiveShellApp.extensions = {list(names)!r}\n")


@pytest.mark.kernel
@pytest.mark.parametrize("warm_up, cell, installed_before", [
    (True, "%%agent --simulated\nhello", False), (False, "%%agent --simulated\nhello", False),
    (True, "%agent serve", False), (True, "%%agent --simulated\nhello", True)],
    ids=["opened, warmed up", "first prompt, no warm-up", "agent serve", "kernelspec installed before"])
def test_a_received_folders_modules_run_neither_when_opened_nor_when_nbagent_works(
        tmp_path: Path, warm_up: bool, cell: str, installed_before: bool) -> None:
    folder, marker = tmp_path / "received", tmp_path / "ran.txt"
    for name in PLANTED:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"open({str(marker)!r}, 'a').write({name!r} + ' ')\nraise ImportError('planted')\n")
    (folder / "helpers.py").write_text("ANSWER = 42\n")  # the user's own module still imports
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    if not warm_up:
        env["NBAGENT_NO_WARMUP"] = "1"
    km, kc = _kernel(folder, tmp_path / "prefix", env, installed_before)
    outputs: list[dict[str, Any]] = []
    try:
        kc.wait_for_ready(timeout=60)  # what a page does on opening: kernel_info, which starts the warm-up
        wait = "from nbagent.notebook import warmup\n_ = warmup._thread is None or warmup._thread.join(120)\n"
        if warm_up:
            reply = kc.execute_interactive(wait, timeout=150, output_hook=outputs.append)
            assert reply["content"]["status"] == "ok"
            assert not marker.exists(), f"opening the notebook ran: {marker.read_text()}"
        reply = kc.execute_interactive(cell, timeout=150, output_hook=outputs.append)
        assert reply["content"]["status"] == "ok", _stream(outputs)
        reply = kc.execute_interactive("import helpers\nprint(helpers.ANSWER)", timeout=30, output_hook=outputs.append)
        assert reply["content"]["status"] == "ok" and _stream(outputs).endswith("42\n")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert not marker.exists(), f"the notebook's folder ran: {marker.read_text()}"


@pytest.mark.kernel
def test_ipythons_own_store_magic_still_loads(tmp_path: Path) -> None:
    """The default extension IPython loads (``storemagic``) comes from IPython, not from nowhere."""
    folder = tmp_path / "received"
    folder.mkdir()
    status, printed = _run_once(folder, tmp_path, _env(tmp_path), "x = 41\n%store x\n%store -r x\nprint(x + 1)")
    assert status == "ok" and printed.endswith("42\n"), printed


@pytest.mark.kernel
def test_the_users_configured_extension_beside_the_notebook_still_loads(tmp_path: Path) -> None:
    """Only IPython's own extensions (tried as top-level modules first) load without the folder: one
    the user configured, kept beside the notebooks, loads as before; a received ``autoreload.py`` does not run."""
    folder, marker = tmp_path / "project", tmp_path / "ran.txt"
    folder.mkdir()
    (folder / "myext.py").write_text("def load_ipython_extension(ip):\n    ip.user_ns['MYEXT'] = 'loaded'\n")
    (folder / "autoreload.py").write_text(f"open({str(marker)!r}, 'a').write('autoreload.py')\n")
    _configure_extensions(tmp_path, "autoreload", "myext")
    code = "print(MYEXT, 'IPython.extensions.autoreload' in __import__('sys').modules)"
    status, printed = _run_once(folder, tmp_path, _env(tmp_path), code)
    assert status == "ok" and printed.endswith("loaded True\n"), printed
    assert not marker.exists(), f"the notebook's folder ran: {marker.read_text()}"


@pytest.mark.kernel
def test_an_installed_configured_extension_takes_no_optional_module_from_the_folder(tmp_path: Path) -> None:
    """An extension the user configured that is installed (not beside the notebooks) tries its optional
    modules without the folder: a received folder's ran as the kernel started; one beside them still loads."""
    folder, marker, site = tmp_path / "project", tmp_path / "ran.txt", tmp_path / "site"
    folder.mkdir()
    site.mkdir()
    (site / "fancyext.py").write_text("try:\n    import fancy_speedups\nexcept ImportError:\n    pass\n"
                                      "def load_ipython_extension(ip):\n    ip.user_ns['FANCY'] = 'fancy'\n")
    (folder / "fancy_speedups.py").write_text(f"open({str(marker)!r}, 'a').write('fancy_speedups.py')\n")
    (folder / "myext.py").write_text("def load_ipython_extension(ip):\n    ip.user_ns['MYEXT'] = 'mine'\n")
    _configure_extensions(tmp_path, "fancyext", "myext")
    status, printed = _run_once(folder, tmp_path, _env(tmp_path, site), "print(FANCY, MYEXT)")
    assert status == "ok" and printed.endswith("fancy mine\n"), printed
    assert not marker.exists(), f"the notebook's folder ran: {marker.read_text()}"
