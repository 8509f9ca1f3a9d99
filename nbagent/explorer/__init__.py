"""The truncation explorer (``%agent explore``, ``nbagent.explore()``): a teaching tool that replays
a conversation request by request under several context strategies, with the engine's own code.

- :mod:`.simulate`: the replay (pure functions, no widgets); :mod:`.cache`: its prompt-cache model;
- :mod:`.synth`: deterministic synthetic conversations; :mod:`.live`: a live session's history;
- :mod:`.render`: strips, charts and request views as strings; :mod:`.widget`: the ipywidgets view.
"""

from __future__ import annotations

from .live import LiveSource, live_source
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
    "STRATEGIES", "STRATEGY_LABELS", "WINDOW_CHOICES", "ConversationShape", "Explorer", "LiveSource",
    "RequestRecord", "SimulationResult", "Strategy", "explore", "live_source", "placeholder_summary",
    "simulate", "simulate_all", "synthetic_history",
]
