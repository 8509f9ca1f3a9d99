"""The demo brain's structured answers: a JSON schema filled deterministically from the conversation.

When a run asks for structured output, the loop sends the wanted shape (a JSON schema) in the
prompt's message and the model ends with a JSON value matching it. The brain is no language model,
so it fills that schema from *facts*:

* numbers, from the tool results first (they are the computed answers), then from the prompt;
* strings, from the prompt: its quoted phrases (``"…"``, ``'…'``, `` `…` ``) in order, or, when
  it quotes nothing, its capitalised words (not sentence openers such as "The" or "What"); then
  the quoted phrases of the tool results.

Fields are filled in schema order, each taking the next unused fact of its kind: ``integer`` and
``number`` fields take numbers, ``string`` fields take strings; once the facts run out a number
is 0 and a string is ``"simulated <field>"``. Objects are filled field by field, ``$ref`` and
``anyOf``/``oneOf`` (first non-null option) are followed, an ``enum`` or ``const`` gives its first
value, a boolean is ``false``, ``null`` is ``None``. An array of scalars takes every remaining
fact of its kind (at least one item); an array of objects gets items while each new item still
consumes a fact (at least one, at most :data:`MAX_ITEMS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Literal, Mapping

from ...engine.contracts.json_types import JSONValue

Schema = Mapping[str, JSONValue]
"""A JSON schema (the request's, untrusted: every keyword is narrowed before use)."""
_EMPTY: Schema = {}

MAX_ITEMS = 10
_NUMBER = re.compile(r"(?<![\w.-])(?:(?<=\s)-|^-)?\d+(?:,\d{3})*(?:\.\d+)?(?![\w]|\.\d)")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|(?<!\w)'([^'\n]+)'(?!\w)|`([^`\n]+)`")
_CAPITALISED = re.compile(r"\b[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*")
_OPENERS = frozenset(
    "A An And Are As At But By Can Could Did Do Does For From Give Given Has Have He How I If In Is It Its "
    "Let List Make My Of On Or Please Return Say She Show So Tell That The Then There These They This "
    "Those To Use We What When Where Which Who Why Will With Would You Your".split())


def numbers_in(text: str) -> list[int | float]:
    """The numbers written in ``text``, in order (``2,100,000`` is one number)."""
    found: list[int | float] = []
    for raw in _NUMBER.findall(text):
        plain = raw.replace(",", "")
        found.append(float(plain) if "." in plain else int(plain))
    return found


def quoted_in(text: str) -> list[str]:
    """The quoted phrases of ``text``, in order."""
    return [next(g for g in groups if g) for groups in _QUOTED.findall(text)]


def strings_in_prompt(text: str) -> list[str]:
    """The prompt's quoted phrases, or (when it quotes nothing) its capitalised words, in order."""
    quoted = quoted_in(text)
    if quoted:
        return quoted
    found: list[str] = []
    for m in _CAPITALISED.finditer(text):
        words = m.group(0).split()
        while words and words[0] in _OPENERS:
            words.pop(0)
        if words:
            found.append(" ".join(words))
    return found


@dataclass
class Facts:
    """The values a schema is filled from, each used once, in order."""

    numbers: list[int | float] = field(default_factory=list)
    strings: list[str] = field(default_factory=list)
    used: dict[str, int] = field(default_factory=lambda: {"numbers": 0, "strings": 0})

    @classmethod
    def of(cls, prompt: str, results: Iterable[str]) -> "Facts":
        """The facts of a prompt and the tool results that answered it (see the module docstring)."""
        results = list(results)
        numbers = [n for text in results for n in numbers_in(text)] + numbers_in(prompt)
        strings = strings_in_prompt(prompt) + [s for text in results for s in quoted_in(text)]
        return cls(numbers=numbers, strings=strings)

    def take(self, kind: Literal["numbers", "strings"]) -> int | float | str | None:
        """The next unused fact of ``kind`` ("numbers" or "strings"), or None when none is left."""
        pool: list[int | float] | list[str] = self.numbers if kind == "numbers" else self.strings
        i = self.used[kind]
        if i >= len(pool):
            return None
        self.used[kind] = i + 1
        return pool[i]

    def left(self, kind: Literal["numbers", "strings"]) -> int:
        return len(self.numbers if kind == "numbers" else self.strings) - self.used[kind]

    def consumed(self) -> int:
        return sum(self.used.values())


