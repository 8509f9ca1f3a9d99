"""Pillow, imported by nbagent with its format plugins, never from the notebook's folder.

Its own module (not :mod:`.document.images`, which uses :mod:`.kernel_context.figures`): the figure
scaling of the kernel context needs it too, and importing it from ``images`` closed an import circle.
"""

from __future__ import annotations

from types import ModuleType


def pillow() -> ModuleType | None:
    """``PIL.Image`` with its format plugins imported by nbagent (None: Pillow is not installed).

    Pillow imports every plugin the first time it cannot tell an image's format, and the FlashPix and
    Microsoft Image Composer plugins try ``olefile``: where that is not installed, Python looked for
    it in the notebook's folder, and a received folder's ``olefile.py`` ran as the model read an image
    output of its notebook (no question asked: reading is read-only). Imported here first, never
    from that folder (:mod:`~nbagent.engine.disk.own_imports`)."""
    from ..engine.disk.own_imports import installed_only

    try:
        with installed_only():
            from PIL import Image

            Image.init()
    except ImportError:
        return None
    return Image


__all__ = ["pillow"]
