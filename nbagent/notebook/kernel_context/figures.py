"""Figures: the images cells displayed, sent as image blocks when a prompt is about them ("why is
this plot empty?"); what the model is told of a figure itself is in :mod:`.figure_text`.

A cell's displayed PNGs are kept as they pass through the shell's display publisher (the inline
backend closes its figures after the cell, so they are not in the namespace any more): the last
``KEPT`` images, by cell number. A prompt about a plot, a chart, a figure, "this" or an ``Out[n]``
gets the images of that cell (``Out[n]``/``In[n]``) or of the newest cell that displayed one: at
most ``MAX_IMAGES``, each scaled to at most ``MAX_SIDE`` pixels a side (with Pillow, which
matplotlib brings) and ``MAX_IMAGE_BYTES``; one that cannot be brought within bounds is named in
a one-line note instead. An image the model still sees in an earlier prompt is not sent again
unless its cell is named (after a rollback or a truncation that hid it, it is).
"""

from __future__ import annotations

import base64
import collections
import hashlib
import io
import re
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from IPython.core.interactiveshell import InteractiveShell
    from matplotlib.figure import Figure
    from typing_extensions import TypeGuard

    from ...engine.contracts.messages import ImageBlockParam, TextBlockParam

KEPT = 8
#: Cells whose value's text is kept (:attr:`DisplayedImages.shown`), and how much of each.
SHOWN_KEPT, SHOWN_CHARS = 8, 10_000
#: Secrets the kept texts' values held when shown, at most (the newest cells' first).
SHOWN_SECRETS = 50
MAX_IMAGES = 2
MAX_SIDE = 1_024
MAX_IMAGE_BYTES = 1_000_000
#: A PNG with more pixels than this is not decoded at all (a 50 MB figure): named, not sent.
MAX_DECODE_PIXELS = 40_000_000

_ABOUT_IMAGES = re.compile(r"\b(plots?|plotted|charts?|figures?|figs?|graphs?|images?|pictures?|histograms?|"
                           r"axes|axis|legend|visuali[sz]\w*|this)\b|\b(?:Out|In)\[\d+\]", re.IGNORECASE)
_CELL_REF = re.compile(r"\b(?:Out|In)\[(\d+)\]")


@dataclass(frozen=True)
class Shown:
    """One image a cell displayed: its cell number and PNG bytes."""

    cell: int | None
    png: bytes
    texts: tuple[str, ...] | None = None
    """The texts the figure drew, checked for secrets (None: not a figure; :data:`UNREAD`: a figure
    whose texts could not be read, never sent)."""


