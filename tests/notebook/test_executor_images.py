"""Every image the model's code shows reaches the model, in the order the cell shows them, and the
written cell's value is its own: a loop of ``display(fig)`` sent the last figure only (the bundles
were merged, later displays winning), and a value after a displayed figure was written out as that
figure again (its bundle carried the figure's PNG beside its text)."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path
from typing import Any, Iterator

import pytest

from nbagent.engine.contracts.tool_api import ToolContext
from nbagent.engine.loop.sanitize import Sanitizer
from nbagent.notebook.document.cells import outputs_of
from nbagent.notebook.executor import ShellExecutor
from nbagent.tools import Python
from nbagent.tools.python import MAX_IMAGES


def _png(width: int, shade: int) -> bytes:
    """A real PNG ``width`` x 1 px of grey ``shade`` (each one different)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", width, 1, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00" + bytes([shade]) * width))
            + chunk(b"IEND", b""))


@pytest.fixture
def shell() -> Iterator[Any]:
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.user_ns["pngs"] = [_png(10 + i, 40 * i) for i in range(MAX_IMAGES + 2)]
    yield ip
    for name in ("pngs", "handle"):
        ip.user_ns.pop(name, None)


async def _run(shell: Any, code: str, tmp_path: Path) -> tuple[list[bytes], str, ShellExecutor, Any]:
    executor = ShellExecutor(shell)
    out = await Python().run({"code": "from IPython.display import display, Image, clear_output\n" + code},
                             ToolContext(cwd=tmp_path, executor=executor, redact=Sanitizer(()).redact))
    blocks: list[Any] = [] if isinstance(out.content, str) else list(out.content)
    images = [base64.b64decode(b["source"]["data"]) for b in blocks if b["type"] == "image"]
    return images, str(blocks[0]["text"] if blocks else out.content), executor, out


async def test_each_image_a_loop_displays_reaches_the_model_in_order(shell: Any, tmp_path: Path) -> None:
    images, text, _, _ = await _run(shell, "for p in pngs[:3]: display(Image(p))", tmp_path)
    assert images == shell.user_ns["pngs"][:3]
    assert "not sent" not in text


async def test_past_the_most_images_a_call_sends_the_first_ones_and_says_how_many_were_left_out(
        shell: Any, tmp_path: Path) -> None:
    images, text, _, _ = await _run(shell, "for p in pngs: display(Image(p))", tmp_path)
    assert images == shell.user_ns["pngs"][:MAX_IMAGES]
    assert f"[2 more images the code showed not sent: at most {MAX_IMAGES} per python call" in text


async def test_an_updated_or_cleared_display_sends_what_the_cell_ends_up_showing(shell: Any, tmp_path: Path) -> None:
    pngs = shell.user_ns["pngs"]
    code = ("handle = display(Image(pngs[0]), display_id=True)\nhandle.update(Image(pngs[1]))\n"
            "display(Image(pngs[2]))\nclear_output()\ndisplay(Image(pngs[3]))")
    images, _, _, _ = await _run(shell, code, tmp_path)
    assert images == [pngs[3]]
    images, _, _, _ = await _run(shell, "handle = display(Image(pngs[0]), display_id=True)\nhandle.update(Image(pngs[1]))",
                                 tmp_path)
    assert images == [pngs[1]]


async def test_a_value_after_a_displayed_image_is_written_and_shown_as_itself(shell: Any, tmp_path: Path) -> None:
    images, text, executor, out = await _run(shell, "display(Image(pngs[0]))\n6 * 7", tmp_path)
    assert images == [shell.user_ns["pngs"][0]] and "[result]\n42" in text
    value = [o for o in outputs_of(executor.history[-1]) if o["output_type"] == "execute_result"]
    assert value[0]["data"] == {"text/plain": "42"}  # not the figure again, drawn in the value's place
    assert out.display is not None and "42" in out.display  # the card says the value, the image is drawn below


async def test_a_displayed_image_and_the_value_s_own_image_both_reach_the_model(shell: Any, tmp_path: Path) -> None:
    images, _, _, _ = await _run(shell, "display(Image(pngs[0]))\nImage(pngs[1])", tmp_path)
    assert images == shell.user_ns["pngs"][:2]
