"""The system prompt, built from one context object in one place, and the kernel facts.

The system prompt is static for a session: it precedes the messages in the prompt cache's prefix,
so any change there would make the whole cached conversation a miss. Facts that change between
prompts (the user's variables, recent cell inputs) travel instead as a text block of the newest
user message (:class:`KernelFactsTracker`), as a diff since the previous prompt when that is shorter.
"""

from __future__ import annotations

import os
import platform
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence, Union

from ..contracts.config import SessionConfig
from ..contracts.credentials import secret_reason
from ..contracts.json_types import JSONObject
from ..contracts.messages import ContentBlock, Message
from ..contracts.permissions import PLAN_MODE_OFF_PROMPT, PLAN_MODE_PROMPT
from ..contracts.protected import IGNORE_FILE, NBAGENT_DIR, RULES_FILES
from ..contracts.tool_api import ToolLike
from ..disk.safe_open import read_capped
from .facts import FACTS_TAG, KernelFacts, VariableInfo  # noqa: F401 - re-exported: the prompt's inputs
from .sanitize import Sanitizer

RULES_DIR = Path(NBAGENT_DIR) / "rules"
MAX_RULES_CHARS = 20_000
MAX_IGNORE_LISTED_CHARS = 2_000
"""Most characters of ``.nbagentignore``'s patterns the system prompt lists (then how many more):
a received folder's 1 MB file went whole into every request's system prompt, about 250,000 tokens
paid at each one (or a window exceeded at every prompt), past the cap the rules files have."""


@dataclass(frozen=True)
class SystemPromptContext:
    """Everything the system prompt is made from (see :func:`build_system_prompt`)."""

    cwd: Path
    tool_names: Sequence[str] = ()
    python_version: str = field(default_factory=platform.python_version)
    rules: str = ""
    ignore_patterns: Sequence[str] = ()
    custom_system_prompt: str | None = None
    append_system_prompt: str | None = None
    in_notebook: bool = False


def read_rules(cwd: Path) -> str:
    """``AGENTS.md`` and ``.nbagent/rules/*.md`` from ``cwd``, concatenated (capped in size)."""
    return load_rules(cwd)[0]


def load_rules(cwd: Path) -> tuple[str, list[str]]:
    """The rules text (as :func:`read_rules`) and a warning for each rules file not read.

    A rules file must be a regular file whose real path is inside ``cwd``: the rules go to the model
    in the system prompt, and a symlink out of the project (``AGENTS.md -> ~/.ssh/id_rsa``) must not
    send what ``read_file`` refuses. At most what the cap can use is read, so a huge file costs
    no more memory than a small one.
    """
    root = Path(cwd).resolve()
    candidates = [(name, Path(cwd) / name) for name in RULES_FILES]
    rules_dir = Path(cwd) / RULES_DIR
    if rules_dir.is_dir():
        candidates += [(str(RULES_DIR / p.name), p) for p in sorted(rules_dir.glob("*.md"))]
    parts: list[str] = []
    warnings: list[str] = []
    budget = MAX_RULES_CHARS
    for label, path in candidates:
        if budget <= 0 or not os.path.lexists(path):
            continue
        text, problem = _read_rules_file(path, root, label, budget, Path(cwd))
        if problem is not None:
            warnings.append(problem)
        elif text is not None:
            part = f"# {label}\n{text}"
            parts.append(part)
            budget -= len(part) + 2
    return "\n\n".join(parts)[:MAX_RULES_CHARS], warnings


def _linked(path: Path, cwd: Path) -> bool:
    """Whether ``path`` or a folder of it below ``cwd`` is a symlink."""
    while path != cwd and path != path.parent:
        if path.is_symlink():
            return True
        path = path.parent
    return False


