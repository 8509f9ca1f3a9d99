"""Pure text/HTML helpers for the agent view: highlighting, tool inputs, hidden characters (escaping
and clipping are in :mod:`nbagent.display.html`; numbers, money and ranges in :mod:`nbagent.display.format`).

Nothing here touches widgets, so the static transcript (nbconvert, GitHub, terminals) and the live
widgets are built from the same strings.
"""

from __future__ import annotations

import json
import re
import unicodedata

from ...display import theme
from ...display.format import status_text
from ...display.html import esc

CODE_KEYS = ("code", "command", "source")

# JupyterLab's theme variables, with the light theme's values as fallbacks for static HTML
# (nbconvert, GitHub): fixed colours were unreadable in the dark theme, and the themes' own status
# colours are below 4.5:1 (see :mod:`nbagent.display.theme`).
STYLE = {
    "muted": f"color:{theme.MUTED}",
    "interrupted": f"color:{theme.FAINT}",
    "error": f"color:{theme.ERROR}",
    "ok": f"color:{theme.OK}",
    "warn": f"color:{theme.WARN}",
    "card": f"border:1px solid {theme.BORDER};border-radius:4px;padding:4px 8px;margin:4px 0",
    # The code the user must read before Allow, on the page's own colour: the syntax colours
    # (JupyterLab's, by pygments class) are made for it; on the editor grey numbers read at 4.3:1.
    "code": ("background:var(--jp-layout-color0, #fff);color:var(--jp-content-font-color1, #111);"
             "font-family:var(--jp-code-font-family, monospace);font-size:var(--jp-code-font-size, 13px);"
             "border:1px solid var(--jp-cell-editor-border-color, #ddd);border-radius:3px;padding:4px 6px"),
}


def highlight(code: str, language: str = "python") -> str:
    """Code in a box coloured by the theme (see ``STYLE["code"]``).

    pygments marks tokens with its CSS classes only: its inline colours assume a white page and
    made the code pale grey on white in the dark theme. The box's text and background come from
    JupyterLab's variables, so the code is readable in any theme even where no token is styled.
    """
    from ...engine.disk.own_imports import installed_only

    try:
        # The HTML formatter's module tries ``ctags``: a received folder's ``ctags.py`` ran as the first
        # card showed the model's code, before any click (see :mod:`~nbagent.engine.disk.own_imports`).
        with installed_only():
            from pygments import highlight as _hl
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import get_lexer_by_name

            inner = _hl(code, get_lexer_by_name(language), HtmlFormatter(nowrap=True))
    except Exception:  # pygments missing or an unknown lexer: plain is fine
        inner = esc(code)
    return (f'<pre class="highlight nbagent-code" style="white-space:pre-wrap;margin:2px 0;{STYLE["code"]}">'
            f"{inner}</pre>")


def code_of(tool_name: str, tool_input: object) -> tuple[str, str] | None:
    """``(code, language)`` when the tool input is essentially a piece of code, else ``None``."""
    if not isinstance(tool_input, dict):
        return None
    for key in CODE_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str):
            lang = "bash" if tool_name == "shell" or key == "command" else "python"
            return value, lang
    return None


