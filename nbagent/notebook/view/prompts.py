"""The agent view's permission prompt (the retry countdown and the failed-request card are in
:mod:`.retry`).

Threading rule: click handlers (which may run on the shell-channel thread or a subshell) and the
programmatic gestures (``allow()``, ``deny()``, …) only resolve a
:class:`~nbagent.notebook.waiting.Decision`. Widgets change in ``settle``, which the view calls
from the agent's event loop.
"""

from __future__ import annotations

import ipywidgets as w

from ...display.html import esc
from ...engine.contracts.permissions import Allow, Deny
from .. import waiting
from .render import STYLE, reveal_hidden_words

# No reason typed: the engine then tells the model "The user denied this python call." (a default
# reason here used to read "The user denied this python call: The user denied this tool call.").
DEFAULT_DENY_REASON = ""
PROMPT_CLASS = "nbagent-prompt"
"""The CSS class of a permission prompt's box (the front-end's bridge looks for it)."""
ALLOW_CLASS = "nbagent-allow"
"""The CSS class of a prompt's Allow buttons, which the front-end arms after a delay."""
RUN_CLASS = "nbagent-run"
"""The CSS class of a running agent view's box (the front-end's bridge looks for it)."""


def whole() -> w.Layout:
    """A button's layout in a row that may be narrow: its width is its label's, never less (the row
    wraps: :func:`wrapping_row`)."""
    return w.Layout(width="auto", flex="0 0 auto")


def wrapping_row() -> w.Layout:
    """A row of buttons that wraps when the notebook is narrower than the row, rather than squeeze them.

    The buttons' own margins space the wrapped lines: ``row_gap`` is no Layout trait (never sent to
    the page, and traitlets warns it will raise)."""
    return w.Layout(flex_flow="row wrap")


class PermissionPrompt:
    """Allow / Allow always (this session) / Deny (+ reason), resolved once from any thread."""

    def __init__(self, tool_name: str, tool_input: object, reason_asked: str = "") -> None:
        self.tool_name = tool_name
        self.decision: waiting.Decision[Allow | Deny] = waiting.Decision()
        self.outcome: Allow | Deny | None = None
        self.stopped: str | None = None  # why the prompt closed with no decision (■, Stop): the call never ran
        # Marked as the input box marks them: the reason quotes the path the model wrote, where an
        # unclosed direction override reordered the rest of the line (and a tool name could hide a mark).
        ask = f"Allow <b>{esc(reveal_hidden_words(tool_name)[0])}</b> to run?"
        if reason_asked:
            ask += f' <span style="{STYLE["muted"]}">({esc(reveal_hidden_words(reason_asked)[0])})</span>'
        self._question = w.HTML(ask)
        # Each button as wide as its label, never squeezed (flex 0 0 auto): in a narrow notebook the
        # row squeezed Allow and Deny to their icons while "Allow always", the most permissive answer,
        # stayed the one label a user could read. The row wraps instead.
        self.allow_button = w.Button(description="Allow", button_style="success", icon="check", layout=whole())
        self.always_button = w.Button(description="Allow always (this session)", button_style="info",
                                      layout=whole())
        self.deny_button = w.Button(description="Deny", button_style="danger", icon="times", layout=whole())
        # continuous_update=False: the box syncs its whole value once, on Enter or when it loses
        # focus (pressing Deny blurs it first). Per keystroke, ipywidgets sends one update and
        # holds the rest until the kernel acknowledges it, which a running cell does not do: the
        # kernel got only the first character ("denied: N").
        self.reason = w.Text(placeholder="reason for denying (optional, sent to the model; Enter denies)",
                             continuous_update=False,
                             layout=w.Layout(width="auto", flex="1 1 240px", min_width="200px"))
        self._status = w.HTML()
        self.allow_button.on_click(lambda _b: self.allow())
        self.always_button.on_click(lambda _b: self.allow_always())
        self.deny_button.on_click(lambda _b: self.deny())
        self.widget = w.VBox([
            self._question,
            w.HBox([self.allow_button, self.always_button, self.deny_button, self.reason],
                   layout=wrapping_row()),
            self._status,
        ])
        # The front-end retires a prompt whose kernel restarted or stopped (frontend/src/prompts.ts):
        # the widgets of a dead kernel still look live, and a click on them goes nowhere.
        self.widget.add_class(PROMPT_CLASS)
        # The front-end keeps these inert for a moment after they appear (frontend/src/arming.ts):
        # a click aimed at what was under the cursor before the card came must not allow a call.
        self.allow_button.add_class(ALLOW_CLASS)
        self.always_button.add_class(ALLOW_CLASS)
        # The kernel's fast path resolves these clicks on the shell-channel thread.
        waiting.register_button(self.allow_button.model_id, self.decision, Allow())
        waiting.register_button(self.always_button.model_id, self.decision, Allow(always=True))
        waiting.register_button(self.deny_button.model_id, self.decision, self._deny_value, factory=True)
        waiting.register_text(self.reason.model_id)
        # Enter in the reason box denies: on the fast path (kernel) and on the widget's own route.
        waiting.register_button(self.reason.model_id, self.decision, self._deny_value, factory=True)
        self.reason.on_msg(self._on_reason_msg)

    # Gestures, callable from any thread (like Button.click()).
    def allow(self) -> bool:
        """Allow this call; ``False`` if already decided."""
        return self.decision.resolve(Allow())

    def allow_always(self) -> bool:
        """Allow this tool for the rest of the session; ``False`` if already decided."""
        return self.decision.resolve(Allow(always=True))

    def deny(self, reason: str | None = None) -> bool:
        """Deny this call (``reason`` defaults to the reason field); ``False`` if already decided."""
        return self.decision.resolve(Deny(reason) if reason else self._deny_value())

    def _on_reason_msg(self, _widget: object, content: object, _buffers: object) -> None:
        if waiting.is_submit({"method": "custom", "content": content}) and self.pending:
            waiting.submit_soon(self.reason.model_id)

    def _deny_value(self) -> Deny:
        typed = waiting.observed_text(self.reason.model_id) or self.reason.value
        return Deny(typed.strip() or DEFAULT_DENY_REASON)

    @property
    def pending(self) -> bool:
        return not self.decision.resolved

    def settle(self, outcome: Allow | Deny | None, note: str = "") -> None:
        """Show the outcome and disable the controls (agent coroutine only)."""
        self.outcome = outcome
        if outcome is None:
            self.stopped = note or "aborted"
        waiting.unregister_decision(self.decision)
        waiting.unregister_text(self.reason.model_id)
        for control in (self.allow_button, self.always_button, self.deny_button, self.reason):
            control.disabled = True
        self._status.value = f'<div style="{self._style()}">{esc(self.outcome_text(note))}</div>'

    def _style(self) -> str:
        return STYLE["ok"] if isinstance(self.outcome, Allow) else STYLE["error"]

    def outcome_text(self, note: str = "") -> str:
        o = self.outcome
        if isinstance(o, Allow):
            return "✓ allowed always (this session)" if o.always else "✓ allowed"
        if isinstance(o, Deny):
            return f"✗ denied: {o.reason}" if o.reason else "✗ denied (no reason given)"
        return f"✗ not run: stopped before a decision ({note or self.stopped or 'aborted'})"

    def plain(self) -> str:
        if self.outcome is None and self.stopped is None and self.pending:
            return f"? permission asked: {self.tool_name}"
        return f"permission: {self.outcome_text()}"

    def html(self) -> str:
        return f'<div style="{self._style()}">{esc(self.plain())}</div>'


__all__ = ["DEFAULT_DENY_REASON", "PermissionPrompt"]
