"""The truncation explorer (``%agent explore``, ``nbagent.explore()``): a teaching tool that replays
a conversation request by request under several context strategies, with the engine's own code.

- :mod:`.simulate`: the replay (pure functions, no widgets); :mod:`.cache`: its prompt-cache model;
- :mod:`.synth`: deterministic synthetic conversations; :mod:`.live`: a live session's history;
- :mod:`.render`: strips, charts and request views as strings; :mod:`.widget`: the ipywidgets view.

The context-policy explorer (``nbagent.explore_policies()``) compares whole context policies:
:mod:`.datasession` builds the long data-analysis session with planted facts, :mod:`.policies`
replays it through the engine's layers (the bench's numbers) and :mod:`.server_layers` through the
simulated API's server-side edits and compaction, :mod:`.policy_render` draws it and
:mod:`.policy_view` is the view.
"""

from __future__ import annotations

from .datasession import AnalysisShape, data_analysis_session, planted_facts
from .live import LiveSource, live_source
from .policies import (
    DEFAULT_POLICIES,
    PolicyRecord,
    PolicyResult,
    compare_policies,
    comparison_df,
    recall_df,
    simulate_policy,
)
from .policy_view import PolicyExplorer, explore_policies
from .simulate import (
    STRATEGIES,
    STRATEGY_LABELS,
    RequestRecord,
    SimulationResult,
    Strategy,
    placeholder_summary,
    simulate,
    simulate_all,
)
from .synth import ConversationShape, synthetic_history
from .widget import WINDOW_CHOICES, Explorer, explore

__all__ = [
    "DEFAULT_POLICIES", "AnalysisShape", "PolicyExplorer", "PolicyRecord", "PolicyResult", "compare_policies",
    "comparison_df", "data_analysis_session", "explore_policies", "planted_facts", "recall_df", "simulate_policy",
    "STRATEGIES", "STRATEGY_LABELS", "WINDOW_CHOICES", "ConversationShape", "Explorer", "LiveSource",
    "RequestRecord", "SimulationResult", "Strategy", "explore", "live_source", "placeholder_summary",
    "simulate", "simulate_all", "synthetic_history",
]
