"""``%agent cost --plot``: a request without a price is no $0 step of the cost line (attacker pass
12 left it: the line summed the priced requests only and said nothing)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from nbagent.display import charts
from tests.display.test_tables import rec


def test_the_cost_line_says_it_leaves_out_requests_without_prices() -> None:
    svg = charts.context_cost_svg([rec(1), rec(2, cost=None), rec(3, cost=None)])
    assert ET.fromstring(svg) is not None
    assert "cumulative cost (USD) *" in svg and "* priced requests only: 2 without prices" in svg
    assert "<polyline" in svg


def test_no_request_priced_draws_no_cost_line_and_no_dollar_axis() -> None:
    svg = charts.context_cost_svg([rec(1, cost=None), rec(2, cost=None)])
    assert "cost unknown: no request had a price" in svg
    assert "<polyline" not in svg and "$" not in svg  # no $0 axis for an unknown


def test_a_priced_session_reads_as_before() -> None:
    svg = charts.context_cost_svg([rec(1), rec(2)])
    assert "cumulative cost (USD)</text>" in svg and "without prices" not in svg and "<polyline" in svg
