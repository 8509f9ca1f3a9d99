"""The fleet's command line (``python -m nbagent.batch``)."""

from __future__ import annotations

from nbagent.batch.__main__ import parser


def test_allow_given_twice_allows_both_tools() -> None:
    args = parser().parse_args(["Summarise {item}", "a.csv", "--allow", "python", "--allow", "read_file"])
    assert args.allow == ["python", "read_file"]
    assert parser().parse_args(["p", "a.csv", "--allow", "python", "read_file"]).allow == ["python", "read_file"]
    assert parser().parse_args(["p", "a.csv"]).allow == []
