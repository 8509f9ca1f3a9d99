"""Reading a column name of several words in a prompt ("sales region") costs one search per name
the prompt says, not one per column of a wide frame over the whole (long) prompt."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest

from nbagent.providers.simulated import columns


def test_only_the_names_the_prompt_says_are_searched_for(monkeypatch: pytest.MonkeyPatch) -> None:
    searched: list[str] = []

    def sub(pattern: str, *args: Any, **kwargs: Any) -> str:
        searched.append(pattern)
        return re.sub(pattern, *args, **kwargs)
    monkeypatch.setattr(columns, "re", SimpleNamespace(**{**vars(re), "sub": sub}))
    wide = [f"metric number {i} value" for i in range(200)] + ["sales region"]
    prompt = ("Show the rows where sales region is North and the weather is fine. " * 270)[:18000]
    joined = columns.words_joined(prompt, wide)
    assert joined.startswith("Show the rows where sales_region is North")
    assert len(joined) == len(prompt)
    # branch me8: 201 scans of the 18,000 characters (~90 ms a call, several calls a prompt)
    assert [p for p in searched if "sales" in p] and len([p for p in searched if "metric" in p]) == 0