# Characters that change what code means without showing: bidi controls ("Trojan Source",
# CVE-2021-42574), zero-width characters and the BOM. Shown as visible marks where code is approved.
HIDDEN_CHARS = frozenset("\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                         "\u2060\u2066\u2067\u2068\u2069\ufeff")
# Besides them, every character the page shows as nothing, or as a line break the code does not
# have: control characters but tab and the line ends (a form feed in an indentation resets Python's
# count, so a line shown inside an ``if`` block runs outside it, and the browser draws the form feed
# as nothing), format characters (Unicode Cf: soft hyphen, invisible operators, tag characters),
# the line and paragraph separators, and letters that draw blank but may name a variable (the
# Hangul fillers) or marks that draw nothing (the grapheme joiner, the Mongolian vowel separator, the
# Khmer inherent vowels), and the unassigned characters Unicode says to draw as nothing.
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u034f\u180e\u17b4\u17b5\u2065") | frozenset(map(chr, range(0xFFF0, 0xFFF9)))
# Variation selectors draw nothing after a letter or digit, yet Python reads them as part of a name:
# ``endpoint\ufe00`` is another variable than ``endpoint`` and looks the same (measured in Chromium:
# zero width), so a card could show one assignment win while the code reads the other. Marked
# wherever a name could hold them: after any character that may continue a name once Python has
# normalised it (a letter, digit, ``_``, a combining accent, another selector; ``\w`` missed
# ``cafe\u0301\ufe00``, another variable than ``café`` with no mark), and where they follow nothing
# they could choose a glyph for. After an emoji or symbol (``⚠️``, ``‼️``, ``#️⃣``) they choose its
# glyph and stay, as in a keycap (``1️⃣``: U+20E3 cannot be in a name) and in ``ℹ️``, ``Ⓜ️``, ``™️``,
# which U+FE0F draws as emoji (visibly not the plain letter).
_SELECTOR = re.compile("[\ufe00-\ufe0f\u180b-\u180d\u180f\U000e0100-\U000e01ef]")
_EMOJI_LETTERS = frozenset("\u2139\u24c2\u2122")
# A carriage return ends a line on the page (HTML reads it as a line feed) and for Python, but not
# for the shell: "ls \r# ; curl … | sh" shows a comment on its second line, and sh runs the curl.
# So a lone one is marked; a Windows line end (\r\n) is not.
_SHOWN_CONTROLS = frozenset("\t\n\r")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
_ASCII_HIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)")
_LONE_CR = re.compile(r"\r(?!\n)")
_PLACEHOLDER = "\ue000"  # a private-use character no lexer splits
INPUT_BOX_HEIGHT = "24em"  # a long input scrolls inside its card: all of it is there to read


def is_hidden(char: str) -> bool:
    """Whether ``char`` is shown as ``⟦U+…⟧`` where code is approved (see :data:`HIDDEN_CHARS`)."""
    if char in HIDDEN_CHARS or char in _BLANK:
        return True
    if "\U000e0000" <= char <= "\U000e0fff":  # tags, or unassigned: drawn as nothing (selectors: see above)
        return not _is_selector(char)
    return char not in _SHOWN_CONTROLS and unicodedata.category(char) in _HIDDEN_CATEGORIES


def marked_line(text: object, limit: int = 80) -> str:
    """``text`` as one line to print: at most ``limit`` characters (then ``…``), a newline, a
    terminal escape or a direction mark shown as ``⟦U+202E⟧``, as the cards show them: for strings
    a received file gave (a record's model name could add lines under the real one)."""
    text = str(text)
    cut = text[:limit]
    marked = "".join(c if c.isprintable() and not is_hidden(c) else f"⟦U+{ord(c):04X}⟧" for c in cut)
    return marked + ("…" if len(text) > limit else "")


def _is_selector(char: str) -> bool:
    return _SELECTOR.fullmatch(char) is not None


def _selector_hidden(text: str, i: int) -> bool:
    """Whether the variation selector at ``text[i]`` is marked (see :data:`_SELECTOR`)."""
    before = text[i - 1] if i > 0 else ""
    if text[i] == "\ufe0f" and (before in _EMOJI_LETTERS or text[i + 1:i + 2] == "\u20e3"):
        return False  # an emoji's glyph: ℹ️, or a keycap (1️⃣), which no name can hold
    if not before or ("_" + unicodedata.normalize("NFKC", before)).isidentifier():
        return True
    return unicodedata.category(before)[0] not in "SP"  # a symbol's or emoji's glyph; else it selects nothing


def draws_nothing(char: str) -> bool:
    """Whether ``char`` may draw as nothing wherever it stands (:func:`is_hidden`, or a variation
    selector): what a name shown to tell things apart must not hold."""
    return is_hidden(char) or _is_selector(char)


