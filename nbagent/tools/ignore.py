"""``.nbagentignore``: gitignore-like patterns for what ``list_files`` does not show.

A simple subset of gitignore, matched with :mod:`fnmatch`:

* blank lines and lines starting with ``#`` are skipped;
* ``!pattern`` re-includes what an earlier pattern excluded (the last matching line wins);
* a trailing ``/`` matches directories only;
* a pattern containing ``/`` (other than a trailing one) is matched against the path relative to
  the directory of the ignore file (a leading ``/`` just anchors it there); any other pattern is
  matched against the name alone, at any depth;
* ``*`` may cross ``/`` (fnmatch), so ``docs/*`` also hides everything below ``docs``.

An ignored directory hides everything below it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from nbagent.engine.disk.safe_open import read_capped

IGNORE_FILE = ".nbagentignore"
MAX_IGNORE_BYTES = 1_000_000
"""At most this much of an ignore file is read (patterns, not data)."""

# Never worth listing: version control, environments, caches, notebook checkpoints.
ALWAYS_SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "__pycache__", ".ipynb_checkpoints",
    ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules",
})


def read_ignore_text(directory: Path) -> str:
    """``directory/.nbagentignore`` as text ("" when missing, unreadable or not a regular file), at
    most :data:`MAX_IGNORE_BYTES`: a received folder's ``.nbagentignore`` that is a FIFO blocked
    ``list_files`` (a read-only tool, run unasked) on the kernel's main thread until the kernel was
    restarted, and a huge one was read whole."""
    raw = read_capped(directory / IGNORE_FILE, MAX_IGNORE_BYTES)
    return raw.decode("utf-8", errors="replace") if raw is not None else ""


@dataclass(frozen=True)
class IgnoreRule:
    """One line of an ignore file."""

    pattern: str
    negated: bool
    dir_only: bool
    anchored: bool

    def matches(self, rel_path: str, is_dir: bool) -> bool:
        """Whether this rule applies to ``rel_path`` (``/``-separated, relative to the ignore file)."""
        if self.dir_only and not is_dir:
            return False
        if self.anchored:
            return fnmatchcase(rel_path, self.pattern)
        return fnmatchcase(rel_path.rsplit("/", 1)[-1], self.pattern)


def parse_ignore(text: str) -> tuple[IgnoreRule, ...]:
    """The rules of an ignore file's text, in order."""
    rules = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        anchored = "/" in line
        line = line.lstrip("/")
        if line:
            rules.append(IgnoreRule(line, negated, dir_only, anchored))
    return tuple(rules)


@dataclass(frozen=True)
class IgnoreRules:
    """The rules of one ignore file plus the directories that are always skipped."""

    rules: tuple[IgnoreRule, ...] = ()

    @classmethod
    def load(cls, directory: Path) -> "IgnoreRules":
        """Rules from ``directory/.nbagentignore`` (none if it is missing or unreadable)."""
        return cls(parse_ignore(read_ignore_text(directory)))

    def ignored(self, rel_path: str, is_dir: bool) -> bool:
        """Whether ``rel_path`` itself is ignored (its parents are the walker's business)."""
        name = rel_path.rsplit("/", 1)[-1]
        if is_dir and name in ALWAYS_SKIPPED_DIRS:
            return True
        result = False
        for rule in self.rules:
            if rule.negated == result and rule.matches(rel_path, is_dir):
                result = not rule.negated
        return result


__all__ = ["IGNORE_FILE", "ALWAYS_SKIPPED_DIRS", "IgnoreRule", "IgnoreRules", "MAX_IGNORE_BYTES", "parse_ignore",
           "read_ignore_text"]
