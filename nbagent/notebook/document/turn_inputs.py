"""What a turn's answer depended on, as saved (signed) beside its transcript: the schema
:class:`~.inputs.TurnWatch` fills while the turn runs live and :mod:`.input_changes` compares at a replay."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject


@dataclass(frozen=True)
class TurnInputs:
    """A turn's inputs, as saved (signed) beside its transcript."""

    read: dict[str, str] = field(default_factory=dict)
    """Variable → content fingerprint (``~`` first: bounded), for variables the agent's code read."""
    shown: dict[str, str] = field(default_factory=dict)
    """Variable → fingerprint of what the model was shown of it."""
    files: dict[str, str] = field(default_factory=dict)
    """File (relative to the notebook's folder, ``/``-separated) → ``size:digest``."""
    cells: dict[str, str] = field(default_factory=dict)
    """Fingerprint of a cell the model had in context → its first line (named when it changed)."""
    cell_ids: dict[str, str] = field(default_factory=dict)
    """Fingerprint of a cell in context → the id of the cell that ran it, where the front-end sent one."""
    unchecked: tuple[str, ...] = ()
    """Variables read that have no fingerprint (objects of other libraries): not compared."""
    left_cells: dict[str, str] = field(default_factory=dict)
    """Id of a cell in context that this turn's own ``notebook_edit`` / ``notebook_run`` changed →
    fingerprint of the text the turn left it with: that text is the turn's work, not a change."""
    left_values: dict[str, str] = field(default_factory=dict)
    """A variable of ``read`` or ``shown`` that the turn's own code changed → its fingerprint (of the
    same kind) as the turn left it: a cell the turn fixed above the agent cell sets it so on Run All.
    A variable of ``read`` the turn's code assigned is here even when it left it as it found it (the
    agent loaded the data again): undefined at the replay, its own code cells below make it again."""
    outputs: dict[str, str] = field(default_factory=dict)
    """Fingerprint of a cell whose ``Out[n]`` the model was told → the content fingerprint of that
    value: the model may answer from a cell's output (``df.describe()``) without running code."""

    images: dict[str, str] = field(default_factory=dict)
    """Fingerprint of a cell whose displayed image the model was sent → digest of its images."""
    made: dict[str, str] = field(default_factory=dict)
    """Tool call id → fingerprint of the code its cell was made with (``""``: not compared), see :mod:`.made_cells`."""
    read_outputs: dict[str, str] = field(default_factory=dict)
    """Id of a cell ``notebook_read`` showed the model → digest of its outputs as read, see :mod:`.read_outputs`."""
    read_sources: dict[str, str] = field(default_factory=dict)
    """Id of a cell ``notebook_read`` showed the model → digest of its text as read (a cell's code
    the answer may rest on, though no recent cell in context shows it)."""

    def to_json(self) -> JSONObject:
        data: JSONObject = {"read": dict(self.read), "shown": dict(self.shown), "files": dict(self.files),
                            "cells": dict(self.cells), "cell_ids": dict(self.cell_ids),
                            "unchecked": list(self.unchecked)}
        for key, left in (("left_cells", self.left_cells), ("left_values", self.left_values),
                          ("outputs", self.outputs), ("images", self.images), ("made", self.made),
                          ("read_outputs", self.read_outputs), ("read_sources", self.read_sources)):
            if left:  # only when there is one, so that a record without them reads as before
                data[key] = dict(left)
        return data

    @classmethod
    def from_json(cls, data: object) -> "TurnInputs":
        """Raises ``ValueError`` for anything but what :meth:`to_json` writes."""
        keys = {"read", "shown", "files", "cells", "cell_ids", "unchecked"}
        optional = {"left_cells", "left_values", "outputs", "images", "made", "read_outputs", "read_sources"}
        if not isinstance(data, dict) or not keys <= set(data) <= keys | optional:
            raise ValueError("not a turn's inputs")
        names = ("read", "shown", "files", "cells", "cell_ids", "left_cells", "left_values", "outputs", "images", "made",
                 "read_outputs", "read_sources")
        maps = [data.get(k, {}) for k in names]
        if not all(isinstance(m, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in m.items())
                   for m in maps):
            raise ValueError("not a turn's inputs")
        if not isinstance(data["unchecked"], list) or not all(isinstance(n, str) for n in data["unchecked"]):
            raise ValueError("not a turn's inputs")
        read, shown, files, cells, cell_ids, left_cells, left_values, outputs, images, made, read_outputs, sources = maps
        return cls(read, shown, files, cells, cell_ids, tuple(data["unchecked"]), left_cells, left_values, outputs,
                   images, made, read_outputs, sources)


__all__ = ["TurnInputs"]