def _own_rules(real: Path) -> bool:
    """Whether ``real`` is in the user's own ``~/.nbagent/rules/``, however ``~/.nbagent`` is linked
    (dotfiles kept with stow or chezmoi): rules, not the credentials beside them."""
    try:
        return real.is_relative_to((Path.home() / RULES_DIR).resolve())
    except (OSError, RuntimeError):  # no home folder, a link loop
        return False


def _read_rules_file(path: Path, root: Path, label: str, max_chars: int, cwd: Path) -> tuple[str | None, str | None]:
    """``(text, None)``, or ``(None, why it was not read)``; reads at most ``max_chars`` characters' worth."""
    try:
        real = path.resolve()
        if not real.is_relative_to(root):
            return None, f"Rules file {label} resolves to {real}, outside the working directory; not read."
        # Nor, through a symlink, a file that holds credentials (a repository's
        # ``.nbagent/rules/style.md -> ../../.env``, ``AGENTS.md -> .git/config``): read_file asks
        # before such a read, and the rules go to the model unasked, at every prompt. A rules file in
        # its own place is yours (a notebook in ~ keeps its rules in ~/.nbagent/rules/).
        if _linked(path, cwd) and not _own_rules(real) and secret_reason(str(real), root) is not None:
            return None, f"Rules file {label} leads to a file that holds credentials ({real.name}); not read."
        # Non-blocking, and checked on the open descriptor: a FIFO swapped in must not hang the prompt.
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None, f"Rules file {label} is not a regular file; not read."
            data = f.read(max_chars * 4)  # UTF-8: at most 4 bytes a character
    except (OSError, RuntimeError) as exc:
        return None, f"Rules file {label} could not be read ({exc}); not used."
    return data.decode("utf-8", errors="replace")[:max_chars], None


MAX_IGNORE_BYTES = 1_000_000
"""At most this much of ``.nbagentignore`` is read (patterns, not data)."""


def read_ignore_patterns(cwd: Path) -> list[str]:
    """Patterns from ``.nbagentignore`` (blank lines and ``#`` comments skipped)."""
    raw = read_capped(cwd / IGNORE_FILE, MAX_IGNORE_BYTES)  # never a FIFO's wait, never a huge file whole
    if raw is None:
        return []
    lines = raw.decode("utf-8", errors="replace").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def _listed(patterns: Sequence[str]) -> str:
    """``patterns`` joined, within :data:`MAX_IGNORE_LISTED_CHARS` (then how many more there are)."""
    shown = _listed_count(patterns)
    more = f" … and {len(patterns) - shown:,} more patterns (in .nbagentignore)" if shown < len(patterns) else ""
    return ", ".join(patterns[:shown]) + more


def _listed_count(patterns: Sequence[str]) -> int:
    """How many of ``patterns``, from the first, the system prompt lists."""
    used = 0
    for count, pattern in enumerate(patterns):
        used += len(pattern) + 2
        if used > MAX_IGNORE_LISTED_CHARS:
            return count
    return len(patterns)


def ignore_listing_warning(patterns: Sequence[str]) -> str | None:
    """What the user is told when the system prompt lists only some of ``.nbagentignore``'s patterns
    (None when it lists all): the model is not told every pattern, though ``list_files`` still
    applies each one."""
    shown = _listed_count(patterns)
    if shown == len(patterns):
        return None
    return (f".nbagentignore has {len(patterns):,} patterns; the model is told the first {shown:,} "
            f"({MAX_IGNORE_LISTED_CHARS:,} characters' worth) and that {len(patterns) - shown:,} more exist. "
            "list_files still hides what every pattern matches.")


