"""What the code a tool runs ``display()``s, as the notebook ends up showing it.

Helpers of :class:`~nbagent.notebook.executor.ShellExecutor`'s capture: the publisher it swaps in
for the execution, and the plain text of the captured displays once updates are applied.
"""

from __future__ import annotations

import base64
import functools
from typing import Any, Mapping, Sequence

from ..engine.api_facts.images import IMAGE_MEDIA_TYPES


def shown_bundles(displays: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The displays' MIME bundles as the cell ends up showing them: each ``update_display``
    (``handle.update``) replaces the bundle of the displays with its ``display_id``, as the notebook
    replaces them (a progress display updated a thousand times shows only its last state). An
    update of an id this run did not display (another cell's) is kept as a display of its own."""
    shown: list[Mapping[str, Any]] = []
    by_id: dict[object, list[int]] = {}
    for d in displays:
        data = d.get("data") or {}
        display_id = (d.get("transient") or {}).get("display_id")
        if d.get("update") and display_id in by_id:
            for at in by_id[display_id]:
                shown[at] = data
            continue
        if display_id is not None:
            by_id.setdefault(display_id, []).append(len(shown))
        shown.append(data)
    return shown


def as_shown(displays: Sequence[Mapping[str, Any]]) -> list[str]:
    """The displays' plain text as the cell ends up showing them (see :func:`shown_bundles`)."""
    return [plain if isinstance(plain := bundle.get("text/plain"), str) else "" for bundle in shown_bundles(displays)]


def shown_images(bundles: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    """Each bundle's image as ``(media type, base64)``, in order: the first of the formats the API
    takes that the bundle holds (a figure's PNG), none for a bundle without one."""
    images: list[tuple[str, str]] = []
    for bundle in bundles:
        for media in IMAGE_MEDIA_TYPES:
            data = bundle.get(media)
            if isinstance(data, (bytes, bytearray)):
                data = base64.b64encode(data).decode("ascii")
            if isinstance(data, str):
                images.append((media, data))
                break
    return tuple(images)


@functools.cache
def publisher_class() -> type:
    """IPython's capturing display publisher, but for ``clear_output``: IPython's prints the
    terminal's erase-line escape (``\\x1b[2K\\r``, twice) into stdout, so the model and a
    ``run_code`` client read escape codes for every frame of a ``clear_output(wait=True)`` loop;
    this one clears what was captured so far, as the notebook clears the cell."""
    from IPython.core.displaypub import CapturingDisplayPublisher

    class Publisher(CapturingDisplayPublisher):  # type: ignore[misc]
        streams: tuple[Any, ...] = ()
        """The execution's captured stdout and stderr (each with a ``clear()``)."""

        def clear_output(self, wait: bool = False) -> None:
            # The displays and what was printed so far, as the notebook clears them: a
            # ``clear_output(wait=True); print(i)`` loop read as its thousand lines, the cell shows one.
            self.outputs.clear()
            for stream in self.streams:
                stream.clear()

    return Publisher


__all__ = ["as_shown", "publisher_class", "shown_bundles", "shown_images"]
