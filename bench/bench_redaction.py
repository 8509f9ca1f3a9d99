"""What redaction by shape (``sk-ant-…`` keys, bearer tokens; issue 33) costs on the hot paths.

Four measures, each as alternating pairs in one run (values-only redaction, then values + shapes),
CPU time: cleaning a 9 KB tool result of prose, one of code and a 1 MB image block (``Sanitizer.value``,
every tool call), and streaming a 15,000-char reply in 20-char deltas through ``StreamRedactor``
(every delta while a key is set).
Printed: microseconds per call or per delta for both, and the ratio.

Run: ``.venv/bin/python bench/bench_redaction.py``.
"""

from __future__ import annotations

import base64
import os
import random
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, os.environ.get("NBAGENT_SRC", str(Path(__file__).resolve().parents[1])))

from nbagent.engine.loop import sanitize  # noqa: E402
from nbagent.engine.loop.sanitize import Sanitizer, StreamRedactor  # noqa: E402

TEXT = "The measured value changed by 3% between the runs, within the noise; see the table. " * 110
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": TEXT[:1800]}] * 5}
# Code and tables are full of ``_`` and ``gh`` (``high_value``, ``weight_right``), where prose has neither, and a
# plot's base64 holds any three letters (``xox``) every ~260 KB: each shape's marker must still skip them.
CODE = "\n".join(f"high_value_{i} = weight_right[{i}] * github_stats_{i} + light_{i}  # north_region" for i in range(120))
CODE_RESULT = {"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": CODE}]}
IMAGE = base64.b64encode(random.Random(7).randbytes(750_000)).decode()  # a 1 MB plot, as the python tool returns it
IMAGE_RESULT = {"type": "tool_result", "tool_use_id": "toolu_3", "content": [
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": IMAGE}}]}
SECRET = "sk-ant-api03-" + "x" * 95
PAIRS = 7


def _per_call(fn: Callable[[], object], n: int) -> float:
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1e6


def _stream(san: Sanitizer) -> None:
    redactor = StreamRedactor(san)
    for i in range(0, len(TEXT), 20):
        redactor.feed(0, TEXT[i:i + 20])
    redactor.flush(0)


def _measure(shapes: bool, secrets: tuple[str, ...]) -> tuple[float, float, float, float]:
    # The sanitiser's own references to the shape rules (imported from credentials.key_shapes).
    original = {name: getattr(sanitize, name) for name in _SHAPE_RULES}
    if not shapes:  # the "before": values only, and no shape test in value()'s fast path
        off = {"redact_shapes": lambda text: text, "may_hold_key": lambda text: False}
        for name, rule in off.items():
            setattr(sanitize, name, rule)
    try:
        san = Sanitizer(secrets=secrets)
        deltas = len(range(0, len(TEXT), 20))
        return (_per_call(lambda: san.value(RESULT), 2000), _per_call(lambda: _stream(san), 20) / deltas,
                _per_call(lambda: san.value(CODE_RESULT), 1000), _per_call(lambda: san.value(IMAGE_RESULT), 20))
    finally:
        for name, rule in original.items():
            setattr(sanitize, name, rule)


_SHAPE_RULES = ("redact_shapes", "may_hold_key")


def main() -> None:
    for label, secrets in (("no key set", ()), ("a key set", (SECRET,))):
        before, after = [], []
        for _ in range(PAIRS):
            before.append(_measure(False, secrets))
            after.append(_measure(True, secrets))
        b = [min(x[i] for x in before) for i in range(4)]
        a = [min(x[i] for x in after) for i in range(4)]
        print(f"{label}: tool result {b[0]:.1f} -> {a[0]:.1f} us (x{a[0] / b[0]:.2f}); "
              f"stream {b[1]:.2f} -> {a[1]:.2f} us per delta (x{a[1] / b[1]:.2f}); "
              f"9 KB of code {b[2]:.1f} -> {a[2]:.1f} us (x{a[2] / b[2]:.2f}); "
              f"1 MB image {b[3]:.0f} -> {a[3]:.0f} us (x{a[3] / b[3]:.2f})")


if __name__ == "__main__":
    main()
