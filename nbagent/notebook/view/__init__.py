"""The live view of an agent run: :class:`AgentView` and its parts (header, text, tools, prompts,
retry), all stock ipywidgets with text/plain and static HTML fallbacks."""

from __future__ import annotations

from .agent_view import AgentView

__all__ = ["AgentView"]