def _has_hidden(text: str) -> bool:
    if text.isascii():  # the common case: one scan, no lookups
        return _ASCII_HIDDEN.search(text) is not None
    return _LONE_CR.search(text) is not None or any(map(is_hidden, text)) or \
        any(_selector_hidden(text, m.start()) for m in _SELECTOR.finditer(text))


def _hidden_at(text: str, i: int, char: str) -> bool:
    if char == "\r":
        return text[i + 1:i + 2] != "\n"
    if _is_selector(char):
        return _selector_hidden(text, i)
    return is_hidden(char)


def _hidden_flags(text: str) -> list[bool]:
    """Per character of ``text``: is it shown marked (:func:`is_hidden`, a lone ``\r``, or a variation
    selector where a name could hold it)?"""
    return [_hidden_at(text, i, c) for i, c in enumerate(text)]


def reveal_hidden(text: str) -> tuple[str, int]:
    """``text`` with each invisible or direction-changing character shown as ``⟦U+202E⟧``, and
    how many there were."""
    if not _has_hidden(text):
        return text, 0
    flags = _hidden_flags(text)
    marked = "".join(f"⟦U+{ord(c):04X}⟧" if hidden else c for c, hidden in zip(text, flags, strict=True))
    return marked, sum(flags)


ZWNJ = "\u200c"
# Scripts whose spelling uses the zero-width non-joiner inside words (Persian ``گزارش‌ها``, the Indic
# scripts' explicit half forms): between two of their letters it shows, as a break in the joining.
_ZWNJ_SCRIPTS = frozenset({"ARABIC", "SYRIAC", "NKO", "DEVANAGARI", "BENGALI", "GURMUKHI", "GUJARATI", "ORIYA",
                           "TAMIL", "TELUGU", "KANNADA", "MALAYALAM", "SINHALA", "MONGOLIAN"})


def _script_letter(char: str) -> str:
    """The script of a letter or mark that uses the ZWNJ in words ('' for anything else)."""
    if not char or unicodedata.category(char)[0] not in "LM":
        return ""
    script = unicodedata.name(char, "").split(" ", 1)[0]
    return script if script in _ZWNJ_SCRIPTS else ""


# The joining scripts' letters that never join the letter after them (Arabic alef, dal, reh, waw …;
# Syriac alaph, dalath, rish …): after one, a ZWNJ changes nothing drawn, so it hides, as it does
# between two Indic letters with no virama before it (no half form to break). By name prefix: the
# few dual-joining letters it catches too (alef maksura) are marked, the safe side.
_NOT_JOINING_AFTER = tuple(f"{script} LETTER {name}" for script, names in (
    ("ARABIC", "ALEF DAL THAL REH ZAIN WAW JEH DDAL RREH DAHAL DDAHAL DUL HAMZA TEH_MARBUTA YEH_BARREE AE OE U YU "
               "VE KIRGHIZ ROHINGYA_YEH HIGH_HAMZA"),
    ("SYRIAC", "ALAPH DALATH DOTLESS HE WAW ZAIN SADHE RISH TAW PERSIAN_DHALATH YUDH_HE"),
) for name in (n.replace("_", " ") for n in names.split()))
_JOINING = frozenset({"ARABIC", "SYRIAC", "NKO", "MONGOLIAN"})


def _spelling_zwnj(text: str, i: int) -> bool:
    """Whether the ZWNJ at ``text[i]`` stands between two letters of one script that spells with it,
    where it shows: after a letter that joins the next (a joining script), or after a virama (Indic)."""
    before = _script_letter(text[i - 1] if i > 0 else "")
    if not before or before != _script_letter(text[i + 1:i + 2]):
        return False
    if before not in _JOINING:
        return any(w in unicodedata.name(text[i - 1], "") for w in ("VIRAMA", "AL-LAKUNA"))
    base = i - 1
    while base > 0 and unicodedata.category(text[base]) == "Mn":  # past its vowel signs, to the letter
        base -= 1
    return not unicodedata.name(text[base], "").startswith(_NOT_JOINING_AFTER)


