"""JSON nesting is measured before anything recurses through it: texts by their brackets outside
strings, values by an iterative walk, and both agree on where the bound lies."""

from __future__ import annotations

import json

import pytest

from nbagent.engine.disk.json_depth import (
    MAX_FILE_DEPTH,
    NestedTooDeepError,
    TooManyValuesError,
    containers_exceed,
    depth_exceeds,
    loads_within,
    text_depth_exceeds,
)


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


def test_an_unterminated_string_of_escaped_quotes_is_measured_in_one_pass() -> None:
    # A received notebook, task file or model tool input of 300 ``[`` then ``"`` and ``\\"`` repeated:
    # the string-skipping regex rescanned the rest from every escaped quote (80 kB: 42 s; 200 kB: a hang).
    # Run in a child with a deadline, so that the old code fails the test rather than stalls the run.
    import subprocess
    import sys

    code = ("from nbagent.engine.disk.json_depth import loads_within\n"
            "try:\n    loads_within('[' * 300 + '\"' + '\\\\\"' * 100_000)\nexcept ValueError as e:\n    print(type(e).__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip() == "NestedTooDeepError", done.stderr


@pytest.mark.parametrize(("text", "opened"), [
    ('["[", {"a": "]{"}]', 2),
    ('["\\\\", [], "\\"[", {}]', 3),  # an escaped backslash ends before the quote; an escaped quote ends nothing
    ('["\\\\\\"[[", []]', 2),
    ('[' + '"x",' * 10 + '[]]', 2),
])
def test_arrays_and_objects_are_counted_outside_strings_whatever_their_escapes(text: str, opened: int) -> None:
    json.loads(text)  # each a JSON text
    assert not containers_exceed(text, opened) and containers_exceed(text, opened - 1)
    assert not containers_exceed(text.encode(), opened) and containers_exceed(text.encode(), opened - 1)
    assert loads_within(text, containers=opened) == json.loads(text)
    with pytest.raises(TooManyValuesError):
        loads_within(text, containers=opened - 1)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-16", "utf-32"])
def test_a_utf16_text_nested_past_the_bound_is_refused_though_its_bytes_hide_quotes(encoding: str) -> None:
    # json.loads(bytes) reads UTF-16/32; U+4E22 is the bytes 22 4E there: a lone quote byte that made
    # a byte-level scan skip the real brackets after it as if they were inside a string.
    levels = 5_000
    text = '["\u4e22", ' + "[" * levels + "]" * levels + ', "x"]'

    with pytest.raises(NestedTooDeepError):
        loads_within(text.encode(encoding))
    assert loads_within('["\u4e22", [[1]], "x"]'.encode(encoding)) == ["\u4e22", [[1]], "x"]
