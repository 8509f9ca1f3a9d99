"""The agent view's tool card: one tool call with its input (code highlighted), permission prompt,
result and the rich outputs its code displayed. Like every part it has a ``widget``, a ``plain()``
transcript and a static ``html()``; the interactive prompts are in :mod:`.prompts` and :mod:`.retry`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence, TypedDict

import ipywidgets as w

from ...display.html import clip, esc, pre
from ...engine.contracts.events import CallPreview
from .diff import preview_html, preview_plain
from .render import STYLE, input_html, input_plain, reveal_hidden
from .safe import safe_display_data, static_output_html

if TYPE_CHECKING:  # pragma: no cover
    from .prompts import PermissionPrompt


class DisplayOutput(TypedDict):
    """A rich output the tool's code displayed, as the card shows it (nbformat ``display_data``)."""

    output_type: str
    data: dict[str, str]
    metadata: dict[str, object]


class ToolCard:
    """One tool call: name and status, its input (code highlighted), permission and result."""

    def __init__(self, tool_use_id: str, name: str) -> None:
        self.tool_use_id, self.name = tool_use_id, name
        self.input: object = None
        self.preview: CallPreview | None = None  # what the call changes, shown instead of its input
        self.partial_json = ""
        self.status = "preparing…"
        self.result: str | None = None
        self.is_error = False
        self.duration_s: float | None = None
        self.started: float | None = None  # when the call could run (after any permission click)
        self.prompt: PermissionPrompt | None = None
        self.denied: str | None = None
        self.outputs: list[DisplayOutput] = []  # rich display outputs of a python execution
        self._head = w.HTML()
        self._input = w.HTML()
        self._prompt_box = w.VBox()
        self._result = w.HTML()
        self._rich = w.Output()
        self.widget = w.VBox([self._head, self._input, self._prompt_box, self._result, self._rich],
                             layout=w.Layout(border="1px solid var(--jp-border-color2, #ddd)", padding="2px 8px", margin="4px 0"))
        self._render_head()

    def _render_head(self) -> None:
        self._head.value = f"<b>🔧 {esc(self._shown_name())}</b> <span style='{STYLE['muted']}'>{esc(self.status)}</span>"

    def _shown_name(self) -> str:
        """The tool's name with hidden characters marked: the model may call a tool by any name."""
        return reveal_hidden(self.name)[0]

    def set_status(self, status: str) -> None:
        self.status = status
        self._render_head()

    def add_partial(self, partial_json: str) -> None:
        self.partial_json += partial_json

    def push_partial(self) -> None:
        self._input.value = pre(clip(self.partial_json, 2000), STYLE["muted"])

    def set_input(self, tool_input: object) -> None:
        self.input = tool_input
        self._input.value = input_html(self.name, tool_input)
        self.set_status("")

    def set_preview(self, preview: CallPreview) -> None:
        """Show what the call will change (a notebook cell's diff, the source a run executes) in
        place of its raw input: what the user is asked to allow."""
        self.preview = preview
        self._input.value = preview_html(preview)

    def _input_html(self) -> str:
        return preview_html(self.preview) if self.preview is not None else input_html(self.name, self.input)

    def _input_plain(self) -> str:
        return preview_plain(self.preview) if self.preview is not None else input_plain(self.name, self.input)

    def attach_prompt(self, prompt: PermissionPrompt) -> None:
        self.prompt = prompt
        self._prompt_box.children = (prompt.widget,)
        self.set_status("waiting for permission")

    def deny(self, reason: str) -> None:
        self.denied = reason
        self.set_status("denied")

    def set_result(self, content: str, is_error: bool, duration_s: float) -> None:
        self.result, self.is_error, self.duration_s = content, is_error, duration_s
        style = STYLE["error"] if is_error else ""
        self._result.value = pre(clip(content), style)
        if self.denied is not None:  # a denial is not an error of the tool: it never ran
            self.set_status("denied")
            return
        self.set_status(f"{'error' if is_error else 'done'} in {duration_s:.2f} s")

    def add_outputs(self, bundles: Sequence[Mapping[str, object]]) -> None:
        """Show rich outputs (``{"data": ..., "metadata": ...}``) the tool's code displayed."""
        # Only what cannot run script reaches the page (see .safe); the transcript keeps the same.
        new: list[DisplayOutput] = [{"output_type": "display_data", "data": safe_display_data(data), "metadata": {}}
                                    for b in bundles if isinstance(data := b.get("data"), dict) and data]
        self.outputs.extend(new)
        self._rich.outputs = tuple(self.outputs)

    def plain(self) -> str:
        lines = [f"[tool] {self.name}" + (f" ({self.status})" if self.status else "")]
        if self.input is not None:
            lines.append("  " + self._input_plain().replace("\n", "\n  "))
        if self.prompt is not None:
            lines.append("  " + self.prompt.plain())
        if self.denied is not None and (self.prompt is None or self.prompt.outcome is None):
            lines.append(f"  denied: {self.denied}")
        if self.result is not None:
            tag = "error" if self.is_error else "result"
            lines.append(f"  → {tag}: " + clip(self.result).replace("\n", "\n    "))
        for out in self.outputs:
            text = out["data"].get("text/plain")
            lines.append(f"  [output] {text}" if text else f"  [output: {', '.join(out['data'])}]")
        return "\n".join(lines)

    def html(self) -> str:
        parts = [f'<div style="{STYLE["card"]}">', f"<b>🔧 {esc(self._shown_name())}</b> "
                 f'<span style="{STYLE["muted"]}">{esc(self.status)}</span>']
        if self.input is not None:
            parts.append(self._input_html())
        if self.prompt is not None:
            parts.append(self.prompt.html())
        elif self.denied is not None:
            parts.append(f'<div style="{STYLE["error"]}">✗ denied: {esc(self.denied)}</div>')
        if self.result is not None:
            parts.append(pre(clip(self.result), STYLE["error"] if self.is_error else ""))
        parts.extend(static_output_html(out["data"]) for out in self.outputs)
        parts.append("</div>")
        return "".join(parts)


__all__ = ["ToolCard", "static_output_html"]
