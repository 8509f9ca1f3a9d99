"""Which providers share a machine's rate limit budget: same endpoint, same credential."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagent.engine.disk.shared_file import PACING_DIR_ENV
from nbagent.engine.loop.pacing import pacer_for
from nbagent.providers.anthropic import anthropic_provider, simulated_provider
from nbagent.providers.rate_scope import rate_scope


def test_one_key_on_one_endpoint_is_one_scope_and_the_key_is_not_in_its_name() -> None:
    key = "sk-ant-api03-secret-value"
    scope = rate_scope("http://127.0.0.1:9000", key)
    assert scope == rate_scope("http://127.0.0.1:9000/", key) and scope is not None
    assert scope.isalnum() and "secret" not in scope
    assert rate_scope("http://127.0.0.1:9001", key) != scope
    assert rate_scope("http://127.0.0.1:9000", key + "2") != scope
    assert rate_scope("http://127.0.0.1:9000", None) is None and rate_scope(None, "") is None


def test_kernels_of_one_key_share_a_budget_file_the_simulated_api_has_none(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PACING_DIR_ENV, str(tmp_path))
    first = pacer_for(anthropic_provider("sk-ant-one", base_url="http://127.0.0.1:9"))
    second = pacer_for(anthropic_provider("sk-ant-one", base_url="http://127.0.0.1:9"))
    assert first is not second and first.budget is not None and second.budget is not None
    first.pace_delay(100)
    second.pace_delay(100)
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and "sk-ant-one" not in files[0].read_text()
    assert pacer_for(simulated_provider()).budget is None
