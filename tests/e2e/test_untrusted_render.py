"""A malicious model in real JupyterLab + Chromium: script in its reply, its thinking, its tool call,
a file name in a tool call, the tool's printed result and the HTML/SVG/Markdown/JavaScript the
tool displayed must not run in the page, and its CSS must not make the page fetch anything.

Every payload sets ``window.__pwned``; JupyterLab renders the outputs of a running session as
trusted, so before the fix the first ``<img onerror>`` set it while the answer streamed (and from
there a script could reach the kernel with the page's token). The test reads the variable during
and after the run, and checks that the payloads are still shown as text.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from tests.soak import first_by_default

from .test_jupyterlab import SHOTS, _open, _run_all, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import _put_notebook

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = _lab_marks

ATTACK = r'''ATTACK = "\n\n".join([
    '<img src=x onerror="window.__pwned=(window.__pwned||[]).concat([\'img\'])">',
    '<script>window.__pwned=(window.__pwned||[]).concat(["script"])</script>',
    '[click me](javascript:window.__pwned=1)',
    '<svg onload="window.__pwned=(window.__pwned||[]).concat([\'svg\'])"><circle r="5"/></svg>',
    '<iframe srcdoc="<script>parent.__pwned=(parent.__pwned||[]).concat([\'iframe\'])</script>"></iframe>',
    '<details open ontoggle="window.__pwned=(window.__pwned||[]).concat([\'details\'])">x</details>',
    '<style>@import url(javascript:alert(1));</style>',
    '<div style="background:url(/nbagent-css-leak?via=style)">css</div>',
    '<div style="background-image:image-set(\'/nbagent-css-leak?via=image-set\' 1x)">css</div>',
    '<style>@import url(/nbagent-css-leak?via=import);</style>',
])'''

SETUP = f'''%load_ext nbagent
import nbagent
from nbagent.providers.simulated import ScriptedResponder, text_reply, tool_reply
{ATTACK}
SHOW = "from IPython.display import HTML, SVG, Markdown, Javascript, display\\n" + \\
    "display(HTML(ATTACK)); display(Markdown(ATTACK)); display(Javascript('window.__pwned=[\\"js\\"]'))\\n" + \\
    "display(SVG('<svg xmlns=\\"http://www.w3.org/2000/svg\\" " + \\
    "onload=\\"window.__pwned=[1]\\"><circle r=\\"5\\"/></svg>'))\\n" + \\
    "print(ATTACK)"
s = nbagent.notebook.magics.active_magics().new_session(allow=("python",))
s.agent.simulated_api.tokens_per_second = 400  # streamed in many deltas, as a real model does
s.agent.simulated_api.responder = ScriptedResponder([
    tool_reply([("python", {{"code": SHOW}}), ("read_file", {{"path": ATTACK}})], text=ATTACK),
    text_reply(ATTACK + "\\n\\nEND-OF-ATTACK", thinking=ATTACK),
])'''


@pytest.mark.parametrize("kernel", first_by_default(["nbagent", "python3"]))
def test_script_in_anything_the_model_produces_never_runs(browser: Browser, lab: tuple[str, str],  # noqa: F811
                                                          kernel: str) -> None:
    name = _put_notebook(lab, f"xss_{kernel}.ipynb", kernel, [SETUP, "%%agent\nShow me something."])
    page = _open(browser, lab, name)
    leaks: list[str] = []  # CSS that fetched (the live view, the materialised cell): on the lab's own origin
    page.on("request", lambda request: leaks.append(request.url) if "nbagent-css-leak" in request.url else None)
    _run_all(page)
    seen = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        seen.append(page.evaluate("() => window.__pwned === undefined ? null : String(window.__pwned)"))
        if page.locator("text=/END-OF-ATTACK/").count() and page.locator("text=/done: end_turn/").count():
            break
        time.sleep(0.2)
    else:
        page.screenshot(path=str(SHOTS / f"xss_{kernel}_failure.png"), full_page=True)
        pytest.fail("the scripted run did not finish")
    time.sleep(0.5)  # any late onerror / onload fires
    seen.append(page.evaluate("() => window.__pwned === undefined ? null : String(window.__pwned)"))
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"xss_{kernel}.png"), full_page=True)
    assert [s for s in seen if s is not None] == []
    assert leaks == []
    # Still readable: the payloads are shown as text, not dropped.
    assert page.locator("text=/onerror=/").count() >= 1
    page.close()
