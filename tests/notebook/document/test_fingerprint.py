"""Content fingerprints: equal content gives the same digest, one changed value another; large
values and files are fingerprinted from a sample and say so (``~``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from nbagent.notebook.document import fingerprint as fp_mod
from nbagent.notebook.document.fingerprint import BOUNDED, file_fingerprint, fingerprint, shown_fingerprint


def sales(west: float = 50.0) -> pd.DataFrame:
    return pd.DataFrame({"region": ["north", "south", "west"], "revenue": [262.0, 100.0, west]})


def test_a_frame_with_one_changed_row_has_another_fingerprint():
    assert fingerprint(sales()) == fingerprint(sales())
    assert fingerprint(sales()) != fingerprint(sales(west=871.5))
    assert fingerprint(sales()) != fingerprint(sales().rename(columns={"revenue": "sales"}))
    assert fingerprint(sales()) != fingerprint(sales().astype({"revenue": "float32"}))


def test_a_series_an_index_and_a_frame_of_unhashable_cells_are_fingerprinted():
    assert fingerprint(sales()["revenue"]) != fingerprint(sales(west=1)["revenue"])
    assert fingerprint(pd.Index([1, 2])) != fingerprint(pd.Index([1, 3]))
    lists = pd.DataFrame({"a": [[1, 2], [3]]})
    assert fingerprint(lists) is not None and fingerprint(lists) != fingerprint(pd.DataFrame({"a": [[1, 2], [4]]}))


def test_a_huge_frame_is_fingerprinted_from_a_sample_and_says_so(monkeypatch):
    monkeypatch.setattr(fp_mod, "MAX_ROWS", 1_000)
    monkeypatch.setattr(fp_mod, "SAMPLE_ROWS", 10)
    big = pd.DataFrame({"x": np.arange(5_000)})
    print_ = fingerprint(big)
    assert print_ is not None and print_.startswith(BOUNDED)
    changed = big.copy()
    changed.iloc[0, 0] = -1  # the first rows are in every sample
    assert fingerprint(changed) != print_


def test_arrays_scalars_containers_and_functions():
    a = np.arange(10.0)
    b = a.copy()
    b[3] = 0
    assert fingerprint(a) == fingerprint(np.arange(10.0)) != fingerprint(b)
    assert fingerprint(a) != fingerprint(a.reshape(2, 5))
    assert fingerprint(3) != fingerprint(3.0) and fingerprint("a") != fingerprint("b")
    assert fingerprint({"k": [1, 2]}) == fingerprint({"k": [1, 2]}) != fingerprint({"k": [1, 3]})
    assert fingerprint({1, 2}) == fingerprint({2, 1})

    def f(x):
        return x * 2

    def g(x):
        return x * 3

    assert fingerprint(f) != fingerprint(g)
    assert fingerprint(object()) is None  # not checked: never claimed unchanged
    assert fingerprint([object()]) is None


def test_big_arrays_and_files_are_bounded(monkeypatch, tmp_path):
    monkeypatch.setattr(fp_mod, "MAX_BYTES", 1024)
    monkeypatch.setattr(fp_mod, "SAMPLE_BLOCK", 64)
    assert fingerprint(np.zeros(10_000)).startswith(BOUNDED)
    path = tmp_path / "big.bin"
    path.write_bytes(bytes(4096))
    assert file_fingerprint(path).startswith(f"{BOUNDED}4096:")
    small = tmp_path / "small.csv"
    small.write_text("a,b\n1,2\n")
    assert file_fingerprint(small).startswith("8:") and file_fingerprint(tmp_path / "gone") is None


def test_only_a_regular_file_is_read_and_a_last_symlink_is_not_followed(tmp_path):
    (tmp_path / "link.csv").symlink_to(tmp_path / "small.csv")
    (tmp_path / "small.csv").write_text("a\n")
    # A device is never read: /dev/zero would never end (a FIFO, tested with replays, would block).
    assert file_fingerprint(Path("/dev/null")) is None and file_fingerprint(tmp_path / "link.csv") is None
    assert file_fingerprint(tmp_path / "small.csv") == file_fingerprint(tmp_path.resolve() / "small.csv")


def test_what_the_model_was_shown_changes_with_shape_and_scalar_value_only():
    assert shown_fingerprint(sales()) == shown_fingerprint(sales(west=871.5))  # same shape and columns
    assert shown_fingerprint(sales()) != shown_fingerprint(sales().head(2))
    assert shown_fingerprint(5) != shown_fingerprint(6)


def test_a_subclass_of_a_frame_from_another_library_is_a_frame_too():
    class Geo(pd.DataFrame):
        @property
        def _constructor(self):
            return Geo

    Geo.__module__ = "geopandas.geodataframe"
    assert fingerprint(Geo(sales())) is not None
    assert fingerprint(Geo(sales())) != fingerprint(Geo(sales(west=871.5)))


def test_a_categorical_whose_levels_or_order_changed_and_a_renamed_index_level_are_changes():
    # The kernel context tells "ordered levels ['lo', 'hi']" and the index's level names; the digest
    # read the dtype as "category" and hashed the values and index labels only, so a replay after
    # reorder_categories (sort order, min/max), as_ordered or rename_axis replayed the old answer silently.
    def sizes(categories: list[str], ordered: bool = True) -> pd.DataFrame:
        return pd.DataFrame({"c": pd.Categorical(["lo", "hi"], categories=categories, ordered=ordered)})

    assert fingerprint(sizes(["lo", "hi"])) == fingerprint(sizes(["lo", "hi"]))
    assert fingerprint(sizes(["lo", "hi"])) != fingerprint(sizes(["hi", "lo"]))
    assert fingerprint(sizes(["lo", "hi"])) != fingerprint(sizes(["lo", "hi"], ordered=False))
    assert fingerprint(sizes(["lo", "hi"])) != fingerprint(sizes(["lo", "hi", "mid"]))
    assert fingerprint(sizes(["lo", "hi"])["c"]) != fingerprint(sizes(["hi", "lo"])["c"])
    idx = pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["grp", "n"])
    frame = pd.DataFrame({"v": [1.0, 2.0]}, index=idx)
    assert fingerprint(frame) != fingerprint(frame.rename_axis(["group", "n"]))
    assert fingerprint(sales()) != fingerprint(sales().rename_axis("row"))


def test_a_categorical_with_a_secret_among_its_unused_levels_has_no_fingerprint():
    # The levels now enter the digest: one holding a key must not be checkable offline.
    key = "sk-ant-api03-" + "a" * 40
    frame = pd.DataFrame({"c": pd.Categorical(["x"], categories=["x", key])})
    assert fingerprint(frame, secret=lambda text: key in text) is None


def test_a_frame_without_categoricals_or_index_names_keeps_the_digest_recorded_by_earlier_versions():
    # A notebook recorded before levels and index names entered the digest must not replay as changed.
    assert fingerprint(sales()) == "3b892376b62fbfa29ebad0881210a4da"


def test_a_categorical_with_more_levels_than_rows_read_hashes_a_sample_of_them(monkeypatch):
    # 10 million user ids made categorical: hashing every level took 10 s at each prompt naming the
    # frame (pandas' own hash of the column, 1 s, aside). Levels are sampled as rows are, and said so.
    monkeypatch.setattr(fp_mod, "MAX_ROWS", 1_000)
    monkeypatch.setattr(fp_mod, "SAMPLE_ROWS", 10)
    hashed: list[int] = []
    real = pd.util.hash_pandas_object

    def spy(obj, *args, **kwargs):
        hashed.append(len(obj))
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(pd.util, "hash_pandas_object", spy)
    levels = [f"user-{i:05d}" for i in range(5_000)]
    frame = pd.DataFrame({"user": pd.Categorical(levels[:3], categories=levels)})
    first = fingerprint(frame)
    assert first is not None and first.startswith(BOUNDED)
    assert max(hashed) <= 30
    renamed = frame.copy()
    renamed["user"] = renamed["user"].cat.rename_categories({levels[0]: "user-x"})
    assert fingerprint(renamed) != first