def reveal_hidden_words(text: str) -> tuple[str, int]:
    """:func:`reveal_hidden` for words (a permission card's question: a file name, a tool's name),
    where a ZWNJ between two letters of a script that spells with it is part of the word and shows
    (it breaks the joining), so it is left as it is; every other one, and every other invisible or
    direction-changing character, is marked as ``reveal_hidden`` marks it."""
    if ZWNJ not in text:
        return reveal_hidden(text)
    kept = [i for i, c in enumerate(text) if c == ZWNJ and _spelling_zwnj(text, i)]
    if not kept:
        return reveal_hidden(text)
    pieces, start, count = [], 0, 0
    for i in kept:  # each piece is marked alone; the kept ZWNJs join them
        marked, n = reveal_hidden(text[start:i])
        pieces.append(marked)
        count += n
        start = i + 1
    marked, n = reveal_hidden(text[start:])
    return ZWNJ.join([*pieces, marked]), count + n


def highlight_revealed(text: str, language: str) -> str:
    """``highlight`` with each hidden character shown as one marked ``⟦U+202E⟧`` (a placeholder
    goes through the lexer, so the mark is not split into tokens)."""
    if not _has_hidden(text):
        return highlight(text, language)
    text = text.replace(_PLACEHOLDER, " ")
    flags = _hidden_flags(text)
    hidden = [c for c, flag in zip(text, flags, strict=True) if flag]
    html = highlight("".join(_PLACEHOLDER if flag else c for c, flag in zip(text, flags, strict=True)), language)
    pieces = html.split(_PLACEHOLDER)
    marks = [f'<mark style="{STYLE["warn"]}">⟦U+{ord(c):04X}⟧</mark>' for c in hidden]
    return pieces[0] + "".join(m + p for m, p in zip(marks, pieces[1:], strict=True))


def _input_parts(tool_name: str, tool_input: object) -> list[tuple[str, str]]:
    """A tool input as ``(text, language)`` parts: its code, then its other fields as JSON."""
    code = code_of(tool_name, tool_input)
    if code is None or not isinstance(tool_input, dict):  # (code_of finds code in a dict only)
        return [(json.dumps(tool_input, indent=2, ensure_ascii=False, default=str), "json")]
    rest = {k: v for k, v in tool_input.items() if k not in CODE_KEYS}
    return [code] + ([(json.dumps(rest, indent=2, ensure_ascii=False, default=str), "json")] if rest else [])


LONG_LINE_CHARS = 400
"""A line this long wraps into many rows of the card's box (about 100 characters a row)."""
BLANK_RUN_LINES = 8
"""This many blank lines in a row push what follows them out of sight of the box's first screen."""
BOX_ROWS = 16
"""Rows the card's box shows before it scrolls (about 18 in JupyterLab: fewer, to err towards warning)."""
ROW_CHARS = 60
"""Characters a row of the box holds (about 100 in a notebook's width: fewer, for a narrow panel)."""


