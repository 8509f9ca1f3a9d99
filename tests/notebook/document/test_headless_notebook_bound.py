"""A headless run (nbclient, papermill) reads the folder's notebooks to find the one holding its agent
cell: a received notebook of millions of ``[]`` (a few hundred kB zipped) is skipped unparsed, with a
line naming it, while real notebooks with heavy outputs are still read."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from nbagent.notebook.document import headless
from nbagent.notebook.document.headless import notebook_with_cell
from tests.soak import SOAK, first_by_default

CELL = "%%agent\nwhat is 2+2?"


def _notebook(cells: list[dict[str, object]]) -> str:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def _code(source: str, outputs: list[object] | None = None) -> dict[str, object]:
    return {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": source, "outputs": outputs or []}


def _bomb(path: Path, arrays: int, cell: str | None = None) -> None:
    """A notebook of ``arrays`` empty arrays (holding the agent cell too, where ``cell`` is given)."""
    agent = json.dumps(_code(cell)) + "," if cell is not None else ""
    path.write_text('{"cells": [' + agent + "[]," * arrays + '[]], "metadata": {}}')


def _map_output(counties: int, points: int) -> dict[str, object]:
    """A plotly choropleth's output as plotly writes it: every coordinate pair an array."""
    rng = random.Random(0)
    features = [{"type": "Feature", "id": str(i), "properties": {}, "geometry": {"type": "Polygon", "coordinates": [
        [[round(rng.uniform(-120, -70), 6), round(rng.uniform(25, 48), 6)] for _ in range(points)]]}}
        for i in range(counties)]
    figure = {"data": [{"type": "choropleth", "geojson": {"type": "FeatureCollection", "features": features}}],
              "layout": {}}
    return {"output_type": "display_data", "metadata": {}, "data": {"application/vnd.plotly.v1+json": figure}}


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    headless._SOURCES.clear()


def test_a_received_notebook_of_millions_of_arrays_is_skipped_unparsed_and_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(headless, "MAX_NOTEBOOK_CONTAINERS", 1_000, raising=False)  # the bomb, scaled down
    (tmp_path / "mine.ipynb").write_text(_notebook([_code(CELL)]))
    _bomb(tmp_path / "x.ipynb", 5_000, cell=CELL)  # a copy of the cell, to make the lookup ambiguous too
    assert notebook_with_cell(tmp_path, CELL) == "mine.ipynb"
    shown = capsys.readouterr().out
    assert "x.ipynb was not read to find this agent cell" in shown and "1,000 JSON arrays and objects" in shown
    assert notebook_with_cell(tmp_path, CELL) == "mine.ipynb"
    assert "x.ipynb" not in capsys.readouterr().out  # said once per version of the file


@pytest.mark.parametrize("maps", first_by_default([1, 4]))
def test_a_notebook_of_map_outputs_is_still_read(tmp_path: Path, maps: int) -> None:
    # A US county map as plotly writes it (a coordinate pair an array): 112,000 arrays and objects in
    # 9.4 MB, the densest real output measured (docs/security.md); four (the soak run's) stay well under.
    cells = [_code(f"fig{i}", [_map_output(3_200, 30)]) for i in range(maps)] + [_code(CELL)]
    (tmp_path / "maps.ipynb").write_text(_notebook(cells))
    assert notebook_with_cell(tmp_path, CELL) == "maps.ipynb"


@SOAK
def test_a_full_size_bracket_bomb_costs_about_a_second_not_half_a_minute(tmp_path: Path) -> None:
    (tmp_path / "mine.ipynb").write_text(_notebook([_code(CELL)]))
    _bomb(tmp_path / "x.ipynb", 20_000_000)  # 60 MB: 31 s and 1.7 GB to parse before the bound
    started = time.perf_counter()
    assert notebook_with_cell(tmp_path, CELL) == "mine.ipynb"
    assert time.perf_counter() - started < 10


@SOAK
def test_a_notebook_of_a_json_display_of_records_is_still_read(tmp_path: Path) -> None:
    # IPython.display.JSON of records: stored as JSON objects, one per 47 bytes (denser than a map):
    # 50 MB (under the 64 MB read) held 1,060,000 and was skipped by a 1,000,000 bound.
    records = [{"id": i, "xy": [i, 1]} for i in range(530_000)]
    output = {"output_type": "display_data", "metadata": {}, "data": {"application/json": records}}
    (tmp_path / "records.ipynb").write_text(_notebook([_code("JSON(records)", [output]), _code(CELL)]))
    assert notebook_with_cell(tmp_path, CELL) == "records.ipynb"
