"""The secrets a tool's output quotes in its tracebacks: a traceback prints the source lines of the
modules the code went through (``connect(host="db", password="…")`` in your helper module), so the
literals those lines name as credentials are secrets for that output, by the rule the cells' own
code follows (:func:`~.kernel_secrets.code_secrets`)."""

from __future__ import annotations

import dataclasses
import re
from typing import Mapping

from ..credentials.kernel_secrets import code_secrets
from .sanitize import Sanitizer

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_FRAME = re.compile(r'File "[^"\n]{0,4096}", line \d{1,9}|File \S{1,4096}:\d{1,9}|\.py:\d{1,9}: in ')
"""A traceback's frame line: Python's (``File "m.py", line 5, in f``, under any prefix: a log's, an
exception group's ``|``), IPython's (``File /m.py:5, in f()``) and pytest's (``m.py:5: in f``)."""
CONTEXT_LINES = 6
"""Lines read around a frame line where the source is shown as context (IPython below it, pytest
above it); Python's own traceback quotes one line under it."""
QUOTED_CHARS = 150_000
"""Characters of distinct quoted lines read from one output: under the cells' rule's own bound, so
a deep recursion or a long output never switches the check off."""


def with_quoted_literals(sanitizer: Sanitizer, content: object) -> Sanitizer:
    """``sanitizer`` with the literals named as credentials (the cells' rule: ``password="…"``, a
    connection string's password) in the source lines that ``content``'s tracebacks quote: the
    lines of the modules the model's code went through, whether the code failed with it or printed
    it (``traceback.print_exc()``, ``logging.exception``, a JSON log record), however deep or long
    the traceback. The user's cell that failed the same way has them redacted through its last error."""
    text = content if isinstance(content, str) else "\n".join(
        str(b.get("text", "")) for b in content if isinstance(b, Mapping)) if isinstance(content, list) else ""
    if "File " not in text and ".py:" not in text:
        return sanitizer
    # Not through code_secrets' cache: kept for cells read again at every prompt, not one-off outputs.
    new = tuple(s for s in code_secrets.__wrapped__(_quoted_source(text)) if s not in sanitizer.secrets)
    return dataclasses.replace(sanitizer, secrets=sanitizer.secrets + new) if new else sanitizer


def _quoted_source(text: str) -> str:
    """The distinct lines near each frame line of ``text``'s tracebacks (colours taken off, a JSON
    string's escaped line ends and quotes read as such), at most :data:`QUOTED_CHARS`."""
    lines = _ANSI.sub("", text.replace("\\n", "\n").replace('\\"', '"')).splitlines()
    kept: dict[str, None] = {}
    size = 0
    for i, line in enumerate(lines):
        if ("File " not in line and ".py:" not in line) or not (frame := _FRAME.search(line)):
            continue
        python = frame.group(0).startswith('File "')
        near = lines[i + 1:i + 2] if python else lines[i + 1:i + 1 + CONTEXT_LINES] + lines[max(0, i - CONTEXT_LINES):i]
        for quoted in near:
            if quoted not in kept and size + len(quoted) <= QUOTED_CHARS:
                kept[quoted] = None
                size += len(quoted) + 1
    return "\n".join(kept)


__all__ = ["CONTEXT_LINES", "QUOTED_CHARS", "with_quoted_literals"]
