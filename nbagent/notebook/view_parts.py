"""The pieces an :class:`~nbagent.notebook.view.AgentView` is made of, each with three faces:
a stock-ipywidgets ``widget``, a ``plain()`` transcript and a static ``html()``.

Widgets are changed only by methods the view calls from the agent's event loop. The interactive
pieces (prompts, retry countdown) are in :mod:`nbagent.notebook.view_prompts`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as w

from .view_render import STYLE, clip, esc, fmt_tokens, fmt_usd, input_html, input_plain, markdown_html, pre

if TYPE_CHECKING:  # pragma: no cover
    from .view_prompts import PermissionPrompt


class Header:
    """Model, provider, the context gauge (last request's tokens / max allowed / window) and cost."""

    def __init__(self, model: str, provider: str, context_window: int | None, max_allowed: float | None,
                 cost: float) -> None:
        self.model, self.provider, self.cost = model, provider, cost
        self.context_window, self.max_allowed = context_window, max_allowed
        self.context_tokens: int | None = None
        self.estimated = False  # a tiktoken estimate before the request, not the API's usage
        self._title = w.HTML()
        self.gauge = w.IntProgress(min=0, max=max(int(context_window or 1), 1), value=0, layout=w.Layout(width="30%"))
        self._label = w.HTML()
        self._cost = w.HTML()
        self.widget = w.HBox([self._title, self.gauge, self._label, self._cost],
                             layout=w.Layout(align_items="center", grid_gap="8px"))
        self.render()

    def update(self, **changes: Any) -> None:
        for name, value in changes.items():
            setattr(self, name, value)
        self.render()

    def gauge_text(self) -> str:
        tokens = "—" if self.context_tokens is None else ("~" if self.estimated else "") + fmt_tokens(self.context_tokens)
        text = f"context {tokens} / {fmt_tokens(self.max_allowed)} max / {fmt_tokens(self.context_window)} window"
        if self.context_tokens is not None and self.max_allowed:
            text += f" ({100 * self.context_tokens / self.max_allowed:.1f}% of max)"
        return text

    def render(self) -> None:
        self._title.value = f"<b>{esc(self.model or '?')}</b> <span style='{STYLE['muted']}'>{esc(self.provider)}</span>"
        if self.context_window:
            self.gauge.max = int(self.context_window)
        self.gauge.value = min(int(self.context_tokens or 0), self.gauge.max)
        ratio = (self.context_tokens or 0) / self.max_allowed if self.max_allowed else 0.0
        self.gauge.bar_style = "danger" if ratio >= 1 else "warning" if ratio >= 0.8 else "success"
        self._label.value = f"<span style='{STYLE['muted']}'>{esc(self.gauge_text())}</span>"
        self._cost.value = f"<b>{esc(fmt_usd(self.cost))}</b>"

    def plain(self) -> str:
        return f"nbagent · {self.model or '?'} · {self.provider} · {self.gauge_text()} · cost {fmt_usd(self.cost)}"


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
        self.outputs: list[dict[str, Any]] = []  # rich display outputs of a python execution
        self._head = w.HTML()
        self._input = w.HTML()
        self._prompt_box = w.VBox()
        self._result = w.HTML()
        self._rich = w.Output()
        self.widget = w.VBox([self._head, self._input, self._prompt_box, self._result, self._rich],
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

    def add_outputs(self, bundles: list[dict[str, Any]]) -> None:
        """Show rich outputs (``{"data": ..., "metadata": ...}``) the tool's code displayed."""
        new = [{"output_type": "display_data", "data": b.get("data", {}), "metadata": b.get("metadata") or {}}
               for b in bundles if b.get("data")]
        self.outputs.extend(new)
        self._rich.outputs = tuple(self.outputs)

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
        for out in self.outputs:
            text = out["data"].get("text/plain")
            lines.append(f"  [output] {text}" if text else f"  [output: {', '.join(out['data'])}]")
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
        parts.extend(static_output_html(out["data"]) for out in self.outputs)
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


def static_output_html(data: dict[str, Any]) -> str:
    """A display bundle as static HTML: an image, the HTML, or the plain text."""
    for mime in ("image/png", "image/jpeg", "image/gif"):
        if isinstance(data.get(mime), str):
            return f'<img src="data:{mime};base64,{data[mime]}" style="max-width:100%"/>'
    if isinstance(data.get("image/svg+xml"), str):
        return str(data["image/svg+xml"])
    if isinstance(data.get("text/html"), str):
        return str(data["text/html"])
    return pre(str(data.get("text/plain", "")))


def _df_html(df: Any) -> str:
    try:
        return str(df.to_html(index=False, na_rep="", border=0))
    except Exception:  # pragma: no cover - pandas always has to_html
        return pre(str(df))


__all__ = ["Header", "TextBlock", "ThinkingBlock", "Line", "ToolCard", "TableBlock"]
