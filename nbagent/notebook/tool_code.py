"""Whether the code IPython transforms now is a tool's: the python tool's, an MCP client's
``run_code`` or ``notebook_run``. Such code is code whatever the notebook's mode: in chat mode the
cell transformer makes a plain cell a prompt, and a client's ``client_value = 6 * 7`` went to
nbagent's model as a question. Its own module: the executor sets it and the cell transformer reads
it, and neither imports the other."""

from __future__ import annotations

import contextlib
from typing import Iterator

_depth = [0]  # > 0 while a tool's code is transformed


@contextlib.contextmanager
def tool_code() -> Iterator[None]:
    """Transform a tool's code inside this block (the executor's ``transform_cell``)."""
    _depth[0] += 1
    try:
        yield
    finally:
        _depth[0] -= 1


def transforming_tool_code() -> bool:
    """Whether a tool's code is being transformed now (see :func:`tool_code`)."""
    return _depth[0] > 0


__all__ = ["tool_code", "transforming_tool_code"]