class DisplayedImages:
    """The PNGs user cells displayed lately (one per shell; the agent's own code publishes through
    its executor's publisher, not this one): by ``display()`` and as a cell's value (its
    ``execute_result``: a PIL image or ``Image(...)`` on a cell's last line). Also the text a cell's
    value showed, as it showed it (:attr:`shown`): ``Out[n]`` holds the object, which a later cell
    may change (``df["a"] *= 100``), and the model is told what the cell output, not its value now."""

    def __init__(self, shell: "InteractiveShell | None") -> None:
        self.shell = shell
        self.images: collections.deque[Shown] = collections.deque(maxlen=KEPT)
        self.shown: dict[int, str] = {}
        self._texts: tuple[str, ...] | None = None
        self._held: tuple[str, ...] = ()  # the secrets of the value being formatted (display hook: its Out)
        self._shown_secrets: dict[int, tuple[str, ...]] = {}
        self._started: int | None = None  # the number of the cell that started last
        events = getattr(shell, "events", None)
        if events is not None:
            events.register("pre_run_cell", self._cell_starts)
        self.watch()

    def watch(self) -> None:
        """Watch the shell's display publisher, formatter and display hook, in place of whatever
        watched them before (``%reload_ext nbagent`` keeps this object rather than making another)."""
        self._watch_publisher(getattr(self.shell, "display_pub", None))
        self._watch_formatter(getattr(self.shell, "display_formatter", None))
        self._watch_displayhook(getattr(self.shell, "displayhook", None))

    def _watch_publisher(self, pub: Any) -> None:
        if pub is None:
            return
        # A second %load_ext replaces the first watcher instead of stacking on it.
        original = getattr(pub.publish, "__wrapped__", pub.publish)

        def publish(data: object, *args: object, **kwargs: object) -> object:
            self.saw(data)
            self._keep_held(self._cell())  # display(users): the page shows it as it was then
            return original(data, *args, **kwargs)
        publish.__wrapped__ = original  # type: ignore[attr-defined]
        pub.publish = publish

    def _watch_formatter(self, formatter: Any) -> None:
        if formatter is None:
            return
        # display() formats, then publishes: the figure's texts, read once it is drawn, go with its PNG.
        original_format = getattr(formatter.format, "__wrapped__", formatter.format)

        def format(obj: object, *args: object, **kwargs: object) -> object:
            result = original_format(obj, *args, **kwargs)
            self._texts = drawn_texts(obj) if is_figure(obj) else None
            self._held = _held_secrets(obj)  # the text kept for it (:attr:`shown`) shows these values
            return result
        format.__wrapped__ = original_format  # type: ignore[attr-defined]
        formatter.format = format

    def _watch_displayhook(self, hook: Any) -> None:
        """A cell's value is formatted by the display hook and sent as its ``execute_result``, not
        through the publisher: its PNG and its text are kept here."""
        write = getattr(hook, "write_format_data", None)
        if write is None:
            return
        original = getattr(write, "__wrapped__", write)

        def write_format_data(format_dict: object, *args: object, **kwargs: object) -> object:
            self.saw(format_dict)
            self._shown_text(format_dict)
            return original(format_dict, *args, **kwargs)
        write_format_data.__wrapped__ = original  # type: ignore[attr-defined]
        hook.write_format_data = write_format_data

    def _cell_starts(self, info: object = None) -> None:
        # A display after the cell's code ran (the inline backend shows its figures in post_execute)
        # has no result to read the number from: kept here. IPython has counted this cell already
        # when the hook runs (a cell kept in history), so the counter names the next one.
        count = getattr(self.shell, "execution_count", None)
        counted = getattr(info, "store_history", True)
        self._started = count - 1 if isinstance(count, int) and counted else count if isinstance(count, int) else None

    def _cell(self) -> int | None:
        """The number of the cell running now, ``[N]`` as the front-end shows it: IPython adds one
        to ``execution_count`` as a cell starts, so the counter names the next cell (an image of
        ``In[3]`` was labelled ``In[4]``); the running cell's number is on the display hook's
        result (as :func:`nbagent.notebook.executor.running_cell_count` reads it)."""
        result = getattr(getattr(self.shell, "displayhook", None), "exec_result", None)
        count = getattr(result, "execution_count", None)
        if isinstance(count, int):
            return count
        # No result while the inline backend shows a cell's figures (post_execute): the counter
        # names the next cell then, and a plot of In[2] was sent to the model as "In[3]".
        return self._started if self._started is not None else getattr(self.shell, "execution_count", None)

    def _shown_text(self, data: object) -> None:
        text = data.get("text/plain") if isinstance(data, dict) else None
        cell = self._cell()
        if isinstance(text, str) and isinstance(cell, int):
            self.shown[cell] = text[:SHOWN_CHARS]
        self._keep_held(cell)

    def _keep_held(self, cell: int | None) -> None:
        """Keep the secrets the value just formatted held, as cell ``cell``'s: the page still shows them
        once the value is masked. ``display(users)``'s too (attacker pass 30: read by notebook_read)."""
        held, self._held = self._held, ()
        if held and isinstance(cell, int):
            # Newest first, at most what secrets() can return: a cell displaying frames in a loop merged
            # every one's (40,000 for 1,000 tables, each display slower than the last).
            merged = dict.fromkeys((*held, *self._shown_secrets.get(cell, ())))
            self._shown_secrets[cell] = tuple(islice(merged, SHOWN_SECRETS))
        for old in sorted(set(self.shown) | set(self._shown_secrets))[:-SHOWN_KEPT]:
            self.shown.pop(old, None)
            self._shown_secrets.pop(old, None)

    def secrets(self) -> tuple[str, ...]:
        """The secrets the values recent cells showed (their value, or ``display()``) held then: a table
        shown, then masked in place (``users["password"] = …``), is told as shown, raw passwords included."""
        newest_first = (s for cell in sorted(self._shown_secrets, reverse=True) for s in self._shown_secrets[cell])
        # Bounded as a namespace's frames are: each secret is one more form every text is scanned for.
        return tuple(islice(dict.fromkeys(newest_first), SHOWN_SECRETS))

    def saw(self, data: object) -> None:
        png = data.get("image/png") if isinstance(data, dict) else None
        if isinstance(png, str):  # the kernel's form: base64 text
            try:
                png = base64.b64decode(png)
            except ValueError:
                return
        texts, self._texts = self._texts, None
        if isinstance(png, bytes):
            self.images.append(Shown(self._cell(), png, texts))
            if texts is not None:
                remember_figure(png, texts)

    def digest_of(self, cell: int) -> str | None:
        """sha256 of the PNGs cell ``cell`` displayed, in order (None: none kept): what a replay
        compares when the model answered from that cell's image."""
        images = [s.png for s in self.images if s.cell == cell]
        if not images:
            return None
        h = hashlib.sha256()
        for png in images:
            h.update(hashlib.sha256(png).digest())
        return h.hexdigest()

    def of_cell(self, cell: int | None) -> list[Shown]:
        """The images of cell ``cell`` (None: the newest cell that displayed any)."""
        if cell is None:
            cell = self.images[-1].cell if self.images else None
        return [s for s in self.images if s.cell == cell]


