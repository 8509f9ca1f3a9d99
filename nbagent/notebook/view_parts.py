"""The pieces an :class:`~nbagent.notebook.view.AgentView` is made of, each with three faces:
a stock-ipywidgets ``widget``, a ``plain()`` transcript and a static ``html()``.

Widgets are changed only by methods the view calls from the agent's event loop. The interactive
pieces (prompts, retry countdown) are in :mod:`nbagent.notebook.view_prompts`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as w

from .view_render import STYLE, clip, esc, input_html, input_plain, markdown_html, pre

if TYPE_CHECKING:  # pragma: no cover
    from .view_prompts import PermissionPrompt


class TextBlock:
    """Streaming assistant text, rendered by the front-end as Markdown in an ``Output`` widget."""

    def __init__(self) -> None:
        self.text = ""
        self.interrupted = False
        self.widget = w.Output()
        self.pushed = 0  # widget updates sent (coalescing is measured by tests)

    def append(self, text: str) -> None:
        self.text += text

    def push(self) -> None:
        """Send the current text to the widget."""
        self.pushed += 1
        if self.interrupted:
            data = {"text/html": self._interrupted_html(), "text/plain": self.plain()}
        else:
            data = {"text/markdown": self.text, "text/plain": self.text}
        self.widget.outputs = ({"output_type": "display_data", "data": data, "metadata": {}},)

    def interrupt(self, message: str = "") -> None:
        self.interrupted = True
        self.note = message
        self.push()

    def _interrupted_html(self) -> str:
        note = f" — {esc(self.note)}" if getattr(self, "note", "") else ""
        return (f'<div style="{STYLE["interrupted"]}"><div style="white-space:pre-wrap">{esc(self.text)}</div>'
                f"<small><b>⚠ interrupted</b>{note} (not kept in the conversation)</small></div>")

    def plain(self) -> str:
        return f"{self.text}\n  [interrupted]" if self.interrupted else self.text

    def html(self) -> str:
        return self._interrupted_html() if self.interrupted else markdown_html(self.text)


class ThinkingBlock:
    """Extended thinking, folded in an Accordion."""

    def __init__(self) -> None:
        self.text = ""
        self.interrupted = False
        self._body = w.HTML()
        self.widget = w.Accordion(children=[self._body], titles=("Thinking",), selected_index=None)

    def append(self, text: str) -> None:
        self.text += text

    def push(self) -> None:
        style = STYLE["interrupted"] if self.interrupted else STYLE["muted"]
        self._body.value = pre(self.text, style)
        if self.interrupted:
            self.widget.set_title(0, "Thinking (interrupted)")

    def interrupt(self, message: str = "") -> None:
        self.interrupted = True
        self.push()

    def plain(self) -> str:
        return "[thinking] " + self.text.strip().replace("\n", "\n  ")

    def html(self) -> str:
        return f"<details><summary>Thinking</summary>{pre(self.text, STYLE['muted'])}</details>"


class Line:
    """One line of status (truncation, fallback, notice, end of run)."""

    def __init__(self, text: str, *, icon: str = "ℹ", style: str = STYLE["muted"]) -> None:
        self.text, self.icon, self.style = text, icon, style
        self.widget = w.HTML(self.html())

    def plain(self) -> str:
        return f"{self.icon} {self.text}"

    def html(self) -> str:
        return f'<div style="{self.style}">{esc(self.icon)} {esc(self.text)}</div>'


class ToolCard:
    """One tool call: name and status, its input (code highlighted), permission and result."""

    def __init__(self, tool_use_id: str, name: str) -> None:
        self.tool_use_id, self.name = tool_use_id, name
        self.input: Any = None
        self.partial_json = ""
        self.status = "preparing…"
        self.result: str | None = None
        self.is_error = False
        self.duration_s: float | None = None
        self.prompt: PermissionPrompt | None = None
        self.denied: str | None = None
        self._head = w.HTML()
        self._input = w.HTML()
        self._prompt_box = w.VBox()
        self._result = w.HTML()
        self.widget = w.VBox([self._head, self._input, self._prompt_box, self._result],
                             layout=w.Layout(border="1px solid #ddd", padding="2px 8px", margin="4px 0"))
        self._render_head()

    def _render_head(self) -> None:
        self._head.value = f"<b>🔧 {esc(self.name)}</b> <span style='{STYLE['muted']}'>{esc(self.status)}</span>"

    def set_status(self, status: str) -> None:
        self.status = status
        self._render_head()

    def add_partial(self, partial_json: str) -> None:
        self.partial_json += partial_json

    def push_partial(self) -> None:
        self._input.value = pre(clip(self.partial_json, 2000), STYLE["muted"])

    def set_input(self, tool_input: Any) -> None:
        self.input = tool_input
        self._input.value = input_html(self.name, tool_input)
        self.set_status("")

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
        self.set_status(f"{'error' if is_error else 'done'} in {duration_s:.2f} s")

    def plain(self) -> str:
        lines = [f"[tool] {self.name}" + (f" ({self.status})" if self.status else "")]
        if self.input is not None:
            lines.append("  " + input_plain(self.name, self.input).replace("\n", "\n  "))
        if self.prompt is not None:
            lines.append("  " + self.prompt.plain())
        if self.denied is not None and (self.prompt is None or self.prompt.outcome is None):
            lines.append(f"  denied: {self.denied}")
        if self.result is not None:
            tag = "error" if self.is_error else "result"
            lines.append(f"  → {tag}: " + clip(self.result).replace("\n", "\n    "))
        return "\n".join(lines)

    def html(self) -> str:
        parts = [f'<div style="{STYLE["card"]}">', f"<b>🔧 {esc(self.name)}</b> "
                 f'<span style="{STYLE["muted"]}">{esc(self.status)}</span>']
        if self.input is not None:
            parts.append(input_html(self.name, self.input))
        if self.prompt is not None:
            parts.append(self.prompt.html())
        elif self.denied is not None:
            parts.append(f'<div style="{STYLE["error"]}">✗ denied: {esc(self.denied)}</div>')
        if self.result is not None:
            parts.append(pre(clip(self.result), STYLE["error"] if self.is_error else ""))
        parts.append("</div>")
        return "".join(parts)


class TableBlock:
    """A pandas table (the per-request accounting) shown after a turn."""

    def __init__(self, df: Any, title: str) -> None:
        from .tables import html_table

        self.df, self.title = df, title
        self._static = html_table(df)
        self.widget = w.Output()
        self.widget.outputs = ({
            "output_type": "display_data",
            "data": {"text/html": f"<b>{esc(title)}</b>" + _df_html(df), "text/plain": self.plain()},
            "metadata": {},
        },)

    def plain(self) -> str:
        return f"{self.title}\n{self.df.to_string(index=False, na_rep='')}"

    def html(self) -> str:
        return f"<b>{esc(self.title)}</b>{self._static}"


def _df_html(df: Any) -> str:
    try:
        return str(df.to_html(index=False, na_rep="", border=0))
    except Exception:  # pragma: no cover - pandas always has to_html
        return pre(str(df))


__all__ = ["TextBlock", "ThinkingBlock", "Line", "ToolCard", "TableBlock"]
