"""Counts what issue 37 measures: `Any` per 1,000 lines and `.get("type")` probes.

    python bench/type_counts.py            # nbagent/ and nbagent/engine/
    python bench/type_counts.py --by-folder

`Any` is counted as a name in the code (the `typing.Any` symbol in annotations, casts and imports),
not as a word in comments or docstrings; lines are physical lines of the `.py` files.
"""

from __future__ import annotations

import argparse
import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "nbagent"


@dataclass
class Counts:
    """What one tree of modules holds."""

    lines: int = 0
    any_names: int = 0
    type_probes: int = 0

    @property
    def any_per_1000(self) -> float:
        return 1000 * self.any_names / self.lines if self.lines else 0.0


def _any_names(tree: ast.AST) -> int:
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "Any":
            count += 1
        elif isinstance(node, ast.Attribute) and node.attr == "Any":
            count += 1
        elif isinstance(node, ast.alias) and node.name == "Any":
            count += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_annotation_text(node.value):
            count += node.value.count("Any")
    return count


def _is_annotation_text(text: str) -> bool:
    # String annotations ("dict[str, Any]") hold Any too; prose does not look like this.
    return "Any" in text and ("[" in text or text == "Any") and len(text) < 80 and " " not in text.replace(", ", ",")


def _type_probes(tree: ast.AST) -> int:
    count = 0
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "type"):
            count += 1
    return count


def count(root: Path) -> Counts:
    """Counts every `.py` file under root."""
    total = Counts()
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        total.lines += len(text.splitlines())
        total.any_names += _any_names(tree)
        total.type_probes += _type_probes(tree)
    return total


def _row(label: str, counts: Counts) -> str:
    return (f"{label:<34} {counts.lines:>7} lines  {counts.any_names:>5} Any  "
            f"{counts.any_per_1000:>5.1f} Any/1000  {counts.type_probes:>3} .get(\"type\")")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--by-folder", action="store_true", help="one row per folder as well")
    args = parser.parse_args()
    print(_row("nbagent/", count(PACKAGE)))
    print(_row("nbagent/engine/", count(PACKAGE / "engine")))
    if args.by_folder:
        for folder in sorted(p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__" and p != PACKAGE / "engine"):
            print(_row(str(folder.relative_to(PACKAGE.parent)) + "/", count(folder)))


if __name__ == "__main__":
    main()
