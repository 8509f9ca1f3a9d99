"""What the code a tool runs ``display()``s, as the notebook ends up showing it.

Helpers of :class:`~nbagent.notebook.executor.ShellExecutor`'s capture: the publisher it swaps in
for the execution, and the plain text of the captured displays once updates are applied.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping, Sequence


def as_shown(displays: Sequence[Mapping[str, Any]]) -> list[str]:
    """The displays' plain text, each ``update_display`` (``handle.update``) replacing the text of
    the displays with its ``display_id`` as the notebook replaces them: a progress display updated
    a thousand times read as its thousand states, first to last (the cell shows only the last).
    An update of an id this run did not display (another cell's) is kept as a line of its own."""
    shown: list[str] = []
    by_id: dict[object, list[int]] = {}
    for d in displays:
        plain = (d.get("data") or {}).get("text/plain")
        plain = plain if isinstance(plain, str) else ""
        display_id = (d.get("transient") or {}).get("display_id")
        if d.get("update") and display_id in by_id:
            for at in by_id[display_id]:
                shown[at] = plain
            continue
        if display_id is not None:
            by_id.setdefault(display_id, []).append(len(shown))
        shown.append(plain)
    return shown


@functools.cache
def publisher_class() -> type:
    """IPython's capturing display publisher, but for ``clear_output``: IPython's prints the
    terminal's erase-line escape (``\\x1b[2K\\r``, twice) into stdout, so the model and a
    ``run_code`` client read escape codes for every frame of a ``clear_output(wait=True)`` loop."""
    from IPython.core.displaypub import CapturingDisplayPublisher

    class Publisher(CapturingDisplayPublisher):  # type: ignore[misc]
        def clear_output(self, wait: bool = False) -> None:
            self.outputs.clear()  # the displays so far, as the notebook clears them

    return Publisher


__all__ = ["as_shown", "publisher_class"]
