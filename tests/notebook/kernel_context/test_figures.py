"""The images a cell displayed reach the model when the prompt is about them (a plot, a chart,
"this", ``Out[n]``), bounded in size and count; a figure is also described in words."""

from __future__ import annotations

import io
import struct
import zlib
from types import SimpleNamespace
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from nbagent.engine.api_facts.images import png_size  # noqa: E402
from nbagent.engine.contracts.messages import ImageBlockParam  # noqa: E402
from nbagent.engine.loop.facts import FactsFocus  # noqa: E402
from nbagent.notebook.kernel_context import KernelContext  # noqa: E402
from nbagent.notebook.kernel_context.figures import MAX_IMAGES, MAX_SIDE, DisplayedImages  # noqa: E402
from tests.notebook.kernel_context.support import block_of, context_text, shell_with  # noqa: E402


def png(width: int = 64, height: int = 48) -> bytes:
    fig = plt.figure(figsize=(width / 100, height / 100), dpi=100)
    fig.add_subplot().plot([1, 2, 3])
    out = io.BytesIO()
    fig.savefig(out, format="png")
    plt.close(fig)
    return out.getvalue()


def huge_png_header(width: int, height: int, size: int) -> bytes:
    """A PNG that says it is ``width`` x ``height`` and is ``size`` bytes (never decoded)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk + b"\0" * (size - 33)


def shell_showing(*cells: tuple[int, list[bytes]], **variables: Any) -> tuple[Any, DisplayedImages]:
    shell = shell_with(**variables)
    shell.display_pub = SimpleNamespace(publish=lambda data, **kw: None)
    displayed = DisplayedImages(shell)
    for number, images in cells:
        shell.execution_count = number
        for data in images:
            shell.display_pub.publish({"image/png": data, "text/plain": "<Figure>"})
    return shell, displayed


def images(ctx: KernelContext, prompt: str, seen: frozenset[int] = frozenset()) -> list[ImageBlockParam]:
    return [b for b in ctx.focused(FactsFocus(prompt, images_seen=seen)).images if b["type"] == "image"]


def test_a_prompt_about_the_plot_gets_the_newest_cells_images_once() -> None:
    first, second = png(), png(80, 60)
    shell, displayed = shell_showing((3, [first]), (5, [second]))
    ctx = KernelContext(shell, None, displayed)
    assert images(ctx, "what is x?") == []
    sent = ctx.focused(FactsFocus("why is this plot empty?")).images
    assert len(sent) == 2
    note, image = sent
    assert note["type"] == "text" and note["text"] == "<kernel-state image>Image displayed by In[5] (80x60 px)</kernel-state>"
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    seen = frozenset({hash(image["source"]["data"])})
    assert images(ctx, "and the chart now?", seen) == []  # the model still sees it
    assert len(images(ctx, "and the chart now?")) == 1  # rolled back, or hidden: sent again
    assert len(images(ctx, "compare Out[3] and In[5]", seen)) == 2  # named: sent again
    assert ctx.last is not None and ctx.last.images == ["Image displayed by In[3]", "Image displayed by In[5]"]


def test_images_are_bounded_in_count_and_size_and_a_50_mb_figure_is_a_note() -> None:
    shell, displayed = shell_showing((2, [png(3000, 2000), png(), png()]), (4, [huge_png_header(20_000, 20_000,
                                                                                               50_000_000)]))
    ctx = KernelContext(shell, None, displayed)
    sent = images(ctx, "the plots of In[2]")
    assert len(sent) == MAX_IMAGES
    import base64

    data = sent[0]["source"]["data"]
    assert isinstance(data, str)
    width, height = png_size(base64.b64decode(data)) or (0, 0)
    assert max(width, height) <= MAX_SIDE and ctx.last is not None
    assert any("at most 2 images" in note for note in ctx.last.notes)
    text, _ = context_text(shell, "what about the figure of Out[4]?", images=displayed)
    assert "Image displayed by In[4] (20000x20000 px, 50.0 MB: too large to scale)" in text


def test_a_named_figure_is_described_in_words_and_drawn() -> None:
    fig, (full, empty) = plt.subplots(1, 2)
    full.plot([0, 1], [1, 0], label="trend")
    full.set_title("Sales")
    full.legend()
    try:
        shell, displayed = shell_showing(fig=fig)
        text, ctx = context_text(shell, "why is half of `fig` empty?", images=displayed)
        block = block_of(text, "fig")
        assert "axes 0: title 'Sales'" in block and "1 lines" in block and "legend ['trend']" in block
        assert "axes 1: title ''" in block and "EMPTY: nothing drawn" in block
        assert ctx.last is not None and ctx.last.images == ["Figure `fig` (drawn now)"]
    finally:
        plt.close(fig)


def test_date_and_category_axes_are_described_as_their_ticks_read() -> None:
    # A date axis holds days since 1970 (pandas' time series: period ordinals): as numbers the
    # description said x 1.972e+04..1.972e+04 of three days of 2024; a bar chart's categories were
    # their positions, -0.49..1.49, and a log scale went unsaid.
    import pandas as pd

    series = pd.Series([1, 2, 3], index=pd.date_range("2024-01-01", periods=3, tz="UTC"))
    by_pandas, ax = plt.subplots()
    series.plot(ax=ax)
    by_mpl, ax = plt.subplots()
    ax.plot(pd.date_range("2024-01-01", periods=3), [1, 5, 2])
    bars, ax = plt.subplots()
    ax.bar(["north", "south"], [3, 500])
    ax.set_yscale("log")
    far, ax = plt.subplots()
    ax.plot(pd.date_range("2024-01-01", periods=2), [1, 2])
    ax.set_xlim(0, 1e9)  # no date holds it: said as numbers, not a failed description
    try:
        text, _ = context_text(shell_with(by_pandas=by_pandas, by_mpl=by_mpl, bars=bars, far=far),
                               "`by_pandas` `by_mpl` `bars` `far`", budget=20_000)
        assert "x '' 2024-01-01..2024-01-03, y" in block_of(text, "by_pandas")
        assert "x '' 2023-12-31 21:36..2024-01-03 02:24, y" in block_of(text, "by_mpl")
        assert "x '' categories ['north', 'south'], y '' 2.323..645.7 (log scale)" in block_of(text, "bars")
        assert "x '' 0..1e+09, y" in block_of(text, "far")
    finally:
        for fig in (by_pandas, by_mpl, bars, far):
            plt.close(fig)


@pytest.mark.parametrize("prompt", ["why is this empty?", "look at Out[7]", "the histogram", "fix the chart"])
def test_what_counts_as_a_prompt_about_images(prompt: str) -> None:
    shell, displayed = shell_showing((7, [png()]))
    assert len(images(KernelContext(shell, None, displayed), prompt)) == 1


KEY = "sk-ant-api03-" + "Qw7Lm3Np5Rt8Vy2Kb6Hd4Zx9" * 4


def test_a_figure_whose_text_holds_a_secret_is_not_sent_as_an_image() -> None:
    """Pixels cannot be redacted: a plot titled with a key, or a bar chart of usage by token (its
    tick labels), went to the model as an image. The figure's drawn texts are checked with the
    request's redaction, for a figure displayed by a cell (through IPython's display, as the inline
    backend shows it) and for one named by variable."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.pylabtools import select_figure_formats
    from IPython.display import display
    from matplotlib.figure import Figure

    from nbagent.engine.loop.sanitize import Sanitizer

    redact = Sanitizer(()).redact  # the key by its shape
    shell = InteractiveShell.instance()
    formatter = shell.display_formatter
    assert formatter is not None
    saved_pub = shell.display_pub
    png_formatter = formatter.formatters["image/png"]
    secret_fig, plain_fig = plt.subplots()[0], plt.subplots()[0]
    secret_fig.axes[0].bar([f"{KEY[:20]}…", "other"], [3, 1])  # tick labels: tokens cut short
    plain_fig.axes[0].set_title("Sales")
    try:
        shell.display_pub = SimpleNamespace(publish=lambda data, **kw: None)
        displayed = DisplayedImages(shell)
        select_figure_formats(shell, {"png"})
        shell.execution_count = 7
        display(plain_fig)
        shell.execution_count = 8
        display(secret_fig)
        assert [s.cell for s in displayed.images] == [7, 8] and displayed.images[0].texts is not None
        shell.user_ns["chart"] = secret_fig
        ctx = KernelContext(shell, None, displayed)
        for prompt in ("what does the plot of In[8] show?", "why is this chart odd?", "look at `chart`, the plot"):
            sent = ctx.focused(FactsFocus(prompt, redact=redact)).images
            assert not [b for b in sent if b["type"] == "image"], prompt
            assert ctx.last is not None and any("left out: its text holds a secret" in n for n in ctx.last.notes)
        assert len(images(ctx, "what does the plot of In[7] show?")) == 1  # no secret in it: sent
        assert len([b for b in ctx.focused(FactsFocus("the plot of In[7]", redact=redact)).images
                    if b["type"] == "image"]) == 1
    finally:
        shell.display_pub = saved_pub
        vars(formatter).pop("format", None)  # the class's method again
        png_formatter.pop(Figure, None)
        shell.user_ns.pop("chart", None)
        plt.close(secret_fig)
        plt.close(plain_fig)