def about_images(prompt: str) -> bool:
    return bool(_ABOUT_IMAGES.search(prompt))


def cell_refs(prompt: str) -> list[int]:
    return [int(n) for n in _CELL_REF.findall(prompt)]


def fitted_png(data: bytes) -> tuple[bytes | None, str]:
    """``data`` within ``MAX_SIDE`` and ``MAX_IMAGE_BYTES`` (scaled down if need be), or None and why not."""
    from ...engine.api_facts.images import png_size  # the engine loads with the first prompt, not the kernel

    size = png_size(data)
    if size is None:
        return None, "not a PNG"
    w, h = size
    if max(w, h) <= MAX_SIDE and len(data) <= MAX_IMAGE_BYTES:
        return data, ""
    if w * h > MAX_DECODE_PIXELS:
        return None, f"{w}x{h} px, {len(data) / 1e6:.1f} MB: too large to scale"
    from ..pillow import pillow  # its plugins never from the notebook's folder

    Image = pillow()
    if Image is None:
        return None, f"{w}x{h} px, {len(data) / 1e6:.1f} MB: too large, and Pillow is not installed to scale it"
    image = Image.open(io.BytesIO(data))
    image.thumbnail((MAX_SIDE, MAX_SIDE))
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    if out.tell() > MAX_IMAGE_BYTES:
        return None, f"{len(data) / 1e6:.1f} MB even scaled to {image.width}x{image.height} px"
    return out.getvalue(), ""


