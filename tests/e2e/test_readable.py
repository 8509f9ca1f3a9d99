"""Every text node nbagent renders is readable, in real JupyterLab + Chromium, on both kernels and in
both the Light and Dark themes: contrast ≥ 4.5 measured from computed styles, nothing clipped in a
1280-px-wide window, no chart label drawn over another.

Three pages per kernel: the truncation explorer, the context-policy explorer, and an agent run with a tool card, an answered
permission prompt, truncation notices, the run table and the ``%agent history`` / ``*_df()`` tables.
"""

from __future__ import annotations

import json
import time

import pytest

from tests.soak import first_by_default

from .test_jupyterlab import SHOTS, _open, _run_all, browser, lab  # noqa: F401  (fixtures)
from .test_jupyterlab import pytestmark as _lab_marks
from .test_newcomer import DARK, LIGHT, _put_notebook, _set_theme

pytestmark = _lab_marks

KERNELS = ["nbagent", "python3"]
WIDTH = 1280
MIN_RATIO = 4.5

EXPLORER = ["import nbagent\nnbagent.explore(window=8_000, requests=40)"]
POLICIES = ["import nbagent\nnbagent.explore_policies(requests=60, large_results=12, large_tokens=3000, planted=4, "
            "window=30_000, max_tokens=4000, policies=('mask:keep=2:clear=6000', 'cline', 'summary:headroom=2000'))"]
RUN = [
    "%load_ext nbagent\nimport nbagent\nfrom pathlib import Path\n"
    "Path('notes.txt').write_text('\\n'.join(f'Line {i}: the quarterly numbers for region {i % 4} were reviewed.'"
    " for i in range(40)))\n"
    "nbagent.notebook.magics.active_magics().new_session(context_window=4000, allow=('read_file',))",
    "%%agent\nWhat is 17 * 23?",  # the demo model runs python: a permission prompt, answered below
    "for i in range(6):\n"
    "    with open('notes.txt', 'a') as f:\n"
    "        f.write(f'Update {i}: revised figures for region {i % 4} arrived.\\n')\n"
    "    await nbagent.notebook.magics.run_agent_cell('', 'Read notes.txt and tell me what it says.')",
    "%agent history",
    "s = nbagent.session()\ns.turns_df()",
    "s.truncation_df()",
    "%agent cost",
]

