"""The demo brain's "load sales.csv" skill: a table file becomes a pandas DataFrame in the kernel.

Reading a CSV with ``read_file`` would put its text into the conversation (500 lines, ~12k tokens)
and leave the user without a DataFrame; a data analyst runs ``pd.read_csv`` into a named variable
and looks at its first rows, then its size.
"""

from __future__ import annotations

import keyword
import re
from pathlib import PurePosixPath
from typing import Collection, Sequence

from .columns import Frame, literal
from .frames import frame_steps
from .step import Call, Step

# "load" asks for data in the kernel; "read"/"open" only when the prompt says it wants a DataFrame,
# so that "summarise data.csv" still reads the text.
_LOAD = re.compile(r"\b(load|import)\b|\b(dataframe|pandas|pd)\b", re.I)
_NAMED = re.compile(r"\b(?:as|called|named|into)\s+(?:a\s+|the\s+)?(?:variable\s+|dataframe\s+)?`?([A-Za-z_]\w*)`?", re.I)
_NOT_NAMES = frozenset({"a", "an", "the", "dataframe", "pandas", "variable", "memory", "it", "table", "frame",
                        "python", "kernel", "notebook"})
_LOADED = re.compile(r"^([A-Za-z_]\w*) = pd\.read_\w+\(", re.M)
_READERS = {".csv": "pd.read_csv({path})", ".tsv": "pd.read_csv({path}, sep=\"\\t\")",
            ".json": "pd.read_json({path})", ".jsonl": "pd.read_json({path}, lines=True)"}


def tables_to_load(prompt: str, files: list[str]) -> list[str]:
    """The files of ``files`` the prompt asks to load as DataFrames."""
    if not _LOAD.search(prompt):
        return []
    return [f for f in files if PurePosixPath(f).suffix.lower() in _READERS]


def variable_for(prompt: str, path: str, count: int, taken: Collection[str] = ()) -> str:
    """The name the prompt gives ("into `df`", "as sales"), else the file's stem (``sales.csv`` ->
    ``sales``): a name the user will recognise. With several files the stem always wins. A stem
    that is one of ``taken`` (the user's variables) or ``pd`` (the cell's own import) becomes
    ``sales_csv`` (``sales_csv_2`` …): "load sales.csv" never replaces a ``sales`` the user built."""
    # never a keyword ("as class", "into `None`"): the code would be a SyntaxError in the user's kernel
    named = [n for n in _NAMED.findall(prompt) if n.lower() not in _NOT_NAMES and not keyword.iskeyword(n)]
    if named and count == 1 and named[0] != "pd":  # the name the user asked for, even over a variable
        return str(named[0])
    stem = re.sub(r"\W+", "_", PurePosixPath(path).stem).strip("_").lower()
    if not stem.isidentifier() or keyword.iskeyword(stem):
        stem = "df"
    if stem not in taken and stem != "pd":
        return stem
    base = f"{stem}_{PurePosixPath(path).suffix.lstrip('.').lower() or 'file'}"
    return next(n for n in (base if k == 1 else f"{base}_{k}" for k in range(1, len(taken) + 2)) if n not in taken)


def loaded_names(calls: Sequence[Call]) -> set[str]:
    """The variables this session's load cells made (``sales = pd.read_csv(…)``): loading the
    file again may replace them (the user's reload), unlike a variable the user made."""
    codes = [str(c.input.get("code", "")) for c in calls if c.tool == "python"]
    return {m for code in codes for m in _LOADED.findall(code)}


def load_steps(prompt: str, path: str, count: int = 1, taken: Collection[str] = ()) -> list[Step]:
    """``name = pd.read_csv(path)`` (or ``read_json``) and a look at its first rows; then its shape."""
    name, stem = variable_for(prompt, path, count, taken), variable_for("", path, 1)
    reader = _READERS[PurePosixPath(path).suffix.lower()].format(path=literal(path))
    code = f"import pandas as pd\n\n{name} = {reader}\n{name}.head()"
    kept = f" (`{stem}` is already one of your variables, left as it is)" if stem in taken and name != stem else ""
    load = Step("python", {"code": code}, f"load {path} into a DataFrame called `{name}` with pandas",
                reads=lambda out: f"Loaded {path} into `{name}`{kept}")
    size = frame_steps(Frame(name), "shape", prompt)
    return [load, *(size if isinstance(size, list) else [])]


__all__ = ["load_steps", "loaded_names", "tables_to_load", "variable_for"]