def image_blocks(png: bytes, label: str) -> "tuple[TextBlockParam, ImageBlockParam]":
    """A label (read as kernel context, not as the user's words) and the image block."""
    from ...engine.api_facts.images import png_size
    from ...engine.loop.facts import FACTS_TAG

    w, h = png_size(png) or (0, 0)
    return ({"type": "text", "text": f"<{FACTS_TAG} image>{label} ({w}x{h} px)</{FACTS_TAG}>"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": base64.b64encode(png).decode("ascii")}})


def is_figure(value: object) -> "TypeGuard[Figure]":
    """A matplotlib Figure (by its exact type's name: matplotlib is not imported to ask)."""
    kind = type(value)
    return kind.__name__ == "Figure" and (kind.__module__ or "").startswith("matplotlib.")


UNREAD: tuple[str, ...] = ("",)
"""What :func:`drawn_texts` gives for a figure whose texts could not be read (an artist that
raises): told apart by identity, so that such a figure is left out rather than sent unchecked."""


def drawn_texts(fig: object) -> tuple[str, ...]:
    """Every text a figure draws (titles, axis and tick labels, legend, annotations, the cells of a
    table), read after it was drawn (tick labels are made then); :data:`UNREAD` when they cannot be read."""
    try:
        from matplotlib.table import Cell
        from matplotlib.text import Text

        # A table's cell draws its Text without listing it among its children, so findobj(Text)
        # misses it: ``ax.table`` / ``df.plot(table=True)`` of a key went to the model as pixels.
        found = fig.findobj(lambda a: isinstance(a, (Text, Cell)))  # type: ignore[attr-defined]
        return tuple(str((a.get_text() if isinstance(a, Cell) else a).get_text()) for a in found)
    except Exception:  # noqa: BLE001 - any artist's failure: the figure's text is not known
        return UNREAD


def secret_problem(texts: tuple[str, ...] | None, redact: "Callable[[str], str] | None") -> str | None:
    """Why a figure drawing ``texts`` must not be sent as pixels (which cannot be redacted): one of
    its texts holds a secret ``redact`` finds, or its texts could not be read (it was sent
    unchecked). None: nothing found, or not a figure (``texts`` None: nothing to read)."""
    if redact is None or texts is None:
        return None
    if texts is UNREAD:
        return "its text could not be read to check it for a secret"
    return "its text holds a secret" if any(redact(t) != t for t in texts) else None


def _held_secrets(value: object) -> tuple[str, ...]:
    """The credentials ``value`` holds now (a frame's ``password`` column), as the walk of the
    namespace reads them; nothing when it cannot be read (a display must never fail for it)."""
    from ...engine.credentials.kernel_secrets import credential_variable_values

    try:
        return credential_variable_values([("Out", value)])
    except Exception:  # noqa: BLE001 - the walk of an odd value: the display goes on
        return ()


FIGURES_KEPT = 256
"""Figures' PNGs (by digest) whose drawn texts are kept for :func:`shown_image_problem`."""
_FIGURE_TEXTS: collections.OrderedDict[bytes, tuple[str, ...]] = collections.OrderedDict()


def remember_figure(png: bytes, texts: tuple[str, ...]) -> None:
    """Keep the texts a displayed figure drew, by its PNG's digest (the kernel's, for all its cells)."""
    digest = hashlib.sha256(png).digest()
    _FIGURE_TEXTS[digest] = texts
    _FIGURE_TEXTS.move_to_end(digest)
    while len(_FIGURE_TEXTS) > FIGURES_KEPT:
        _FIGURE_TEXTS.popitem(last=False)


def shown_image_problem(data: str, redact: "Callable[[str], str] | None") -> str | None:
    """Why an image a cell's output holds (base64, as the notebook keeps it) is not sent where the
    notebook is read (``notebook_read``, for the model or a ``%agent serve`` client): the figure
    that drew it, displayed in this kernel, holds a secret in its text (:func:`secret_problem`),
    as the kernel context leaves it out. None: nothing known against it."""
    if redact is None or not _FIGURE_TEXTS:
        return None
    try:
        png = base64.b64decode(data)
    except ValueError:
        return None
    texts = _FIGURE_TEXTS.get(hashlib.sha256(png).digest())
    return None if texts is None else secret_problem(texts, redact)


def figure_png(fig: "Figure") -> bytes:
    """A figure object (an ``Out[n]`` value or a variable) drawn to PNG at a bounded resolution."""
    w, h = fig.get_size_inches()
    dpi = min(float(fig.dpi), MAX_SIDE / max(w, h, 0.01))
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=dpi)
    return out.getvalue()


__all__ = ["UNREAD", "DisplayedImages", "about_images", "cell_refs", "drawn_texts", "figure_png",
           "fitted_png", "image_blocks", "is_figure", "remember_figure", "secret_problem", "shown_image_problem"]
