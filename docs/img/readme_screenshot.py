"""Make the README's screenshot from the static HTML ``make demo`` writes: the README shows what
build/01_quickstart.html shows (the agent cell and the cells the agent made below it).

    python docs/img/readme_screenshot.py [build/01_quickstart.html] [docs/img/agent_cells.png]

Uses headless Chromium (/usr/bin/chromium) through playwright; nothing is fetched from the network
(the page's CDN scripts are refused: the static HTML needs none of them).
"""

from __future__ import annotations

import sys
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
FIRST = "Which region has the largest total revenue"
LAST = "sales.isna().sum()"


def shoot(html: Path, png: Path, width: int = 1100) -> Path:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
        page.goto(html.resolve().as_uri(), wait_until="domcontentloaded")
        cells = page.locator(".jp-Cell")
        texts = cells.all_inner_texts()
        first = next(i for i, t in enumerate(texts) if FIRST in t)
        last = next(i for i, t in enumerate(texts) if LAST in t and i > first)
        top, bottom = cells.nth(first).bounding_box(), cells.nth(last).bounding_box()
        assert top is not None and bottom is not None
        clip = {"x": 0, "y": top["y"] - 8, "width": width, "height": bottom["y"] + bottom["height"] - top["y"] + 16}
        png.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(png), clip=clip, full_page=True)
        browser.close()
    return png


if __name__ == "__main__":
    args = sys.argv[1:]
    html = Path(args[0] if args else "build/01_quickstart.html")
    png = Path(args[1] if len(args) > 1 else "docs/img/agent_cells.png")
    print(f"screenshot: {shoot(html, png)}")