# Walks the text nodes under every output area (in these notebooks all outputs are nbagent's).
# Contrast: the text's colour (an SVG text's fill) against the first opaque background from the text
# outwards (for SVG text, from the <svg>'s parent: SVG has no backgrounds). Clipped: an element wider
# inside than its box that hides the rest (overflow hidden/clip, ellipsis), or that spills with no
# scrolling box to catch it. Overlap: two SVG labels of one chart drawn over each other.
_READABLE_JS = """(minRatio) => {
  // rgb()/rgba() in 0-255; color-mix() computes to "color(srgb r g b / a)" in 0-1.
  const parse = s => {
    const v = (s.match(/[\\d.]+/g) || []).map(Number);
    return s.startsWith('color(srgb') ? v.map((x, i) => i < 3 ? x * 255 : x) : v;
  };
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const bgOf = el => {
    for (let n = el; n && n.nodeType === 1; n = n.parentElement) {
      const v = parse(getComputedStyle(n).backgroundColor);
      if (v.length >= 3 && (v.length < 4 || v[3] > 0.5)) return v;
    }
    return [255, 255, 255];
  };
  // Content wider than its element is cut by the first box outwards that does not let it spill:
  // fine when that box scrolls (then that box itself must fit), clipped when it hides.
  const clippedAt = (el, stop) => {
    let n = el;
    while (n && n !== stop) {
      if (n instanceof SVGElement || n.scrollWidth <= n.clientWidth + 1) { n = n.parentElement; continue; }
      let a = n;
      for (; a && a !== stop; a = a.parentElement) {
        const ox = getComputedStyle(a).overflowX;
        if (ox === 'hidden' || ox === 'clip') return a;
        if (ox === 'auto' || ox === 'scroll') break;
      }
      if (!a || a === stop) return n;  // spills out of the output with nothing to scroll it
      n = a.parentElement;
    }
    return null;
  };
  const out = {nodes: 0, min: null, low: [], clipped: [], overlaps: []};
  for (const root of document.querySelectorAll('.jp-OutputArea-output')) {
    const stop = root.parentElement;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const labels = [];
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const text = t.textContent.trim();
      const el = t.parentElement;
      if (!text || el.closest('title, style, script')) continue;  // SVG tooltips are not drawn
      if (!el.getClientRects().length) continue;  // not rendered: a closed <details>, another tab
      const cs = getComputedStyle(el);
      if (cs.visibility === 'hidden') continue;
      const svg = el instanceof SVGElement ? el.ownerSVGElement || el : null;
      const fg = parse(svg ? cs.fill : cs.color);
      const bg = bgOf(svg ? svg.parentElement : el);
      const a = fg.length > 3 ? fg[3] : 1;  // a translucent colour is read blended into its background
      const mixed = [0, 1, 2].map(i => a * fg[i] + (1 - a) * bg[i]);
      const [hi, lo] = [lum(mixed), lum(bg)].sort((x, y) => y - x);
      const ratio = (hi + 0.05) / (lo + 0.05);
      out.nodes++;
      out.min = out.min === null ? ratio : Math.min(out.min, ratio);
      const what = text.slice(0, 40);
      if (ratio < minRatio) {
        out.low.push({text: what, ratio: +ratio.toFixed(2), fg: mixed.map(Math.round).join(','), bg: bg.join(',')});
      }
      const cut = clippedAt(el, stop);
      if (cut) out.clipped.push({text: what, tag: cut.tagName, scroll: cut.scrollWidth, client: cut.clientWidth});
      if (svg) {
        // An SVG cuts what lies outside its box: a label wider than its chart is clipped.
        const r = el.getBoundingClientRect(), box = svg.getBoundingClientRect();
        if (r.left < box.left - 1 || r.right > box.right + 1) {
          out.clipped.push({text: what, tag: 'svg', scroll: Math.round(r.width), client: Math.round(box.width)});
        }
        labels.push([svg, el, what]);
      }
    }
    for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
      if (labels[i][0] !== labels[j][0] || labels[i][1] === labels[j][1]) continue;
      const r = labels[i][1].getBoundingClientRect(), s = labels[j][1].getBoundingClientRect();
      const w = Math.min(r.right, s.right) - Math.max(r.left, s.left), h = Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top);
      if (w > 1 && h > 1) out.overlaps.push([labels[i][2], labels[j][2]]);
    }
  }
  return out;
}"""

# Where the run is. Done: the kernel is idle and has run every cell the test wrote, which in a fresh
# kernel is when the highest execution count reaches their number. Not "every code cell shows its
# count": in full runs the front-end once kept a finished cell's count empty ([None] with its six
# outputs shown and the cells after it numbered 4-7), and cells the notebook bridge adds for the
# agent's python calls (issue 24) have none; the test then waited out its deadline.
# A cell that fails makes the kernel abort the cells queued after it (Run All asks stop_on_error),
# so the errors shown so far make the test fail at once, saying which.
_PROGRESS = """(expected) => { const w = window.jupyterapp.shell.currentWidget;
  const cells = w.content.widgets.filter(c => c.model.type === 'code');
  const errors = [];
  cells.forEach((c, i) => { const outs = c.model.outputs;
    for (let j = 0; j < outs.length; j++) { const o = outs.get(j).toJSON();
      if (o.output_type === 'error') errors.push({cell: i + 1, ename: o.ename, evalue: String(o.evalue).slice(0, 300)}); } });
  const highest = Math.max(0, ...cells.map(c => c.model.executionCount || 0));
  return {done: w.sessionContext.session.kernel.status === 'idle' && highest >= expected, errors}; }"""

# What the outputs hold now: equal in two looks in a row means the last widgets and tables settled.
_OUTPUT_SIZE = """() => [...document.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent.length).join(',')"""


_CELL_STATES = """() => { const w = window.jupyterapp.shell.currentWidget;
  return [w.sessionContext.session.kernel.status, ...w.content.widgets.map(c => [c.model.executionCount,
    c.model.sharedModel.getSource().slice(0, 30), c.model.outputs ? c.model.outputs.length : null,
    c.model.executionState, c.outputArea ? (c.outputArea.future ? 'future' : 'no future') : null])]; }"""


_SCROLLER = "document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer')"


