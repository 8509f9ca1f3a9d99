"""What "code a person would write" means for the offline model's cells, checked on each cell.

- ruff-clean with the project's rule families (E, F, W, I, B, UP), except what a notebook cell
  does on purpose: names defined by earlier cells (F821) and a bare last expression, which the
  notebook displays (B018); lines up to 100 characters;
- at most :data:`MAX_LINES` lines (the longest rule, a plot, needs 7);
- no helper names (``_nb…``), no ``del``, no defensive ``hasattr``/``getattr``/``try``, no lambdas,
  no ``print`` of pre-formatted answers: the value is the cell's last expression.
"""

from __future__ import annotations

import re
import subprocess
import sys

MAX_LINES = 8
_FORBIDDEN = re.compile(r"\b_nb\w*|\bdel\b|\bhasattr\b|\bgetattr\b|\btry\b|\blambda\b|importlib|\bprint\(")
RUFF = [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "E,F,W,I,B,UP", "--ignore", "F821,B018",
        "--line-length", "100", "--target-version", "py310", "--stdin-filename", "cell.py", "-"]


def problems(code: str) -> list[str]:
    """Why ``code`` is not what a person would write (empty: it is)."""
    found = []
    if len(code.splitlines()) > MAX_LINES:
        found.append(f"{len(code.splitlines())} lines (at most {MAX_LINES})")
    found += [f"uses {m.group(0)!r}" for m in _FORBIDDEN.finditer(code)]
    try:
        compile(code, "<cell>", "exec")
    except SyntaxError as exc:
        return [*found, f"does not compile: {exc}"]
    ruff = subprocess.run(RUFF, input=code + "\n", capture_output=True, text=True)  # a cell has no final newline
    if ruff.returncode != 0:
        found.append("ruff: " + ruff.stdout.strip())
    return found


def assert_person_code(codes: list[str]) -> None:
    for code in codes:
        assert not problems(code), (code, problems(code))


__all__ = ["MAX_LINES", "assert_person_code", "problems"]