def test_a_figure_whose_table_holds_a_secret_is_not_sent_as_an_image() -> None:
    """A table's cells (``ax.table``, ``df.plot(table=True)``) draw their text without listing it
    among the figure's artists: a table of keys went to the model as pixels."""
    from nbagent.engine.loop.sanitize import Sanitizer

    shell = shell_with()
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    ax.table(cellText=[["token", KEY]], loc="bottom")
    shell.user_ns["chart"] = fig
    try:
        ctx = KernelContext(shell, None, DisplayedImages(shell))
        sent = ctx.focused(FactsFocus("look at `chart`, the plot", redact=Sanitizer(()).redact)).images
        assert not [b for b in sent if b["type"] == "image"]
        assert ctx.last is not None and any("left out: its text holds a secret" in n for n in ctx.last.notes)
    finally:
        plt.close(fig)


def test_a_figure_whose_texts_cannot_be_read_is_left_out_not_sent_unchecked() -> None:
    """An artist that raises when the figure's texts are read: the figure went to the model as
    pixels with no check (a key in its title reached the model)."""
    from nbagent.engine.loop.sanitize import Sanitizer

    shell = shell_with()
    fig, ax = plt.subplots()
    ax.set_title(KEY)

    def broken(*args: object, **kwargs: object) -> list[object]:
        raise RuntimeError("a custom artist's failure")

    fig.findobj = broken  # type: ignore[method-assign, assignment]
    shell.user_ns["chart"] = fig
    try:
        ctx = KernelContext(shell, None, DisplayedImages(shell))
        sent = ctx.focused(FactsFocus("look at `chart`, the plot", redact=Sanitizer(()).redact)).images
        assert not [b for b in sent if b["type"] == "image"]
        assert ctx.last is not None and any("left out: its text could not be read" in n for n in ctx.last.notes)
        assert len(images(ctx, "look at `chart`, the plot")) == 1  # no secret configured: nothing to check
    finally:
        plt.close(fig)
