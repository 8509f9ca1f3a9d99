"""``notebook_read`` leaves out the image of a figure whose drawn text holds a secret, as the kernel
context does: pixels cannot be redacted, and a read of the cell (the model's, unasked; a ``%agent
serve`` client's) sent the plot of usage per key the kernel context had left out (attacker pass 15)."""

from __future__ import annotations

import base64
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from nbagent.engine.contracts.tool_api import ToolContext  # noqa: E402
from nbagent.engine.loop.sanitize import Sanitizer  # noqa: E402
from nbagent.notebook.document.bridge import Bridge  # noqa: E402
from nbagent.notebook.document.tools import NotebookTools  # noqa: E402
from nbagent.notebook.kernel_context.figures import DisplayedImages  # noqa: E402

from .fake_frontend import FakeFrontEnd  # noqa: E402

KEY = "sk-ant-api03-" + "Qw7Lm3Np5Rt8Vy2Kb6Hd4Zx9" * 4


def _displayed_pngs(*figures: Any) -> list[str]:
    """Each figure displayed as a cell displays it (IPython's formatter, then its publisher): the
    base64 PNGs the notebook's outputs then hold."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.pylabtools import select_figure_formats
    from IPython.display import display
    from matplotlib.figure import Figure

    shell = InteractiveShell.instance()
    formatter = shell.display_formatter
    assert formatter is not None
    saved_pub, published = shell.display_pub, []
    try:
        shell.display_pub = SimpleNamespace(publish=lambda data, **kw: published.append(data["image/png"]))
        DisplayedImages(shell)
        select_figure_formats(shell, {"png"})
        for fig in figures:
            display(fig)
    finally:
        shell.display_pub = saved_pub
        vars(formatter).pop("format", None)
        formatter.formatters["image/png"].pop(Figure, None)
    return [p if isinstance(p, str) else base64.b64encode(p).decode() for p in published]


async def test_a_read_leaves_out_the_image_of_a_figure_whose_text_holds_a_secret(tmp_path: Path) -> None:
    secret_fig, plain_fig = plt.subplots()[0], plt.subplots()[0]
    secret_fig.axes[0].bar([f"{KEY[:20]}…", "other"], [3, 1])  # usage per key: its tick labels
    plain_fig.axes[0].set_title("Sales")
    try:
        secret_png, plain_png = _displayed_pngs(secret_fig, plain_fig)
    finally:
        plt.close(secret_fig)
        plt.close(plain_fig)
    front = FakeFrontEnd([{"cell_type": "code", "source": f"plot_usage({i})", "outputs": [
        {"output_type": "display_data", "data": {"image/png": data, "text/plain": "<Figure>"}, "metadata": {}}]}
        for i, data in enumerate((secret_png, plain_png))])
    read = {t.name: t for t in NotebookTools(front.connect(Bridge()), lambda: "S1").tools()}["notebook_read"]
    out = await read.run({}, ToolContext(cwd=tmp_path, tool_use_id="toolu_1", redact=Sanitizer(()).redact))
    blocks: list[Any] = list(out.content)
    images = [b for b in blocks if b["type"] == "image"]
    assert [b["source"]["data"] for b in images] == [plain_png]
    assert "not sent: the figure that drew it was checked and its text holds a secret" in blocks[0]["text"]
