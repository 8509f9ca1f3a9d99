"""Real JupyterLab in headless Debian Chromium, driven by Playwright: a human's clicks, for real.

Skipped when /usr/bin/chromium is absent (``.ci/run`` installs it). Screenshots land in
``build/screenshots/`` so a reviewer can look at what a user sees.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "screenshots"
LOGS = ROOT / "build" / "e2e-logs"  # each server's log, named by its port, for a failure's report


def server_log_tail(url: str, lines: int = 40) -> str:
    """The end of the log of the server behind ``url`` (what a failure report quotes: kernel deaths,
    restarts and refused requests are only visible there)."""
    try:
        return "\n".join((LOGS / f"jupyterlab-{urlsplit(url).port}.log").read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium (apt-get install chromium)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_lab(work: Path, env: dict[str, str], token: str, attempts: int = 5):
    """Start JupyterLab on a free port; ``(base URL, process, log file)``.

    A port found free can be taken by another worker's server before Jupyter binds it; Jupyter
    would then move to the next port on its own while we poll the first (a CI failure). So it may
    not move (``port_retries=0``): it exits, and we start again on another port."""
    for _ in range(attempts):
        port = _free_port()
        log = open(LOGS / f"jupyterlab-{port}.log", "wb")  # noqa: SIM115 (open for the server's life)
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}",
             "--ServerApp.port_retries=0",
             "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True",
             "--LabApp.news_url=", "--JupyterNotebookApp.expose_app_in_browser=True",  # Notebook 7 at /notebooks/ too
             "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={work}"],
            cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                return base, proc, log
            except OSError:
                time.sleep(0.3)
        if proc.poll() is None:
            proc.kill()
            log.close()
            pytest.fail(f"JupyterLab did not start:\n{server_log_tail(base)}")
        log.close()  # it exited: most likely the port was taken meanwhile; try another
    pytest.fail(f"JupyterLab did not start in {attempts} attempts:\n{server_log_tail(base)}")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    work = tmp_path_factory.mktemp("lab")
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        shutil.copy(nb, work / nb.name)
    explorer = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import nbagent\nnbagent.explore(window=8_000, requests=40)")],
        metadata={"kernelspec": {"name": "nbagent", "display_name": "Python 3 (nbagent)", "language": "python"}},
    )
    nbformat.write(explorer, work / "explorer.ipynb")
    token = secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["JUPYTER_CONFIG_DIR"] = str(work / ".jupyter-config")
    # No "get notified about Jupyter news?" toast over the screenshots.
    labconfig = work / ".jupyter-config" / "labconfig"
    labconfig.mkdir(parents=True)
    (labconfig / "page_config.json").write_text(
        '{"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": true}}')
    LOGS.mkdir(parents=True, exist_ok=True)
    base, proc, log = _start_lab(work, env, token)
    yield base, token
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def browser():
    # Also here, not only in each module's pytestmark: a module that forgets the mark skips, not errors.
    if not Path(CHROMIUM).exists():
        pytest.skip("needs Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run", "--disable-quic"])
        yield b
        b.close()


def _open(browser, lab, name):
    base, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{base}/lab/tree/{name}?reset&token={token}")
    page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=60_000)
    # Wait for the nbagent kernel to be idle before running anything.
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    page.wait_for_function(
        "(() => { const w = window.jupyterapp.shell.currentWidget; "
        "const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel; "
        "return k && k.status === 'idle'; })()",
        timeout=60_000)
    return page


def _run_all(page):
    # Not awaited: the command's promise settles only when every cell is done, and a cell waits
    # for our click.
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")


def test_allow_click_in_a_running_cell_and_screenshot(browser, lab):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = _open(browser, lab, "01_quickstart.ipynb")
    _run_all(page)
    # The first *enabled* Allow: once (under a loaded CI machine) the locator resolved to a
    # settled prompt's disabled button and waited on it for 30 s.
    allow = page.locator("button:text-is('Allow'):enabled").first
    allow.wait_for(state="visible", timeout=60_000)
    page.screenshot(path=str(SHOTS / "01_permission_prompt.png"), full_page=False)
    allow.click()
    # The notebook's second prompt asks again: keep answering like a user until the run is over.
    # A button seen enabled may be settled (disabled by the kernel) before the click lands: that
    # prompt is answered already, so a click that cannot happen is skipped, not waited on.
    from playwright.sync_api import TimeoutError as ClickTimeout

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        buttons = page.locator("button:text-is('Allow'):enabled")
        for i in range(buttons.count()):
            try:
                buttons.nth(i).click(timeout=2_000)
            except ClickTimeout:
                pass
        if page.locator("text=391").count() and page.locator("text=/^requests \\d+/").count():
            break
        time.sleep(0.5)
    else:
        page.screenshot(path=str(SHOTS / "01_failure.png"), full_page=True)
        pytest.fail("the quickstart did not finish after the Allow clicks")
    page.screenshot(path=str(SHOTS / "01_quickstart.png"), full_page=True)
    assert (SHOTS / "01_quickstart.png").stat().st_size > 20_000
    page.close()


def test_retry_widget_screenshot(browser, lab):
    page = _open(browser, lab, "03_retries_and_faults.ipynb")
    _run_all(page)
    page.locator("button:text-is('Retry now')").first.wait_for(state="visible", timeout=60_000)
    page.screenshot(path=str(SHOTS / "03_retry_countdown.png"), full_page=False)
    # Then the 429 with retry-after: a wait for the shared rate limit, not a retry counted.
    page.locator(".jp-OutputArea-output").get_by_text("waiting for the shared rate limit").first.wait_for(
        timeout=60_000)
    assert (SHOTS / "03_retry_countdown.png").stat().st_size > 20_000
    page.evaluate("() => { window.jupyterapp.commands.execute('kernelmenu:interrupt'); }")
    page.close()


def test_explorer_screenshot(browser, lab):
    page = _open(browser, lab, "explorer.ipynb")
    _run_all(page)
    page.locator(".widget-tab, .jp-OutputArea-output svg").first.wait_for(timeout=60_000)
    time.sleep(1.0)
    page.screenshot(path=str(SHOTS / "explorer.png"), full_page=True)
    assert (SHOTS / "explorer.png").stat().st_size > 20_000
    page.close()