def layout_warning(text: str, *, long_lines: bool = True) -> str:
    """``; ⚠ …`` where the code's layout keeps part of it out of sight in its scrolling box, else "".

    The box shows about 18 rows: ``img = '<3,700 characters of base64>';__import__('os').system(…)``
    showed a wall of data above Allow, the call at its end, rows below, and the summary said
    "2 lines"; so did ``x = 1``, forty blank lines, then the call."""
    lines = text.split("\n")
    if sum(max(1, -(-len(line) // ROW_CHARS)) for line in lines) <= BOX_ROWS:
        return ""  # all in sight: a warning on ordinary code (a 430-character query) would cry wolf
    longest = max(range(len(lines)), key=lambda i: len(lines[i]))
    if long_lines and len(lines[longest]) >= LONG_LINE_CHARS:
        return (f"; ⚠ line {longest + 1} is {len(lines[longest]):,} characters long: it wraps past the box, "
                "whose end may be out of sight: scroll the box to its end before you allow")
    run = 0
    for i, line in enumerate(lines):
        run = run + 1 if not line.strip() else 0
        if run == BLANK_RUN_LINES and any(x.strip() for x in lines[i + 1:]):
            return (f"; ⚠ {BLANK_RUN_LINES} or more blank lines in a row from line {i + 2 - run}, with code after "
                    "them: scroll the box to its end before you allow")
    return ""


def input_summary(tool_name: str, tool_input: object) -> str:
    """How long the input is and what in it is hidden: ``6,117 characters, 140 lines; ⚠ 2 …``."""
    text = "\n".join(t for t, _ in _input_parts(tool_name, tool_input))
    _, hidden = reveal_hidden(text)
    chars, lines = len(text), text.count(chr(10)) + 1
    summary = f"{chars:,} character{'' if chars == 1 else 's'}, {lines:,} line{'' if lines == 1 else 's'}"
    if hidden:
        summary += (f"; ⚠ {hidden} invisible or direction-changing character(s), shown as ⟦U+…⟧: "
                    "the code may not do what it appears to")
    code = code_of(tool_name, tool_input)
    return summary + (layout_warning(code[0]) if code is not None else written_text_warning(tool_input))


PROSE_SUFFIXES = (".md", ".markdown", ".txt", ".rst")
"""Files whose long lines are paragraphs, not a wall of data hiding a call."""
DATA_SUFFIXES = (".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".geojson", ".ipynb", ".xml", ".svg")
"""Files whose long lines are their records (a wide CSV row, a one-line JSON document, a notebook's
image output), read as data, not run: a long line there is what the file is, so only blank lines
with text after them are warned about (as in prose). Scripts, SQL and minified JavaScript, which
run, keep the long-line rule."""


def written_text_warning(tool_input: object) -> str:
    """:func:`layout_warning` for the texts a non-code input carries (write_file's ``content``,
    edit_file's ``new``): a script written to a file runs as surely as a code cell, and its tail,
    after forty blank lines or a wall of data, is as far out of sight. Only a text of several lines
    is judged, by its own lines (the card shows it as one JSON string, long as a rule: its length
    alone says nothing); a prose file's (``.md``, ``.txt``) long lines are its paragraphs, so there
    only blank lines with text after them are warned about."""
    if not isinstance(tool_input, dict):
        return ""
    path = str(tool_input.get("path", "")).lower()
    prose = path.endswith(PROSE_SUFFIXES + DATA_SUFFIXES)
    for key, value in tool_input.items():
        if isinstance(value, str) and "\n" in value:
            warning = layout_warning(value, long_lines=not prose)
            if warning:
                return warning.replace("; ⚠ ", f"; ⚠ in {key}: ", 1)
    return ""


def input_plain(tool_name: str, tool_input: object) -> str:
    """A tool call's input as plain text, whole (it is what the user approves), hidden characters shown."""
    return "\n".join(reveal_hidden(text)[0] for text, _ in _input_parts(tool_name, tool_input))


def input_html(tool_name: str, tool_input: object) -> str:
    """HTML of a tool call's input, whole: code highlighted, other fields as highlighted JSON, in a
    box that scrolls when long, hidden characters shown, and a line saying how long it is."""
    boxes = "".join(highlight_revealed(text, language) for text, language in _input_parts(tool_name, tool_input))
    summary = input_summary(tool_name, tool_input)
    style = STYLE["warn"] if "⚠" in summary else STYLE["muted"]
    return (f'<div style="max-height:{INPUT_BOX_HEIGHT};overflow:auto">{boxes}</div>'
            f'<div style="{style};font-size:smaller">{esc(summary)}</div>')


def error_line(error_kind: str, status: int | None, message: str) -> str:
    """``overloaded (529): Overloaded``."""
    return f"{error_kind or 'error'}{status_text(status)}: {message}"
