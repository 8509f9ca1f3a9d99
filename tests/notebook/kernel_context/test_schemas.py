"""A frame the prompt is about is described as a data scientist reads it: every column with its
dtype and missing count, levels of categorical and low-cardinality columns, ranges, sample rows,
the index and the memory size; Series and arrays likewise. Bounded whatever the frame."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from nbagent.notebook.kernel_context import guard, protocol
from tests.notebook.kernel_context.support import block_of, context_text, shell_with


@pytest.fixture
def sales() -> pd.DataFrame:
    df = pd.DataFrame({
        "price": np.linspace(1.0, 100.0, 1000),
        "day": pd.date_range("2024-01-01", periods=1000, freq="D"),
        "region": pd.Categorical(["north", "south", "east", "west"] * 250),
        "units": np.arange(1000) % 3,
        "note": [f"n{i}" for i in range(1000)],
    }, index=pd.RangeIndex(1000, name="row"))
    df.loc[df.index % 10 == 0, "price"] = np.nan
    return df


def test_a_named_frame_gets_every_column_with_dtype_missing_levels_and_rows(sales: pd.DataFrame) -> None:
    text, ctx = context_text(shell_with(sales=sales), "which columns of `sales` have missing values?")
    block = block_of(text, "sales")
    assert "  - sales: DataFrame (shape (1000, 5)" in block and "columns ['price', 'day', 'region', 'units', 'note']" in block
    assert "price: float64, 100 missing, 1.0991 .. 100" in block
    assert "day: datetime64" in block and "2024-01-01" in block
    assert "region: category, 0 missing, levels ['east', 'north', 'south', 'west']" in block
    assert "units: int64, 0 missing, 3 distinct: [0, 1, 2]" in block
    assert "note: str, 0 missing, 1,000 distinct" in block or "note: object, 0 missing, 1,000 distinct" in block
    assert "index: RangeIndex named 'row', 1,000 entries, 0 .. 999" in block and "memory" in block
    assert "first 3 rows:" in block
    assert ctx.last is not None and ctx.last.full == ["sales"]


def test_a_frame_the_prompt_does_not_name_gets_one_line_with_its_dtypes(sales: pd.DataFrame) -> None:
    text, ctx = context_text(shell_with(sales=sales, other=1), "what is other?")
    block = block_of(text, "sales")
    assert "\n" not in block and "dtypes" in block and "columns ['price'" in block
    assert ctx.last is not None and "sales" in ctx.last.brief and not ctx.last.full


def test_series_and_arrays_say_missing_values_range_and_first_values() -> None:
    s = pd.Series([1.5, None, 3.0, 4.0], name="score")
    a = np.array([[1.0, np.nan], [3.0, 4.0]])
    text, _ = context_text(shell_with(s=s, a=a), "compare `s` and `a`")
    assert "values: 1 missing, 3 distinct: [1.5, 3, 4]" in block_of(text, "s") and "name 'score'" in block_of(text, "s")
    arr = block_of(text, "a")
    assert "shape (2, 2), dtype float64" in arr and "1 NaN" in arr and "1 .. 4" in arr and "memory 32 B" in arr


def test_a_frame_of_100000_columns_is_described_within_bounds_and_says_what_it_left_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The bound on its text is what is checked; its 0.5 s for one object cut the description short
    # under a full test run with helpers beside it (tests/notebook/kernel_context/test_hostile_objects.py has the time).
    monkeypatch.setattr(protocol, "bounded_call", functools.partial(guard.bounded_call, seconds=60.0))
    wide = pd.DataFrame(np.zeros((2, 100_000)), columns=[f"c{i}" for i in range(100_000)])
    text, ctx = context_text(shell_with(wide=wide), "describe `wide`")
    block = block_of(text, "wide")
    assert "c0: float64, 0 missing" in block and "left out for the budget: ask the python tool" in block
    assert len(text) < 20_000 and ctx.last is not None and ctx.last.seconds < 5


def test_a_frame_of_100000_columns_within_a_big_budget_counts_the_columns_it_does_not_list() -> None:
    wide = pd.DataFrame(np.zeros((2, 100_000)), columns=[f"c{i}" for i in range(100_000)])
    text, _ = context_text(shell_with(wide=wide), "describe `wide`", budget=50_000)
    assert "c99: float64" in text and "c100:" not in text and "99,900 more columns not listed" in text


def test_unhashable_cells_are_said_not_raised() -> None:
    df = pd.DataFrame({"tags": [["a"], ["b", "c"], []], "meta": [{"k": 1}, {}, None]})
    text, _ = context_text(shell_with(df=df), "what is in `df`?")
    block = block_of(text, "df")
    assert "tags: object, 0 missing, unhashable values" in block and "meta: object, 1 missing, unhashable" in block


def test_polars_frames_get_their_schema_where_polars_is_installed() -> None:
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"a": [1, None, 3], "b": ["x", "y", "x"]})
    text, _ = context_text(shell_with(df=df), "`df`?")
    block = block_of(text, "df")
    assert "a: Int64, 1 null" in block and "b: String, 0 null, 2 distinct" in block


def test_a_frame_of_ten_million_rows_is_described_from_its_first_rows_and_says_so() -> None:
    n = 10_000_000
    big = pd.DataFrame({"x": np.zeros(n)}, index=pd.date_range("2020", periods=n, freq="s"))
    text, ctx = context_text(shell_with(big=big), "what is in `big`?")
    block = block_of(text, "big")
    assert "missing, values; missing and values of the first 2,000,000 rows" in block
    assert "DatetimeIndex, 10,000,000 entries" in block and ctx.last is not None and ctx.last.full == ["big"]


def test_a_frames_missing_count_says_which_part_was_read_when_not_all_of_it() -> None:
    # Its NaNs lie past the rows read (and in a column past the 100 listed): the first line, which
    # the model quotes, said "0 columns with missing values" of a frame that has two.
    tall = pd.DataFrame({"x": np.zeros(3_000_000)})
    tall.loc[2_500_000, "x"] = np.nan
    wide = pd.DataFrame(np.zeros((5, 300)), columns=[f"c{i}" for i in range(300)])
    wide.loc[0, "c250"] = np.nan
    small = pd.DataFrame({"x": [1.0, np.nan]})
    text, _ = context_text(shell_with(tall=tall, wide=wide, small=small), "`tall` `wide` `small`", budget=20_000)
    assert "0 columns with missing values (in the first 2,000,000 rows)" in block_of(text, "tall")
    assert "0 columns with missing values (of the first 100 columns)" in block_of(text, "wide")
    assert "(shape (2, 1), 1 column with missing values, columns" in block_of(text, "small")


def test_a_dict_of_frames_lists_each_frame_in_one_line_within_its_indented_block() -> None:
    # pd.read_excel(..., sheet_name=None): each frame's repr cut to 80 characters sent a corner of
    # its table, on lines of their own outside the variable's block.
    sheets = {"jan": pd.DataFrame({"day": pd.date_range("2024-01-01", periods=40), "units": range(40)}),
              "feb": pd.DataFrame({"units": [1, 2]}), "grid": np.arange(12).reshape(3, 4), "small": np.arange(3)}
    text, _ = context_text(shell_with(sheets=sheets), "which sheets are in `sheets`?")
    block = block_of(text, "sheets")
    assert "'jan': <DataFrame shape (40, 2), dtypes 1 datetime64[" in block
    assert "'feb': <DataFrame shape (2, 1)" in block and "'grid': <ndarray shape (3, 4), dtype int64>" in block
    assert "'small': array([0, 1, 2])" in block and len(block.splitlines()) == 2


def test_a_frame_inside_a_container_is_described_without_making_its_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    # Its table's repr was made and thrown away: twenty sheets of 5,000 x 60 took most of the
    # description's 0.5 s.
    made: list[int] = []

    def counted(_self: pd.DataFrame) -> str:
        made.append(1)
        return "table"

    monkeypatch.setattr(pd.DataFrame, "__repr__", counted)
    text, _ = context_text(shell_with(sheets={"a": pd.DataFrame({"x": [1]})}), "what is in `sheets`?")
    assert "'a': <DataFrame shape (1, 1)" in block_of(text, "sheets") and made == []


def test_a_multiindex_range_reads_as_values_not_numpy_reprs() -> None:
    # It read ('a', np.int64(1)) .. ('b', np.int64(2)): numpy 2's scalar repr inside the tuple.
    mi = pd.DataFrame({"v": [1.5, 2.5]}, index=pd.MultiIndex.from_tuples([("a", 1), ("b", 2)]))
    text, _ = context_text(shell_with(mi=mi), "what is `mi`?")
    assert "index: MultiIndex, 2 entries, ('a', 1) .. ('b', 2);" in block_of(text, "mi")


def test_column_labels_that_are_not_strings_are_listed_as_the_literals_that_select_them() -> None:
    # A MultiIndex's columns were listed as "('x', 'p')" and a None label as 'None': strings that
    # df[...] does not find (KeyError), where the column lines below said ('x', 'p') and None.
    wide = pd.DataFrame(np.arange(4).reshape(1, 4), columns=pd.MultiIndex.from_product([["x", "y"], ["p", "q"]]))
    odd = pd.DataFrame({0: [1], None: [2], ("t",): [3], pd.Timestamp("2024-01-01"): [4]})
    text, _ = context_text(shell_with(wide=wide, odd=odd), "what are `wide` and `odd`?")
    assert "columns [('x', 'p'), ('x', 'q'), ('y', 'p'), ('y', 'q')])" in block_of(text, "wide")
    assert "columns [0, None, ('t',), Timestamp('2024-01-01 00:00:00')])" in block_of(text, "odd")


def test_an_ordered_categorical_says_its_levels_are_ordered() -> None:
    # It read "levels ['low', 'mid', 'high']" as an unordered one does: sort_values and < follow the order.
    size = pd.Categorical(["high", "low", "mid"], categories=["low", "mid", "high"], ordered=True)
    text, _ = context_text(shell_with(t=pd.DataFrame({"size": size, "plain": pd.Categorical(["a", "b", "a"])})), "`t`?")
    assert "size: category, 0 missing, ordered levels ['low', 'mid', 'high']" in block_of(text, "t")
    assert "plain: category, 0 missing, levels ['a', 'b']" in block_of(text, "t")


def test_a_long_arrays_values_are_labelled_first_and_last_as_numpy_shows_them() -> None:
    text, _ = context_text(shell_with(a=np.arange(100), b=np.arange(5)), "`a` and `b`?")
    assert "first and last values:\n      [ 0  1  2 ... 97 98 99]" in block_of(text, "a")
    assert "values:\n      [0 1 2 3 4]" in block_of(text, "b")


def test_object_cells_whose_repr_raises_cost_the_sample_not_the_schema() -> None:
    # The whole frame was "[full description left out: raised ValueError: boom]": columns and dtypes too.
    class Raising:
        def __repr__(self) -> str:
            raise ValueError("boom")

    frame = pd.DataFrame({"o": [Raising(), Raising()], "n": [1.5, 2.5]})
    block = block_of(context_text(shell_with(frame=frame), "what is `frame`?")[0], "frame")
    assert "o: object, 0 missing, values not shown (ValueError from a cell)" in block
    assert "n: float64, 0 missing, 2 distinct: [1.5, 2.5]" in block
    assert "first rows: not shown (a cell's repr raised ValueError)" in block and "left out" not in block


def test_a_strided_array_is_not_copied_whole_to_be_described() -> None:
    arr = np.ones((4_000, 4_000))[:, ::2]
    text, _ = context_text(shell_with(arr=arr), "what is `arr`?")
    assert "values: 0 NaN (of the first 2,000,000 values), 1 .. 1, mean 1" in block_of(text, "arr")


class _Sales(pd.DataFrame):
    """A subclass as geopandas' GeoDataFrame is one: described by the DataFrame adapter."""

    @property
    def _constructor(self) -> type:
        return _Sales


