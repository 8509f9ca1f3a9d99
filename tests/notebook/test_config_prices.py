"""``%config AgentMagics.prices``: a ``%%agent`` user gives a model's prices (as ``Agent(prices=…)``),
and an unpriced model's advice is one line of the agent cell, not a stderr warnings block."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from nbagent.engine.api_facts import cost
from nbagent.notebook import extension
from nbagent.notebook import magics as magics_mod

from .test_magics_inprocess import ip, run, session  # noqa: F401  (ip is a fixture)

ROW = {"context_window": 200000, "max_output": 8192, "input": 1.0, "output": 5.0}


@pytest.fixture
def restore(ip: Any) -> Any:  # noqa: F811
    magics = magics_mod.active_magics()
    yield magics
    magics.prices = {}
    magics.model = "claude-sonnet-5-5"


def test_config_prices_gives_a_model_its_cost(ip: Any, restore: Any) -> None:  # noqa: F811
    # before (fx5): AgentMagics had no prices setting: a %%agent cell's unknown model cost stayed unknown
    run(ip, f'%config AgentMagics.prices = {{"claude-gw-sonnet": {ROW!r}}}')
    run(ip, '%config AgentMagics.model = "claude-gw-sonnet"')
    run(ip, "%%agent\nWhat is 2 * 3?")
    agent = session().agent
    assert "claude-gw-sonnet" in (agent.config.prices or {})
    assert agent.totals.spent_usd > 0
    assert "claude-gw-sonnet" in (restore.new_session().agent.config.prices or {})  # new sessions start with it


def test_a_price_row_the_agent_would_refuse_is_refused_at_once(ip: Any, restore: Any, caplog: Any) -> None:  # noqa: F811
    ip.run_cell('%config AgentMagics.prices = {"claude-gw-sonnet": {"input": 1.0}}')
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("AgentMagics.prices" in e and "refused" in e for e in errors), errors
    assert restore.prices == {}


def test_an_unpriced_models_advice_is_one_line_of_the_cell_not_a_warning(ip: Any, restore: Any,  # noqa: F811
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # before (fx5): a red stderr UnpricedModelWarning block saying a %%agent cell had no setting for prices
    monkeypatch.setattr(cost, "_warned", set())
    run(ip, '%config AgentMagics.model = "claude-nope-9"')
    with warnings.catch_warnings(record=True) as caught:  # the filters %load_ext leaves (pytest resets them)
        extension.load(ip)
        shown = run(ip, "%%agent\nWhat is 2 * 3?") + run(ip, "%%agent\nWhat is 2 * 4?")
    assert shown.count("%config AgentMagics.prices") == 1, shown[-2000:]
    assert not [w for w in caught if issubclass(w.category, cost.UnpricedModelWarning)]


@pytest.mark.parametrize("row", [{"input": 0, "output": 0}, {"input": 3.0, "output": 15.0, "cache_read": 0}])
def test_a_row_may_not_lower_a_known_models_prices(ip: Any, restore: Any, caplog: Any,  # noqa: F811
                                                  row: dict[str, float]) -> None:
    # before (rev-fx5): a received notebook's %config cell made a paid model's spend read $0 (an admin's
    # budget never reached)
    run(ip, '%config AgentMagics.model = "claude-sonnet-5-5"')
    ip.run_cell(f'%config AgentMagics.prices = {{"claude-sonnet-5-5": {row!r}}}')
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("AgentMagics.prices" in e and "below" in e for e in errors), errors
    assert restore.prices == {}
    run(ip, "%%agent\nWhat is 2 * 3?")
    assert session().agent.totals.spent_usd > 0


def test_a_known_models_higher_price_and_an_unknown_models_zero_are_taken(ip: Any, restore: Any) -> None:  # noqa: F811
    """A gateway's surcharge on a known model; a local model that costs nothing."""
    run(ip, '%config AgentMagics.prices = {"claude-sonnet-5-5": {"input": 9.0, "output": 45.0, "cache_read": 0.9, '
            '"cache_write_5m": 11.25, "cache_write_1h": 18.0}, "llama3.1:8b": {"input": 0, "output": 0}}')
    assert set(restore.prices) == {"claude-sonnet-5-5", "llama3.1:8b"}


@pytest.mark.parametrize("price", ["'nan'", "float('inf')", "-1.0", "True"])
def test_a_price_that_is_not_a_number_of_zero_or_more_is_refused(ip: Any, restore: Any, caplog: Any,  # noqa: F811
                                                                 price: str) -> None:
    # before (rev-fx5): 'nan' made every cost NaN, which no budget's comparison ever stopped; -1 subtracted spend
    ip.run_cell(f'%config AgentMagics.prices = {{"claude-gw-sonnet": {{"input": {price}, "output": 5.0}}}}')
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("AgentMagics.prices" in e and "refused" in e for e in errors), errors
    assert restore.prices == {}


def test_a_model_info_row_with_nan_or_negative_prices_is_refused() -> None:
    # before (rev-fx5): a ModelInfo given as a row skipped the plain rows' number check, and NaN < price is False
    from traitlets import TraitError

    from nbagent.engine.api_facts.models import ModelInfo, PriceTier
    from nbagent.notebook.settings import checked_prices

    nan = float("nan")
    for model, tier in (("claude-sonnet-5-5", PriceTier(nan, nan, nan, nan, nan)), ("gw-x", PriceTier(-1, 0, 0, 0, -1))):
        with pytest.raises(TraitError):
            checked_prices({model: ModelInfo(model, 200000, 8192, tier)})
    assert checked_prices({"gw-x": ModelInfo("gw-x", 200000, 8192, PriceTier(0, 0, 0, 0, 0))})


def test_an_unknown_claude_model_may_not_be_priced_below_its_family(ip: Any, restore: Any, caplog: Any) -> None:  # noqa: F811
    # before (rev-fx5): an unknown sonnet (a budget counts it at its family's highest prices without a row) set
    # to 0 by a received notebook's cell read $0, and no budget stopped it
    ip.run_cell('%config AgentMagics.prices = {"claude-sonnet-9-9": {"input": 0, "output": 0}}')
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("AgentMagics.prices" in e and "below" in e for e in errors), errors
    assert restore.prices == {}
