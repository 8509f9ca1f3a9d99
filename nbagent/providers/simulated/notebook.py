"""The demo brain's notebook-tool rules: "read this notebook" and "fix the cell that …".

Reading calls ``notebook_read`` (page after page while it says more cells are not shown) and
summarises what it saw: how many cells of each kind, the headings, the variables the code
defines, the files it reads, the cells that failed or never ran. Fixing reads the notebook first,
picks the code cell whose error output (or source) matches the prompt, works out the fix the way
``%agent fix`` does (:mod:`.fixes`: a misspelt column or variable, a missing import), then
``notebook_edit`` replaces that cell's source and ``notebook_run`` runs it, so its outputs land in
the cell. Only what the tools returned is used: the cell ids come from ``notebook_read``'s text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from .columns import frame_of, view_with_looks
from .fixes import Failure, fix_plan, frames_to_look_at
from .messages import KernelView
from .step import Call, Plan, Step

ASKS_TO_READ = re.compile(r"\b(read|summari[sz]e|go through|review|what(?:'s| is) in|what does)\b[^.?!]*\bnotebook\b",
                          re.I)
ASKS_TO_FIX_A_CELL = re.compile(r"\b(fix|repair|correct)\w*\b[^.?!]*\bcells?\b", re.I)
MAX_PAGES = 5
# The origin after the type: "by the agent" (made by it), or another author (the user's agent
# prompt, an edit, an MCP client), so a cell's head is always found.
_HEAD = re.compile(r"^\[(\d+)\] id=(\S+) (code|markdown|raw)(?:(, by the agent \(turn [^)]*\))|, [^\n]*)?$", re.M)
_MORE = re.compile(r"\n*\(cells \d+–\d+ not shown: read again with start=(\d+)\)\s*$")
_ERROR = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt)): ?(.*)$", re.M)
_ASSIGNED = re.compile(r"^([A-Za-z_]\w*)\s*=[^=]", re.M)
_FILES = re.compile(r"""\b(?:read_csv|read_json|read_parquet|read_excel|open)\(\s*["']([^"']+)["']""")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|'([^'\n]+)'|`([^`\n]+)`")
_REPLACED = re.compile(r"^Replaced cell (\S+)\.$")


@dataclass(frozen=True)
class ReadCell:
    """A cell as ``notebook_read`` showed it."""

    index: int
    id: str
    kind: str
    by_agent: bool
    source: str
    outputs: str

    def error(self) -> tuple[str, str] | None:
        m = _ERROR.search(self.outputs)
        return (m.group(1).rsplit(".", 1)[-1], m.group(2).strip()) if m else None

    @property
    def label(self) -> str:
        return f"cell [{self.index}] (id {self.id})"


def cells_in(text: str) -> list[ReadCell]:
    """The cells of one ``notebook_read`` output."""
    text = _MORE.sub("", text)
    heads = list(_HEAD.finditer(text))
    cells = []
    for i, m in enumerate(heads):
        body = text[m.end():heads[i + 1].start() if i + 1 < len(heads) else len(text)].strip("\n")
        source, _, outputs = body.partition("\noutputs:\n")
        if body.startswith("outputs:\n"):
            source, outputs = "", body[len("outputs:\n"):]
        cells.append(ReadCell(int(m.group(1)), m.group(2), m.group(3), bool(m.group(4)),
                              "" if source == "(empty)" else source, outputs))
    return cells


def _summarised(output: str) -> str:
    return ""  # the plan's lead summarises every page


def _reads(calls: Sequence[Call]) -> tuple[list[Step], list[ReadCell], bool]:
    """The ``notebook_read`` calls to make (first page, then each page the last one says is not
    shown), the cells read so far, and whether the whole notebook is read."""
    steps = [Step("notebook_read", {}, "read the notebook", reads=_summarised)]
    cells: list[ReadCell] = []
    done = False
    for call in [c for c in calls if c.tool == "notebook_read"][:MAX_PAGES]:
        if call.failed:
            return steps, cells, True
        cells += cells_in(call.output)
        more = _MORE.search(call.output)
        done = more is None
        if more and len(steps) < MAX_PAGES:
            start = int(more.group(1))
            steps.append(Step("notebook_read", {"start": start}, f"read the cells from index {start} on",
                              reads=_summarised))
        elif more:
            done = True
    return steps, cells, done


def _summary(cells: Sequence[ReadCell]) -> str:
    code = [c for c in cells if c.kind == "code"]
    markdown = [c for c in cells if c.kind == "markdown"]
    agent = sum(c.by_agent for c in cells)
    parts = [f"The notebook has {len(cells)} cells ({len(code)} code, {len(markdown)} markdown"
             + (f"; {agent} made by the agent" if agent else "") + ")."]
    headings = [ln.lstrip("# ").strip() for c in markdown for ln in c.source.splitlines() if ln.startswith("#")]
    if headings:
        parts.append("Its headings: " + "; ".join(f'"{h}"' for h in headings[:6]) + ".")
    files = list(dict.fromkeys(f for c in code for f in _FILES.findall(c.source)))
    if files:
        parts.append("It reads " + ", ".join(files) + ".")
    names = list(dict.fromkeys(n for c in code for n in _ASSIGNED.findall(c.source)))
    if names:
        parts.append("Its code defines " + ", ".join(f"`{n}`" for n in names[:10]) + ".")
    failed = [f"{c.label}: {': '.join(c.error() or ())}" for c in code if c.error()]
    if failed:
        parts.append("Failed: " + "; ".join(failed) + " (ask me to fix it).")
    not_run = [f"[{c.index}]" for c in code if c.source.strip() and not c.outputs]
    if not_run:
        parts.append("No output (not run yet, or nothing to show): " + ", ".join(not_run) + ".")
    return " ".join(parts)


def _target(cells: Sequence[ReadCell], prompt: str) -> ReadCell | None:
    """The failed code cell the prompt means: the one whose source or error shares the most of
    the prompt's quoted phrases and words, the first failed one when none does."""
    failed = [c for c in cells if c.kind == "code" and c.error()]
    quoted = [next(g for g in m if g) for m in _QUOTED.findall(prompt)]
    words = {w.lower() for w in re.findall(r"[A-Za-z_]\w{2,}", prompt)} - {"fix", "the", "cell", "that", "which"}

    def score(c: ReadCell) -> tuple[int, int]:
        text = (c.source + "\n" + c.outputs)
        return (sum(q in text for q in quoted), sum(w in text.lower() for w in words))

    return max(failed, key=score) if failed else None


def read_plan(calls: Sequence[Call]) -> Plan:
    """Read every page, then summarise."""
    steps, cells, done = _reads(calls)
    return Plan(steps, lead=_summary(cells) if done else "")


def fix_cell_plan(prompt: str, calls: Sequence[Call], view: KernelView,
                  tools: Mapping[str, object]) -> Plan:
    """Read, pick the failed cell, then replace it with the fix and run it (see the module docstring)."""
    steps, cells, done = _reads(calls)
    if not done:
        return Plan(steps)
    cell = _target(cells, prompt)
    if cell is None:
        return Plan(steps, lead="No code cell of the notebook shows an error, so I found nothing to fix.")
    kind, message = cell.error() or ("Error", "")
    failure = Failure(str(cell.index), kind, message, cell.source, where="C" + cell.label[1:])
    names = frames_to_look_at(failure, view) if "python" in tools else []
    steps += [frame_of(n, view, calls).look() for n in names]  # columns the facts do not list
    if any(not frame_of(n, view, calls).looked for n in names):
        return Plan(steps)
    fix = fix_plan(failure, view_with_looks(view, calls))
    if not fix.code or "notebook_edit" not in tools:
        return Plan(steps, lead=fix.lead)
    edit = Step("notebook_edit", {"action": "replace", "cell_id": cell.id, "source": fix.code},
                f"replace the source of {cell.label} with the corrected one",
                reads=lambda out: f"I replaced the source of {cell.label}")
    edited = next((_REPLACED.match(c.output.strip()) for c in calls if c.tool == "notebook_edit" and not c.failed), None)
    run_id = edited.group(1) if edited else cell.id
    run = Step("notebook_run", {"cell_id": run_id}, f"run {cell.label} so its outputs land in the notebook",
               reads=lambda out: "I ran it, and its outputs are in the cell now")
    return Plan([*steps, edit, run] if "notebook_run" in tools else [*steps, edit], lead=fix.lead, code=fix.code)


__all__ = ["ASKS_TO_FIX_A_CELL", "ASKS_TO_READ", "ReadCell", "cells_in", "fix_cell_plan", "read_plan"]
