"""Cline's context manager (``shared/spec/context-manager.md``): what the model sees on the next request.

The parts: ``window`` (sizes and ranges), ``updates`` (stored, timestamped edits of messages),
``request`` (building a request), ``as_sent`` (what a request built now sends of each history
message, for the views), ``file_reads`` (de-duplicating superseded file reads),
``file_state`` (what a file looked like when the model last read it) and ``manager``
(:class:`ContextManager`, the per-session face of the above).
"""

from __future__ import annotations

from .manager import *  # noqa: F403 - the package's face is the manager module's public names
from .manager import __all__  # noqa: F401
