"""The offline model on sorts of a live DataFrame: several keys ("then by"), the first rows only
("the top 3"), "oldest first" read by what the column holds, and "the top 3 rows by revenue" as
rows, not a group called "rows"; the frame itself never changed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from .test_simulated_rule_code import agent_with, codes_and_answer

PEOPLE = pd.DataFrame({
    "name": ["ann", "bob", "cy", "dee", "eve", "fay"],
    "team": ["red", "blue", "red", "green", "blue", "red"],
    "age": [30, 45, 22, 60, 35, 50],
    "joined": pd.to_datetime(["2021-03-01", "2019-06-15", "2023-01-10", "2015-09-30", "2020-11-11", "2018-02-02"]),
    "score": [88.0, 92.5, 75.0, 92.5, 60.0, 81.0],
})


@pytest.mark.parametrize(("prompt", "code"), [
    # main: sales.sort_values("team"), the second key dropped
    ("Sort `people` by team, then by score", 'people.sort_values(["team", "score"])'),
    ("Sort `people` by team, then by score descending", 'people.sort_values(["team", "score"], ascending=[True, False])'),
    ("Sort `people` by score descending and then by name", 'people.sort_values(["score", "name"], ascending=[False, True])'),
    # main: ascending, the youngest first
    ("Sort `people` by age, oldest first", 'people.sort_values("age", ascending=False)'),
    ("Sort `people` by joined, oldest first", 'people.sort_values("joined")'),
    ("Sort `people` by joined, youngest first", 'people.sort_values("joined", ascending=False)'),
])
async def test_a_sort_reads_every_key_and_its_direction(tmp_path: Path, prompt: str, code: str) -> None:
    people = PEOPLE.copy()
    agent = agent_with({"people": people}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    assert codes == [code]
    assert f"({len(PEOPLE)} rows; `people` itself is unchanged)" in answer
    pd.testing.assert_frame_equal(people, PEOPLE)


async def test_sort_then_the_top_three_shows_the_three_largest(tmp_path: Path) -> None:
    agent = agent_with({"people": PEOPLE.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Sort `people` by age and show the top 3")
    # main: the whole frame, smallest first: the "top 3" were the three youngest
    assert codes == ['people.sort_values("age", ascending=False).head(3)']
    shown = answer.split("```")[1]
    assert all(n in shown for n in ("dee", "fay", "bob")) and "cy" not in shown
    assert "the first 3 rows of `people` sorted by age, largest first" in answer


@pytest.mark.parametrize(("prompt", "code"), [
    ("Sort `people` by age and show the first 2", 'people.sort_values("age").head(2)'),
    ("Sort `people` by age and show the bottom 2", 'people.sort_values("age").head(2)'),
    ("Sort `people` by age and show the last 2", 'people.sort_values("age").tail(2)'),
    ("Sort `people` by age ascending and show the top 2", 'people.sort_values("age").head(2)'),
])
async def test_the_rows_asked_of_a_sort_keep_its_order(tmp_path: Path, prompt: str, code: str) -> None:
    agent = agent_with({"people": PEOPLE.copy()}, tmp_path)
    codes, _ = await codes_and_answer(agent, prompt)
    assert codes == [code]


async def test_the_top_rows_by_a_column_are_rows_not_a_group(tmp_path: Path) -> None:
    agent = agent_with({"people": PEOPLE.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show the top 2 rows of `people` by score")
    # main: "`people` has no row column, so I grouped by name" and the names' totals
    assert codes == ['people.nlargest(2, "score")']
    assert answer.startswith("(simulated model) the 2 rows of `people` with the largest score.")
    shown = answer.split("```")[1]
    assert "bob" in shown and "dee" in shown and "ann" not in shown


async def test_a_then_by_column_the_frame_lacks_is_said(tmp_path: Path) -> None:
    agent = agent_with({"people": PEOPLE.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Sort `people` by team, then by salary")
    assert codes == []  # never sorted by team alone as if that were what was asked
    assert 'I could not tell which column of `people` "then by salary" means.' in answer


@pytest.mark.parametrize(("prompt", "code"), [
    # main: people.sort_values("team"), the second key dropped without a word
    ("Sort `people` by team and score", 'people.sort_values(["team", "score"])'),
    ("Sort `people` by team, age and score, descending", 'people.sort_values(["team", "age", "score"], ascending=False)'),
    ("Sort `people` by team and then by score descending", 'people.sort_values(["team", "score"], ascending=[True, False])'),
])
async def test_keys_listed_after_the_first_are_sorted_by_too(tmp_path: Path, prompt: str, code: str) -> None:
    agent = agent_with({"people": PEOPLE.copy()}, tmp_path)
    codes, _ = await codes_and_answer(agent, prompt)
    assert codes == [code]


async def test_a_word_after_and_that_names_no_column_is_no_key(tmp_path: Path) -> None:
    agent = agent_with({"people": PEOPLE.copy()}, tmp_path)
    codes, _ = await codes_and_answer(agent, "Sort `people` by age and show the top 2")
    assert codes == ['people.sort_values("age", ascending=False).head(2)']


async def test_the_top_rows_named_by_the_frames_own_name_are_rows(tmp_path: Path) -> None:
    agent = agent_with({"people": PEOPLE.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Show the top 2 people by score in `people`")
    # main: people.groupby("name")["score"].sum().nlargest(2), a group of each person's one row
    assert codes == ['people.nlargest(2, "score")']
    assert answer.startswith("(simulated model) the 2 rows of `people` with the largest score.")


@pytest.mark.parametrize(("prompt", "code"), [
    # me5 before the fix: ascending, the 2 smallest (main: the largest, the second key dropped)
    ("Sort `people` by score and age, then show the top 2", 'people.sort_values(["score", "age"], ascending=False).head(2)'),
    ("Sort `people` by score, then by age, and show the bottom 2", 'people.sort_values(["score", "age"]).head(2)'),
    ("Sort `people` by score and age and show the first 2", 'people.sort_values(["score", "age"]).head(2)'),
])
async def test_the_top_rows_of_a_sort_by_several_keys_are_the_largest(tmp_path: Path, prompt: str, code: str) -> None:
    agent = agent_with({"people": PEOPLE.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, prompt)
    assert codes == [code]
    if "top" in prompt:
        top = PEOPLE.sort_values(["score", "age"], ascending=False).head(2)
        assert "the first 2 rows of `people` sorted by score, largest first, then age, largest first" in answer
        assert list(top["name"]) == ["dee", "bob"]


async def test_a_key_listed_after_the_first_keys_direction_is_sorted_by_too(tmp_path: Path) -> None:
    agent = agent_with({"people": PEOPLE.copy()}, tmp_path)
    codes, answer = await codes_and_answer(agent, "Sort `people` by score, largest first, and name")
    # main: people.sort_values("score", ascending=False): the tie of bob and dee left in the frame's order
    assert codes == ['people.sort_values(["score", "name"], ascending=[False, True])']
    shown = answer.split("```")[1]
    names = [n for n in PEOPLE.sort_values(["score", "name"], ascending=[False, True])["name"]]
    assert [shown.index(f" {n} ") for n in names] == sorted(shown.index(f" {n} ") for n in names)
