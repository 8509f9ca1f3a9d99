"""nbagent: an LLM coding/data agent loop inside Jupyter.

``%load_ext nbagent`` registers the ``%%agent`` / ``%agent`` magics; ``nbagent.Agent`` drives the
same loop from a plain script.
"""

from __future__ import annotations

__version__ = "0.1.0"
