"""One schema per saved record (issue 23): the frozen dataclasses are what is written and what is
validated on load; a folder written before the change loads and writes back the same bytes; every
event type survives the task folder; unknown keys (a newer version's) are refused, naming the field."""

from __future__ import annotations

import dataclasses
import json
import shutil
import typing
from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts import events as ev
from nbagent.engine.contracts.errors import CorruptFileError
from nbagent.engine.disk.persist import dumps_line
from nbagent.engine.state.store import REQUESTS_FILE, SESSION_FILE, UI_FILE, SessionStore
from nbagent.providers.simulated import SimulatedAPI
from tests.engine.contracts.test_events import SAMPLES
from tests.engine.loop.test_query_support import make_engine

# Written by the code before records were validated through their dataclasses (two turns, a
# truncation, tool calls): the format that must keep loading.
V1 = Path(__file__).parent / "fixtures" / "task_v1"


def _copy(tmp_path: Path) -> Path:
    task = tmp_path / "task"
    shutil.copytree(V1, task)
    return task


def _lines(path: Path) -> list[str]:
    """The JSON items of a log file, one line each, as written."""
    return [line.rstrip(",") for line in path.read_text(encoding="utf-8").splitlines()[1:-1]]


def test_a_folder_of_the_earlier_writer_loads_and_writes_back_the_same_bytes(tmp_path: Path) -> None:
    task = _copy(tmp_path)
    snap = SessionStore(task).load()
    assert snap.notices == [] and len(snap.records) == 6 and len(snap.marks) == 2 and snap.spent is not None
    # Each record, mark and event, written again, is the line it was loaded from.
    assert [dumps_line(r) for r in snap.records] == _lines(task / REQUESTS_FILE)
    assert [dumps_line(e) for e in snap.events] == _lines(task / UI_FILE)
    meta = json.loads((task / SESSION_FILE).read_text(encoding="utf-8"))
    assert [json.loads(dumps_line(m)) for m in snap.marks] == meta["marks"]
    # Fields a later version added (a mark's notes) are written only when set.
    assert json.dumps([{k: v for k, v in dataclasses.asdict(m).items() if not (k == "notes" and v is None)}
                       for m in snap.marks]) == json.dumps(meta["marks"])


def test_a_session_resumed_from_the_earlier_folder_keeps_its_files(tmp_path: Path) -> None:
    task = _copy(tmp_path)
    before = {p.name: p.read_bytes() for p in task.iterdir()}
    engine = make_engine(SimulatedAPI([]), tmp_path, resume=True)
    assert engine.session.turn == 2 and len(engine.session.records) == 6
    engine.session.close()
    after = {p.name: p.read_bytes() for p in task.iterdir() if p.name in before}
    assert after == before


def _event_kinds() -> set[str]:
    """Every member of the Event union, read from the union itself."""
    return {cls.__dataclass_fields__["kind"].default for cls in typing.get_args(ev.Event)}


def test_every_event_type_round_trips_through_the_task_folder(tmp_path: Path) -> None:
    # A new event type added to the union without a sample fails here.
    assert {e.kind for e in SAMPLES} == _event_kinds()
    task = tmp_path / "task"
    task.mkdir()
    SessionStore(task).save_events(list(SAMPLES))
    loaded = SessionStore(task).load().events
    assert loaded == SAMPLES
    assert [type(e) for e in loaded] == [type(e) for e in SAMPLES]


def _with(task: Path, name: str, change: Any) -> None:
    path = task / name
    if name == SESSION_FILE:
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(json.dumps(data), encoding="utf-8")
        return
    items = [json.loads(line) for line in _lines(path)]
    change(items)
    path.write_text(json.dumps(items), encoding="utf-8")


@pytest.mark.parametrize("name, change, field", [
    (REQUESTS_FILE, lambda rs: rs[0].update(newer=1), "0.newer"),
    (REQUESTS_FILE, lambda rs: rs[0]["usage"].update(newer=1), "0.usage.newer"),
    (REQUESTS_FILE, lambda rs: rs[0].update(trigger_tokens="many"), "0.trigger_tokens"),
    (REQUESTS_FILE, lambda rs: rs[0]["usage"].update(web_search_requests=-1), "0.usage.web_search_requests"),
    (UI_FILE, lambda es: es[0].update(newer=1), "newer"),
    (SESSION_FILE, lambda m: m["marks"][0].update(newer=1), "marks.0.newer"),
    (SESSION_FILE, lambda m: m.update(newer=1), "newer"),
    (SESSION_FILE, lambda m: m["spent"].update(cost_usd=float("nan")), "spent.cost_usd"),
])
def test_unknown_or_wrong_keys_are_refused_naming_the_field(tmp_path: Path, name: str, change: Any, field: str) -> None:
    task = _copy(tmp_path)
    _with(task, name, change)
    with pytest.raises(CorruptFileError) as info:
        SessionStore(task).load()
    assert Path(info.value.path).name == name and field in str(info.value)


def test_spent_ignores_a_newer_versions_figures(tmp_path: Path) -> None:
    # spent is a running sum load recomputes when it lags: extra figures lose nothing.
    task = _copy(tmp_path)
    _with(task, SESSION_FILE, lambda m: m["spent"].update(newer=1))
    assert SessionStore(task).load().spent is not None


def test_earlier_event_names_still_load() -> None:
    assert ev.event_from_dict({"kind": "turn_completed", "record": None}) == ev.RequestCompleted()
    assert ev.event_from_dict({"kind": "done", "reason": "max_turns"}) == ev.Done(reason="max_requests")
