"""The README's first notebook snippet runs as is, and the simulated model answers its question
with the right group, computed by the two one-line cells the README shows, in the user's namespace."""

from __future__ import annotations

import re
from pathlib import Path

from nbagent.notebook import magics as magics_mod

from .test_magics_inprocess import ip, run  # noqa: F401  (fixture)

README = Path(__file__).resolve().parents[2] / "README.md"


def _snippet() -> list[str]:
    section = README.read_text(encoding="utf-8").split("## Use it in a notebook", 1)[1]
    return re.findall(r"```(?:python)?\n(.*?)```", section, re.S)[:2]


def test_readme_snippet_runs_as_is_and_names_the_region_with_the_largest_total(ip):  # noqa: F811
    setup, prompt = _snippet()
    assert prompt.startswith("%%agent")
    run(ip, setup)
    out = run(ip, prompt)
    expected = ip.user_ns["sales"].groupby("region")["revenue"].sum().idxmax()
    assert expected == "north" and f"{expected} has the largest total revenue" in out
    answer = magics_mod.active_magics().session().agent.last_output
    assert answer.startswith("(simulated model) north has the largest total revenue")
    assert "262.00" in out and "0 missing values" in out
    ran = [r.code for r in magics_mod.active_magics().session().executor.history]
    assert ran == ['sales.groupby("region")["revenue"].sum().sort_values(ascending=False)', "sales.isna().sum()"]
    assert not any(n.startswith("_nb_") for n in ip.user_ns)  # the brain's code leaves no names behind
