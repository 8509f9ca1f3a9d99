"""JSON nesting is measured before anything recurses through it: texts by their brackets outside
strings, values by an iterative walk, and both agree on where the bound lies."""

from __future__ import annotations

import json

import pytest

from nbagent.engine.disk.json_depth import MAX_FILE_DEPTH, NestedTooDeepError, depth_exceeds, loads_within, text_depth_exceeds


def _nested(levels: int) -> object:
    value: object = 1
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    return value


@pytest.mark.parametrize("levels", [1, 5, 127, 128, 129, 300])
def test_a_text_and_its_value_are_too_deep_at_the_same_level(levels: int) -> None:
    value = _nested(levels)
    text = json.dumps(value)
    expected = levels > MAX_FILE_DEPTH

    assert text_depth_exceeds(text, MAX_FILE_DEPTH) is expected
    assert text_depth_exceeds(text.encode(), MAX_FILE_DEPTH) is expected
    assert depth_exceeds(value, MAX_FILE_DEPTH) is expected


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"code": "[" * 5_000 + '\\" {{{{', "list": [[1], {"a": "]]]]"}]})

    assert not text_depth_exceeds(text, 3) and text_depth_exceeds(text, 2)
    assert loads_within(text, 3)["list"][1] == {"a": "]]]]"}


def test_a_text_nested_past_the_bound_is_refused_before_it_is_parsed() -> None:
    with pytest.raises(NestedTooDeepError, match="nested deeper than 128 levels") as caught:
        loads_within("[" * 200_000 + "]" * 200_000)

    assert isinstance(caught.value, ValueError)  # every reader's "not JSON" branch takes it


def test_an_unfinished_text_past_the_bound_is_too_deep_and_a_shallow_one_is_not_json() -> None:
    with pytest.raises(NestedTooDeepError):
        loads_within("[" * 5_000)
    with pytest.raises(json.JSONDecodeError):
        loads_within('{"a": [1, 2')
