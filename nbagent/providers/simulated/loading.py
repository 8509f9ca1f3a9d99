"""The demo brain's "load sales.csv" skill: a table file becomes a pandas DataFrame in the kernel.

Reading a CSV with ``read_file`` would put its text into the conversation (500 lines, ~12k tokens)
and leave the user without a DataFrame; a data analyst runs ``pd.read_csv`` into a named variable.
"""

from __future__ import annotations

import keyword
import re
from pathlib import PurePosixPath

from .step import Step

# "load" asks for data in the kernel; "read"/"open" only when the prompt says it wants a DataFrame,
# so that "summarise data.csv" still reads the text.
_LOAD = re.compile(r"\b(load|import)\b|\b(dataframe|pandas|pd)\b", re.I)
_NAMED = re.compile(r"\b(?:as|called|named|into)\s+(?:a\s+|the\s+)?(?:variable\s+|dataframe\s+)?`?([A-Za-z_]\w*)`?", re.I)
_NOT_NAMES = frozenset({"a", "an", "the", "dataframe", "pandas", "variable", "memory", "it", "table", "frame",
                        "python", "kernel", "notebook"})
_READERS = {".csv": "pd.read_csv({path!r})", ".tsv": "pd.read_csv({path!r}, sep='\\t')",
            ".json": "pd.read_json({path!r})", ".jsonl": "pd.read_json({path!r}, lines=True)"}


def tables_to_load(prompt: str, files: list[str]) -> list[str]:
    """The files of ``files`` the prompt asks to load as DataFrames."""
    if not _LOAD.search(prompt):
        return []
    return [f for f in files if PurePosixPath(f).suffix.lower() in _READERS]


def variable_for(prompt: str, path: str, count: int) -> str:
    """The name the prompt gives ("into `df`", "as sales"), else the file's stem (``sales.csv`` ->
    ``sales``): a name the user will recognise. With several files the stem always wins."""
    named = [n for n in _NAMED.findall(prompt) if n.lower() not in _NOT_NAMES]
    if named and count == 1:
        return named[0]
    stem = re.sub(r"\W+", "_", PurePosixPath(path).stem).strip("_").lower()
    if not stem.isidentifier() or keyword.iskeyword(stem):
        return "df"
    return stem


def load_step(prompt: str, path: str, count: int = 1) -> Step:
    """Run ``pd.read_csv`` (or ``read_json``) into a variable and show its size, columns and head."""
    name = variable_for(prompt, path, count)
    reader = _READERS[PurePosixPath(path).suffix.lower()].format(path=path)
    code = "\n".join((
        "import pandas as pd",
        f"{name} = {reader}",
        f"print('answer: Loaded {path} into `{name}`:', {name}.shape[0], 'rows and', {name}.shape[1], 'columns')",
        f"print('columns:', ', '.join(map(str, {name}.columns)))",
        f"{name}.head()",
    ))
    return Step("python", {"code": code}, f"load {path} into a DataFrame called `{name}` with pandas")


__all__ = ["load_step", "tables_to_load", "variable_for"]