def build_system_prompt(ctx: SystemPromptContext) -> str:
    """The one function that turns a :class:`SystemPromptContext` into the system prompt text."""
    if ctx.custom_system_prompt:
        base = ctx.custom_system_prompt
    else:
        where = "inside a Jupyter notebook, in the user's live Python kernel" if ctx.in_notebook else "in a Python process"
        base = (
            f"You are nbagent, a coding and data assistant running {where}. "
            "Use the tools to inspect data and files before answering; prefer small, verifiable steps. "
            "Code you run with the python tool executes in the user's namespace: do not delete or "
            "overwrite their variables unless asked. Be concise and show the numbers you computed."
        )
    lines = [base, "", "# Environment", f"- Working directory: {ctx.cwd}", f"- Python {ctx.python_version}"]
    if ctx.tool_names:
        lines.append(f"- Tools: {', '.join(ctx.tool_names)}")
    if ctx.in_notebook:
        lines.append(f"- The user's variables and recent cell inputs arrive in <{FACTS_TAG}> blocks of their "
                     "messages (in full, or as changes since the previous one).")
    if ctx.ignore_patterns:
        lines.append(f"- Ignored paths (.nbagentignore): {_listed(ctx.ignore_patterns)}")
    if ctx.rules:
        lines += ["", "# Project rules", ctx.rules]
    if ctx.append_system_prompt:
        lines += ["", ctx.append_system_prompt]
    return "\n".join(lines)


_StatKey = Union[tuple[int, int], None]
_Fingerprint = tuple[tuple[_StatKey, ...], _StatKey, tuple[tuple[str, _StatKey], ...], _StatKey]
_Definition = tuple[ToolLike, "Sanitizer | None", JSONObject]
"""A tool, the sanitizer its definition was redacted with, and the definition as sent."""
"""The stat keys of the rules files, the rules folder, its files and the ignore file."""


