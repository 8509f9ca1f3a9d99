"""Text colours that stay readable in any JupyterLab theme, and the tinted panels they sit on.

Every colour is JupyterLab's own ``--jp-*`` variable with the light theme's value as the fallback
(static HTML: nbconvert, GitHub). The theme's semantic colours alone are not enough: JupyterLab
Light's success green reads at 4.1:1 on white and Dark's red at 3.5:1 on its grey panels. So
coloured text is the theme colour *mixed with the theme's text colour* (``color-mix``): it keeps its
hue and moves towards whatever contrasts with the page, in either theme. Panels are the page colour
lightly tinted, so they stay light in Light and dark in Dark.
"""

from __future__ import annotations

TEXT = "var(--jp-content-font-color1, #111)"
PAGE = "var(--jp-layout-color0, #fff)"


def mixed(colour: str, share: int, other: str) -> str:
    """``share`` percent of ``colour`` and the rest ``other``, in sRGB."""
    return f"color-mix(in srgb, {colour} {share}%, {other})"


def text_in(var: str, fallback: str) -> str:
    """A theme colour (``--jp-error-color0`` …) made readable as text: half of it, half the text colour."""
    return mixed(f"var({var}, {fallback})", 50, TEXT)


def tint(var: str, fallback: str, share: int = 12) -> str:
    """A panel background: the page with a little of a theme colour."""
    return mixed(f"var({var}, {fallback})", share, PAGE)


MUTED = mixed(TEXT, 72, PAGE)  # secondary text: the text colour faded towards the page, never below 4.5:1
FAINT = mixed(TEXT, 66, PAGE)  # an interrupted card's text: fainter still, still readable
ERROR = text_in("--jp-error-color0", "#b71c1c")
OK = text_in("--jp-success-color0", "#1b5e20")
WARN = text_in("--jp-warn-color0", "#8a4b00")
INFO = text_in("--jp-brand-color0", "#0d47a1")
BORDER = "var(--jp-border-color2, #ddd)"
USER_PANEL = tint("--jp-brand-color1", "#1976d2")
ASSISTANT_PANEL = tint("--jp-success-color1", "#388e3c")
NOTICE_PANEL = tint("--jp-warn-color1", "#f57c00", 18)
NOTICE_EDGE = "var(--jp-warn-color1, #f57c00)"
CACHE_SHADE = tint("--jp-brand-color1", "#1976d2", 25)  # the share of a chart read from the cache