class SchemaFiller:
    """Fills one JSON schema (with its ``$defs``) from :class:`Facts`."""

    def __init__(self, root: Schema, facts: Facts) -> None:
        self.root = root
        self.facts = facts

    def fill(self, schema: Schema | None = None, name: str = "answer") -> JSONValue:
        """A value for ``schema`` (the root schema when None)."""
        s = self._resolve(self.root if schema is None else schema)
        if "const" in s:
            return s["const"]
        enum = s.get("enum")
        if isinstance(enum, list) and enum:
            return enum[0]
        kind = s.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object" or (kind is None and "properties" in s):
            properties = s.get("properties") or {}
            return {key: self.fill(sub if isinstance(sub, Mapping) else _EMPTY, key)
                    for key, sub in (properties.items() if isinstance(properties, Mapping) else ())}
        if kind == "array":
            return self._array(s, name)
        return self._scalar(kind, name)

    def _resolve(self, schema: Schema) -> Schema:
        """Follow ``$ref`` (within the root), and take the first non-null ``anyOf``/``oneOf``/``allOf``."""
        for _ in range(32):  # a bound, in case of a reference cycle
            ref = schema.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                target: JSONValue | Schema = self.root
                for part in ref[2:].split("/"):
                    target = target.get(part, {}) if isinstance(target, Mapping) else {}
                schema = target if isinstance(target, Mapping) else _EMPTY
                continue
            options = schema.get("anyOf") or schema.get("oneOf") or schema.get("allOf")
            if isinstance(options, list) and options:
                schemas = [o if isinstance(o, Mapping) else _EMPTY for o in options]
                schema = next((o for o in schemas if not _is_null(o)), schemas[0])
                continue
            return schema
        return {}

    def _scalar(self, kind: JSONValue, name: str) -> JSONValue:
        if kind in ("integer", "number"):
            value = self.facts.take("numbers")
            if not isinstance(value, (int, float)):
                return 0
            return int(round(value)) if kind == "integer" else value
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        value = self.facts.take("strings")
        return value if value is not None else f"simulated {name}"

    def _array(self, schema: Schema, name: str) -> list[JSONValue]:
        raw_items = schema.get("items")
        items = self._resolve(raw_items if isinstance(raw_items, Mapping) else _EMPTY)
        least = max(1, int(_number(schema.get("minItems", 1))))
        kind = items.get("type")
        if kind in ("integer", "number", "string") and "enum" not in items and "const" not in items:
            pool: Literal["numbers", "strings"] = "strings" if kind == "string" else "numbers"
            count = min(max(least, self.facts.left(pool)), MAX_ITEMS)
            return [self._scalar(kind, name) for _ in range(count)]
        values: list[JSONValue] = []
        while len(values) < MAX_ITEMS:
            before = self.facts.consumed()
            value = self.fill(items, name)
            if len(values) >= least and self.facts.consumed() == before:
                break
            values.append(value)
        return values


def _is_null(schema: Schema) -> bool:
    """A ``{"type": "null"}`` option of an ``anyOf``/``oneOf``."""
    match schema:
        case {"type": "null"}:
            return True
    return False


def _number(value: JSONValue) -> int | float:
    """A schema keyword's number (``minItems``), 1 when it is not a number."""
    return value if isinstance(value, (int, float)) else 1


def fill_schema(schema: Schema, prompt: str, results: Iterable[str] = ()) -> JSONValue:
    """A deterministic value for ``schema`` from the prompt and the tool results (module docstring)."""
    return SchemaFiller(schema, Facts.of(prompt, results)).fill()


__all__ = ["MAX_ITEMS", "Facts", "SchemaFiller", "fill_schema", "numbers_in", "quoted_in", "strings_in_prompt"]
