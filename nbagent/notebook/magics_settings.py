"""The settings of :class:`~.magics.AgentMagics`: its traits (``%config AgentMagics.X = …``), their
checks, and what a change does to the running session (:mod:`.settings`). Kept apart from the magics'
commands: what a notebook can set is read here, in one place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from traitlets import Bool, Dict, Enum, Float, HasTraits, Int, List, Unicode, observe, validate

from ..engine.api_facts.models import DEFAULT_MODEL
from ..engine.contracts.config import (
    DEFAULT_KERNEL_CONTEXT_TOKENS,
    DEFAULT_MAX_BUDGET_USD,
    DEFAULT_MAX_REQUESTS,
    DEFAULT_MAX_SESSION_BUDGET_USD,
)
from ..engine.contracts.context_policy import DEFAULT_POLICY
from . import admin_traits, settings

if TYPE_CHECKING:
    from traitlets.utils.bunch import Bunch

    from .session import NotebookSession


class AgentSettings(HasTraits):
    """The traits of ``AgentMagics`` (a mixin, not a ``Configurable`` of its own: ``%config`` knows them
    as ``AgentMagics.X`` only, where a refused value is dropped, see :mod:`.config_refusal`)."""

    current: "NotebookSession | None"
    """The running session (set by ``AgentMagics``), which a live setting's change reaches."""

    model = Unicode(DEFAULT_MODEL, help="Model id (the running session switches at its next prompt).").tag(config=True)
    provider = Enum(["auto", "simulated", "anthropic"], "auto",
                    help="auto: Anthropic when ANTHROPIC_API_KEY is set, else the offline simulated API "
                         "(new sessions).").tag(config=True)
    max_requests = Int(DEFAULT_MAX_REQUESTS, help="Most API requests per prompt.").tag(config=True)
    max_budget = Float(DEFAULT_MAX_BUDGET_USD, allow_none=True,
                       help="Most USD one prompt may spend (earlier prompts do not count).").tag(config=True)
    max_session_budget = Float(DEFAULT_MAX_SESSION_BUDGET_USD, allow_none=True,
                               help="Stop once the session has spent this (USD), rolled-back requests "
                                    "included.").tag(config=True)
    context_window = Int(None, allow_none=True, help="Override the model's context window.").tag(config=True)
    token_budget = Int(None, allow_none=True, help="Most tokens one prompt may use (any model, priced or not).").tag(
        config=True)
    session_token_budget = Int(None, allow_none=True,
                               help="Stop once the session's requests used this many tokens.").tag(config=True)
    endpoint = Unicode(None, allow_none=True,
                       help="Named endpoint profile of new sessions (see docs/endpoints.md).").tag(config=True)
    endpoints = Dict(help="Endpoint profiles by name, as in .nbagent/endpoints.json (put secrets in *_env "
                          "variables; %agent config shows only the names).").tag(config=True)
    effort = Unicode(None, allow_none=True,
                     help="output_config.effort (low/medium/high/xhigh/max, as the model takes).").tag(config=True)
    context = Unicode(DEFAULT_POLICY, help="Context policy: a preset (layered, cline, summary, server, all) or "
                      "LAYER[:key=value]+LAYER with layers mask, edit, summary, compact, truncate.").tag(config=True)
    notes = Int(0, help="The agent's notes file (notes.md in the task folder, read at the start of each turn): "
                "its bound in characters; 0 is off.").tag(config=True)
    kernel_context_tokens = Int(DEFAULT_KERNEL_CONTEXT_TOKENS,
                                help="Token budget of what each prompt tells the model about the kernel's variables "
                                     "(what does not fit is named, for the model to ask).").tag(config=True)
    web_search = Bool(False, help="Offer Anthropic's web search server tool.").tag(config=True)
    allow = List(Unicode(), help="Tools allowed without asking.").tag(config=True)
    insert_code = Bool(False, help="Insert the agent's last python code as the next cell.").tag(config=True)
    cells = Bool(True, help="Each python call that ran becomes a code cell below the agent cell (with the "
                            "nbagent front-end extension; elsewhere the last code goes into one new cell).").tag(config=True)
    replay_if_changed = Enum(["warn", "live", "fail"], "warn",
                             help="When a replayed agent cell's inputs (variables its code read or the model was "
                                  "shown, files it read, cells in context) changed since its answer was recorded: "
                                  "warn (a line names what changed), live (ask the model again) or fail (the cell "
                                  "fails, for CI).").tag(config=True)
    record = Bool(True, help="Record new sessions under .nbagent/sessions so Restart & Run All replays them "
                             "without asking the model (when task_root is not set).").tag(config=True)
    task_root = Unicode(None, allow_none=True, help="Persist new sessions in folders under this path.").tag(config=True)
    shell_tool = Bool(False, help="Offer new sessions the shell tool (asks before each command).").tag(config=True)
    mcp_json = Bool(True, help="New sessions start the MCP servers of the working folder's .mcp.json (with the "
                               "first live prompt) once you trust it (%agent mcp trust); False reads none "
                               "(python -m nbagent.batch sets it: an item's folder is data, not your project)."
                    ).tag(config=True)
    tokens_per_second = Float(None, allow_none=True,
                              help="Simulated model pacing of new sessions (None: instant).").tag(config=True)
    prices = Dict(help="Your own model table rows by model id, as Agent(prices={...}): prices and windows of a model "
                       "nbagent does not know (see docs/models.md, 'Your own rows').").tag(config=True)
    first_token_latency = Float(0.0, help="Simulated model first-token latency of new sessions, in seconds.").tag(config=True)
    # bypass is left out on purpose: it is only ever set explicitly, per session, never as a default.
    permission_mode = Enum(["default", "accept_edits", "plan"], "default",
                           help="Permission mode (the running session switches at its next prompt; bypass only per "
                                "session).").tag(config=True)

    @observe(*settings.LIVE, *settings.NEW_SESSIONS_ONLY)
    def _setting_changed(self, change: "Bunch") -> None:
        """``%config AgentMagics.X = …``: the running session takes it at its next prompt, or a
        line says it waits for a new session (see :mod:`.settings`)."""
        line = settings.apply_change(self, change["name"], change["old"], change["new"])
        if line:
            print(line)
        document = getattr(self, "_document", None)  # None too while IPython's config loads the traits
        if document is not None and change["name"] in settings.LIVE:  # set after the replayed cells: it wins
            from .document.replayed_options import forget

            forget(document, settings.LIVE[change["name"]])

    @validate("permission_mode", "allow", "max_budget", "web_search")
    def _within_admin_policy(self, proposal: "Bunch") -> object:
        """``%config AgentMagics.X = …`` beyond the admin policy fails at once, naming the admin setting."""
        return admin_traits.checked(proposal["trait"].name, proposal["value"])

    @validate("notes", "model", "prices")
    def _valid_setting(self, proposal: "Bunch") -> object:
        """``%config AgentMagics.notes = -1`` (or ``model = ""``, a price row missing ``output``) fails at
        once, saying why (as ``--notes`` and ``Agent(prices=…)`` do)."""
        return settings.CHECKS[proposal["trait"].name](proposal["value"])

    @validate("endpoints")
    def _no_literal_secrets(self, proposal: "Bunch") -> object:
        """``%config AgentMagics.endpoints`` refuses a literal key or token (``%config`` prints it)."""
        return settings.checked_endpoints(proposal["value"])


__all__ = ["AgentSettings"]
