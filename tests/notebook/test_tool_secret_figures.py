"""The python tool (and so a ``%agent serve`` client's ``run_code``) leaves out the image of a figure
whose drawn text holds a secret, as the kernel context and ``notebook_read`` do: pixels cannot be
redacted, and the model's ``fig`` or ``display(fig)`` sent the plot of usage per key both had kept
from it (attacker pass 23)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from nbagent.engine.contracts.tool_api import ToolContext  # noqa: E402
from nbagent.engine.loop.sanitize import Sanitizer  # noqa: E402
from nbagent.notebook.executor import ShellExecutor  # noqa: E402
from nbagent.notebook.kernel_context.figures import DisplayedImages  # noqa: E402
from nbagent.tools import Python  # noqa: E402

KEY = "sk-ant-api03-" + "Qw7Lm3Np5Rt8Vy2Kb6Hd4Zx9" * 4


@pytest.fixture
def shell() -> Iterator[Any]:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.pylabtools import select_figure_formats
    from matplotlib.figure import Figure

    ip = InteractiveShell.instance()
    formatter, saved_pub = ip.display_formatter, ip.display_pub
    assert formatter is not None
    DisplayedImages(ip)
    select_figure_formats(ip, {"png"})
    yield ip
    ip.display_pub = saved_pub
    vars(formatter).pop("format", None)
    formatter.formatters["image/png"].pop(Figure, None)
    for name in ("usage", "sales"):
        plt.close(ip.user_ns.pop(name, None))


async def _images(shell: Any, code: str, tmp_path: Path) -> tuple[list[Any], str]:
    ctx = ToolContext(cwd=tmp_path, executor=ShellExecutor(shell), redact=Sanitizer(()).redact)
    out = await Python().run({"code": code}, ctx)
    blocks: list[Any] = [] if isinstance(out.content, str) else list(out.content)
    return [b for b in blocks if b["type"] == "image"], str(blocks[0]["text"] if blocks else out.content)


@pytest.mark.parametrize("code", ["usage", "from IPython.display import display\ndisplay(usage)"])
async def test_the_python_tool_leaves_out_a_figure_whose_text_holds_a_secret(shell: Any, code: str,
                                                                              tmp_path: Path) -> None:
    usage, sales = plt.subplots()[0], plt.subplots()[0]
    usage.axes[0].bar([f"{KEY[:20]}…", "other"], [3, 1])  # usage per key: its tick labels
    sales.axes[0].set_title("Sales")
    shell.user_ns.update(usage=usage, sales=sales)
    shell.run_cell("from IPython.display import display\ndisplay(usage)\ndisplay(sales)")  # the user's cell
    images, text = await _images(shell, code, tmp_path)
    assert images == [] and "not sent: the figure that drew it was checked and its text holds a secret" in text
    images, text = await _images(shell, "sales", tmp_path)
    assert len(images) == 1 and "not sent" not in text
