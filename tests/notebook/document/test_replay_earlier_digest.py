"""A record made before a categorical's levels and the index's names entered a frame's digest (nb23)
still matches the unchanged frame at a replay: a groupby result, whose index is named, read "changed"
at every Run All after the upgrade (``--if-changed fail`` failed CI) until asked again live."""

from __future__ import annotations

from typing import Any

import pandas as pd

from nbagent.notebook.document.input_changes import changes
from nbagent.notebook.document.inputs import TurnWatch

from .test_turn_inputs import ip as ip  # noqa: F401  # the shared in-process shell, left as it was

# What nbagent before nb23 recorded of these frames (main at 5553eb31): pinned, not recomputed.
EARLIER = {"totals": "a8a37bf188cb1570d3d2ef0d957e6830", "grades": "4d48d4ead80b77b40dec271866b9a935"}


def frames() -> dict[str, pd.DataFrame]:
    totals = pd.DataFrame({"region": ["n", "s", "n"], "x": [1, 2, 3]}).groupby("region").sum()
    grades = pd.DataFrame({"c": pd.Categorical(["lo", "hi", "lo"], categories=["lo", "hi"], ordered=True)})
    return {"totals": totals, "grades": grades}


def recorded(ip: Any, root: Any) -> Any:
    watch = TurnWatch(ip, root, None)
    watch.told_in_full(tuple(EARLIER))
    return watch.inputs()


def test_a_frame_recorded_by_an_earlier_version_is_unchanged_at_the_replay(ip, tmp_path):
    ip.user_ns.update(frames())
    inputs = recorded(ip, tmp_path)
    inputs.read.update(EARLIER)
    assert changes(inputs, ip, tmp_path) == []
    ip.user_ns["totals"] = ip.user_ns["totals"] * 2
    assert changes(inputs, ip, tmp_path) == ["`totals`"]


def test_a_frame_recorded_now_still_reads_a_reordering_of_its_levels_as_a_change(ip, tmp_path):
    ip.user_ns.update(frames())
    inputs = recorded(ip, tmp_path)
    assert changes(inputs, ip, tmp_path) == []
    grades = ip.user_ns["grades"]
    grades["c"] = grades["c"].cat.reorder_categories(["hi", "lo"])
    ip.user_ns["totals"] = ip.user_ns["totals"].rename_axis("area")
    assert changes(inputs, ip, tmp_path) == ["`totals`", "`grades`"]