def _stat_key(path: str | Path) -> _StatKey:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class RulesCache:
    """Rules files and ignore patterns of one ``cwd``, re-read only when a file changed (by mtime
    and size), so a request does not re-read the project's rules every time."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._key: _Fingerprint | None = None
        self._value: tuple[str, list[str]] = ("", [])
        self._warnings: list[str] = []  # of the last read, until taken
        # Joined once: looked at every turn, and pathlib's joins cost more than the stat calls.
        self._files = tuple(os.path.join(cwd, name) for name in RULES_FILES)
        self._dir = os.path.join(cwd, RULES_DIR)
        self._ignore = os.path.join(cwd, IGNORE_FILE)

    def _fingerprint(self) -> _Fingerprint:
        files = tuple(_stat_key(path) for path in self._files)
        dir_key = _stat_key(self._dir)
        in_dir: tuple[tuple[str, _StatKey], ...] = ()
        if dir_key is not None:  # most projects have no rules folder: nothing to list
            try:
                entries = sorted(e.name for e in os.scandir(self._dir) if e.name.endswith(".md"))
            except OSError:
                entries = []
            in_dir = tuple((name, _stat_key(os.path.join(self._dir, name))) for name in entries)
        return files, dir_key, in_dir, _stat_key(self._ignore)

    def get(self) -> tuple[str, list[str]]:
        """``(rules text, ignore patterns)``, as ``read_rules`` / ``read_ignore_patterns`` give them."""
        key = self._fingerprint()
        if key != self._key:
            rules, self._warnings = load_rules(self.cwd)
            ignore = read_ignore_patterns(self.cwd)
            listing = ignore_listing_warning(ignore)
            if listing is not None:
                self._warnings.append(listing)
            self._value = (rules, ignore)
            self._key = key
        return self._value

    def take_warnings(self) -> list[str]:
        """Warnings about rules files not read (and ignore patterns not all listed), once per change
        of the files."""
        warnings, self._warnings = self._warnings, []
        return warnings


def mode_blocks(mode: str, previous_mode: str | None) -> list[ContentBlock]:
    """Text blocks for a new prompt that say the permission mode when it matters to the model.

    They travel in the prompt's message, not the system prompt: the system prompt leads the prompt
    cache's prefix, and switching to plan mode used to rewrite the whole cached conversation
    (15-16k tokens written again). Plan mode is said with every prompt made in it; leaving it is
    said once, since the earlier prompts in the history still say "plan mode".
    """
    if mode == "plan":
        return [{"type": "text", "text": PLAN_MODE_PROMPT}]
    if previous_mode == "plan":
        return [{"type": "text", "text": PLAN_MODE_OFF_PROMPT}]
    return []


def last_prompt_mode(history: Sequence[Message]) -> str | None:
    """``"plan"`` when the newest prompt in ``history`` was made in plan mode (a resumed session)."""
    for message in reversed(history):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        if any(b["type"] == "tool_result" for b in content):
            continue  # tool results, not a prompt
        return "plan" if any(b["type"] == "text" and b["text"] == PLAN_MODE_PROMPT for b in content) else None
    return None


class RequestPrompt:
    """What every request of a session repeats: the system prompt and the tool definitions.

    Both are built again only when what they are made of changed (the settings object, the rules
    files, which are looked at once per turn, the tool names; the tool objects), so a long tool loop
    does not rebuild them per request, and an equal prompt stays the same object (requests share it).
    """

    def __init__(self) -> None:
        self._rules: RulesCache | None = None
        self._rules_seen: tuple[int, tuple[str, list[str]]] | None = None  # (turn, rules lookup)
        self._key: tuple[SessionConfig, tuple[str, list[str]], tuple[str, ...]] | None = None
        self._system = ""
        self._definitions: dict[int, _Definition] = {}

    def _rules_value(self, config: SessionConfig, turn: int) -> tuple[str, list[str]]:
        if self._rules is None or self._rules.cwd != config.cwd:
            self._rules, self._rules_seen = RulesCache(config.cwd), None
        if self._rules_seen is None or self._rules_seen[0] != turn:  # an edit applies from the next prompt
            self._rules_seen = (turn, self._rules.get())
        return self._rules_seen[1]  # the same object while no rules file changed

    def rules_warnings(self, config: SessionConfig, turn: int) -> list[str]:
        """Look at the rules files for ``turn`` (as :meth:`system` will); warnings about any not read."""
        self._rules_value(config, turn)
        assert self._rules is not None
        return self._rules.take_warnings()

    def system(self, config: SessionConfig, turn: int, tool_names: tuple[str, ...]) -> str:
        """The system prompt for a request of ``turn`` offering ``tool_names``."""
        rules_value = self._rules_value(config, turn)
        last = self._key
        if last is not None and last[0] is config and last[1] is rules_value and last[2] == tool_names:
            return self._system
        rules, ignore = rules_value
        system = build_system_prompt(SystemPromptContext(
            cwd=config.cwd, tool_names=list(tool_names), rules=rules, ignore_patterns=ignore,
            custom_system_prompt=config.custom_system_prompt, append_system_prompt=config.append_system_prompt,
            in_notebook=config.in_notebook,
        ))
        if system != self._system:
            self._system = system
        self._key = (config, rules_value, tool_names)
        return self._system

    def definitions(self, tools: Iterable[ToolLike], sanitizer: Sanitizer | None = None) -> list[JSONObject]:
        """The tools' API definitions, each built once per tool object (schemas do not change) and
        redacted once per ``sanitizer`` (an MCP server's description or schema may name its token;
        the request's sanitizer is made again only when a secret changes): walking every schema's
        strings at each request cost ~0.1 ms a request. Only the tools offered now stay cached: a
        tool no longer offered is not kept alive."""
        cache, self._definitions = self._definitions, {}
        return [self._definition(t, cache, sanitizer) for t in tools]

    def _definition(self, tool: ToolLike, cache: dict[int, _Definition], sanitizer: Sanitizer | None) -> JSONObject:
        hit = cache.get(id(tool))
        if hit is None or hit[0] is not tool or hit[1] is not sanitizer:
            definition: JSONObject = {"name": tool.name, "description": tool.description, "input_schema": tool.schema()}
            hit = (tool, sanitizer, sanitizer.strings(definition) if sanitizer is not None else definition)
        self._definitions[id(tool)] = hit
        return hit[2]