def _run_to_the_end(page, tag: str, cells: int) -> None:
    """Run every cell, answering each permission prompt with Allow like a user, until the kernel
    has run the ``cells`` cells the test wrote."""
    from playwright.sync_api import TimeoutError as ClickTimeout

    _run_all(page)
    deadline = time.monotonic() + 240  # six agent runs on a shared two-core machine
    while time.monotonic() < deadline:
        buttons = page.locator("button:text-is('Allow'):enabled")
        for i in range(buttons.count()):
            try:
                buttons.nth(i).click(timeout=2_000)
            except ClickTimeout:
                pass  # settled by the kernel before the click landed
        progress = page.evaluate(_PROGRESS, cells)
        if progress["errors"]:
            page.screenshot(path=str(SHOTS / f"readable_failure_{tag}.png"), full_page=True)
            pytest.fail(f"{tag}: a cell failed (the cells after it never run): {progress['errors']}")
        if progress["done"]:
            _wait_until_settled(page, deadline)
            return
        time.sleep(0.5)
    page.evaluate(f"() => {{ {_SCROLLER}.scrollTop = 1e9; }}")  # where it stopped: the last output
    time.sleep(0.5)
    page.screenshot(path=str(SHOTS / f"readable_failure_{tag}.png"), full_page=True)
    cells = page.evaluate(_CELL_STATES)
    pytest.fail(f"{tag}: the notebook did not finish: {cells}")


def _wait_until_settled(page, deadline: float) -> None:
    """Until the outputs hold the same text in two looks 0.5 s apart: widgets and tables shown by
    the last cells arrive after the kernel's idle (comm messages, then the front-end's render)."""
    last = None
    while time.monotonic() < deadline:
        now = page.evaluate(_OUTPUT_SIZE)
        if now == last:
            return
        last = now
        time.sleep(0.5)
    pytest.fail("the outputs kept changing after every cell ran")


def _screens(page, stem: str, head: int = 3, tail: int = 5) -> None:
    """Screenshots of the first and last screens of the notebook (the lab scrolls inside its
    panel, so a full-page shot shows one screen): the run's start and its tables, in each theme."""
    screens = page.evaluate(f"() => {_SCROLLER}.scrollHeight") // 800 + 1
    shown = sorted(set(range(min(head, screens))) | set(range(max(screens - tail, 0), screens)))
    for i in shown:
        page.evaluate(f"() => {{ {_SCROLLER}.scrollTop = {i * 800}; }}")
        time.sleep(0.3)
        page.screenshot(path=str(SHOTS / f"{stem}_{i}.png"))
    page.evaluate(f"() => {{ {_SCROLLER}.scrollTop = 0; }}")


def _open_details(page) -> None:
    # What the model sees at a request is inside <details>: open them so their text is measured too.
    page.evaluate("() => document.querySelectorAll('.jp-OutputArea-output details').forEach(d => d.open = true)")


@pytest.mark.parametrize("kernel", first_by_default(KERNELS))  # the python3 kernel: in the soak run
@pytest.mark.parametrize("kind", ["explorer", "policies", "run"])
def test_every_text_nbagent_renders_is_readable_in_light_and_dark(browser, lab, kind, kernel):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    tag = f"{kind}_{kernel}"
    cells = {"explorer": EXPLORER, "policies": POLICIES, "run": RUN}[kind]
    name = _put_notebook(lab, f"readable_{tag}.ipynb", kernel, cells)
    page = _open(browser, lab, name)
    page.set_viewport_size({"width": WIDTH, "height": 1000})
    found = {}
    try:
        _run_to_the_end(page, tag, len(cells))
        _open_details(page)
        text = page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent).join(' ')")
        for theme, label in ((LIGHT, "light"), (DARK, "dark")):
            _set_theme(page, theme)
            _screens(page, f"readable_{tag}_{label}")
            found[label] = page.evaluate(_READABLE_JS, MIN_RATIO)
    finally:
        _set_theme(page, LIGHT)  # a lab setting: later tests expect the light theme
        page.close()
    (SHOTS / f"readable_{tag}.json").write_text(json.dumps(found, indent=1))
    # The page holds what it is meant to measure: a card, an answered prompt, a truncation notice, tables.
    expected = {"explorer": ["strategy", "tokens sent (shaded: cache read)", "(history "],
                "policies": ["cache hit %", "tokens sent per request", "recall probe", "FACT-3"],
                "run": ["permission: ✓ allowed", "→ hid messages", "API requests of this run", "stop reason"]}[kind]
    assert all(e in text for e in expected), [e for e in expected if e not in text]
    for label, got in found.items():
        assert got["nodes"] > 20, (label, got["nodes"])  # the page did render nbagent's outputs
        assert not got["low"], (label, f"min {got['min']:.2f}", got["low"][:15])
        assert not got["clipped"], (label, got["clipped"][:15])
        assert not got["overlaps"], (label, got["overlaps"][:15])