def test_a_subclass_of_a_frame_or_array_is_described_as_its_base(sales: pd.DataFrame) -> None:
    # A GeoDataFrame or a user's DataFrame subclass was only its type name: not even its shape.
    text, _ = context_text(shell_with(sub=_Sales(sales), arr=np.arange(6).reshape(2, 3).view(np.matrix)),
                           "which columns of `sub` have missing values?")
    block = block_of(text, "sub")
    assert "  - sub: _Sales (shape (1000, 5)" in block and "price: float64, 100 missing" in block
    assert "arr: matrix (shape (2, 3), dtype int64" in text


def test_a_subclass_that_says_what_it_is_keeps_its_own_llm_repr() -> None:
    class Described(pd.DataFrame):
        def _repr_llm_(self) -> str:
            return "three parcels"

    text, _ = context_text(shell_with(parcels=Described({"a": [1, 2, 3]})), "hello")
    assert "parcels: Described (three parcels)" in text


def test_a_subclass_is_not_described_off_the_main_thread(sales: pd.DataFrame) -> None:
    # Its base's adapter runs the subclass's own head() and __len__: user code, which no timer can
    # bound off the main thread (the review, this session), as _repr_llm_ is not called there.
    from concurrent.futures import ThreadPoolExecutor

    from nbagent.notebook.kernel_context.protocol import describe

    with ThreadPoolExecutor(1) as pool:
        shown = pool.submit(describe, _Sales(sales), True).result()
    assert "not described off the kernel's main thread" in shown.summary and "price" not in str(shown)


def test_a_one_row_frame_reads_first_row_and_1_entry() -> None:
    # It read "1 entries" and "first 1 rows:" (power pass 3).
    text, _ = context_text(shell_with(one=pd.DataFrame({"a": [1.5]}, index=pd.Index(["r"], name="k"))), "what is `one`?")
    block = block_of(text, "one")
    assert "first row:" in block and "first 1 rows" not in block, block
    assert "1 entry" in block and "1 entries" not in block, block


def test_a_multiindex_names_its_levels_and_their_dtypes() -> None:
    # It read "index: MultiIndex, 6 entries, ('a', …) .. ('b', …)": no level name to groupby(level=)
    # or xs by, nor the tz of a datetime level (only the sample rows' header, cut first, named them).
    when = pd.date_range("2024-01-01", periods=3, tz="Europe/Paris")
    idx = pd.MultiIndex.from_product([["a", "b"], when], names=["grp", "when"])
    mi = pd.DataFrame({"x": pd.array([1, None, 3, 4, None, 6], dtype="Int64")}, index=idx)
    text, _ = context_text(shell_with(mi=mi), "what is `mi`?")
    assert f"; levels 'grp' ({idx.levels[0].dtype}), 'when' ({when.dtype}); memory" in block_of(text, "mi")
    s = pd.Series([1.0, 2.0], index=pd.MultiIndex.from_tuples([("a", 1), ("b", 2)]))
    text, _ = context_text(shell_with(s=s), "what is `s`?")
    assert f"; levels None ({s.index.levels[0].dtype}), None (int64); memory" in block_of(text, "s")
