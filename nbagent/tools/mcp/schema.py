"""Checking an MCP tool's input against the server's ``inputSchema``, with ``jsonschema``.

:func:`input_check` picks the validator class the schema asks for (its ``$schema``; Draft 2020-12
when it names none) with :func:`jsonschema.validators.validator_for`, so everything JSON Schema can
say is checked: ``allOf``, ``not``, ``if``/``then``/``else``, recursive ``$ref`` and the rest.
Errors become one :class:`~nbagent.engine.contracts.tool_api.ToolInputError` that names each bad field path
and what was expected, the message the model gets back::

    Invalid input for tool 'mcp__srv__x': a: 'x' is not of type 'integer'; (input): 'b' is a required property

The input goes to the server as given: no defaults filled in, ``3`` not turned into ``3.0``.

A schema nbagent cannot use does not break the tool: the schema is invalid (say, a ``pattern`` that
is not a regular expression), it is not a JSON Schema at all, or a ``$ref`` points outside the
schema (nothing is fetched from the network) or nowhere. Then the check is skipped: the tool accepts
any JSON object, the server does the checking, and the reason is kept in
:attr:`InputCheck.unchecked`, which the manager reports once as a warning and ``%agent status``
shows. A failure of the check itself while validating (not the input's fault) also lets the input
through to the server.

``jsonschema`` is imported by :func:`input_check`, not with this module: its import takes about a
second, and it happens on the manager's thread while a server connects.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nbagent.engine.contracts.json_types import JSONObject, JSONValue
from nbagent.engine.contracts.tool_api import ToolInputError

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator
    from referencing import Registry

log = logging.getLogger("nbagent.mcp")

MAX_ERRORS = 10
"""At most this many problems are listed in one message (then "and N more")."""
MAX_PART = 300
"""Characters per problem; longer ones (a long value quoted back) are cut in the middle."""

# Keywords whose values are data, not schemas (a "$ref" key in there is not a reference) ...
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})
# ... and keywords whose values map names to schemas (a property may be called "enum").
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


@dataclass(frozen=True)
class InputCheck:
    """One tool's input check: a ``jsonschema`` validator, or None and why not."""

    validator: Validator | None
    unchecked: str | None = None
    """Why the inputs go to the server unchecked (None when they are checked)."""

    def validate(self, tool_name: str, raw_input: object) -> JSONObject:
        """``raw_input``, checked against the schema, as the dict to send to the server."""
        if not isinstance(raw_input, dict):
            raise ToolInputError(
                f"Invalid input for tool {tool_name!r}: expected a JSON object, got {type(raw_input).__name__}.")
        if self.validator is None:
            return dict(raw_input)
        try:
            errors = sorted(self.validator.iter_errors(raw_input), key=lambda e: [str(p) for p in e.absolute_path])
        except Exception:  # the schema's fault, found late (say, a $ref under a nested $id)
            log.debug("MCP input check of %s failed; the input goes to the server unchecked", tool_name,
                      exc_info=True)
            return dict(raw_input)
        if errors:
            parts = [_describe(e) for e in errors[:MAX_ERRORS]]
            if len(errors) > MAX_ERRORS:
                parts.append(f"and {len(errors) - MAX_ERRORS} more")
            raise ToolInputError(f"Invalid input for tool {tool_name!r}: " + "; ".join(parts))
        return dict(raw_input)


def input_check(schema: object) -> InputCheck:
    """The check for a tool's ``inputSchema``; never raises (a schema it cannot use gives
    ``validator=None`` and the reason)."""
    if not isinstance(schema, (Mapping, bool)):
        return InputCheck(None, f"the input schema is a {type(schema).__name__}, not a JSON Schema")
    from nbagent.engine.disk.own_imports import installed_only

    with installed_only():  # on the MCP thread, unmarked: its optional modules never from the notebook's folder
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import validator_for

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # an unknown $schema: the default is used
        cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
        if not isinstance(schema, Mapping):  # true or false
            return InputCheck(cls(schema))
        registry, unresolved = _local_registry(schema, cls)
    except SchemaError as exc:
        return InputCheck(None, f"invalid schema: {_describe(exc)}")
    except Exception as exc:  # noqa: BLE001 - e.g. a recursion too deep in the checker itself
        return InputCheck(None, f"the schema could not be checked ({type(exc).__name__}: {exc})")
    if unresolved is not None:
        where = "nowhere" if unresolved.startswith("#") else "outside the schema"
        return InputCheck(None, f"'$ref' {unresolved!r} points {where}")
    return InputCheck(_bounded_patterns(cls)(schema, registry=registry))


PATTERN_TIMEOUT_S = 1.0
"""Longest a schema's ``pattern`` may take on one input string (a server's ``^(a+)+$`` can take ages)."""


def _bounded_patterns(cls: type[Validator]) -> type[Validator]:
    """``cls`` with ``pattern`` checked by the ``regex`` module, with a time limit and without
    holding the GIL (``re`` holds it: a validation in a worker thread would still stop the event loop,
    and with it the abort)."""
    import regex
    from jsonschema.exceptions import ValidationError
    from jsonschema.validators import extend

    def pattern(validator: Validator, patrn: str, instance: JSONValue, schema: JSONObject) -> Iterator[ValidationError]:
        if not isinstance(instance, str):  # what the validator's type check "string" tests
            return
        try:
            found = regex.search(patrn, instance, timeout=PATTERN_TIMEOUT_S, concurrent=True)
        except TimeoutError:
            yield ValidationError(f"{_short(instance)} could not be checked against the pattern {patrn!r} within "
                                  f"{PATTERN_TIMEOUT_S:g} s; not sent")
            return
        except regex.error:  # a pattern only ``re`` understands: as before
            found = re.search(patrn, instance)
        if found is None:
            yield ValidationError(f"{_short(instance)} does not match {patrn!r}")

    bounded = extend(cls, {"pattern": pattern})
    bounded.__name__ = bounded.__qualname__ = cls.__name__  # the draft the schema asked for, as shown
    return bounded


def _short(value: str) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _local_registry(schema: Mapping[str, object], cls: type[Validator]) -> tuple[Registry[JSONValue], str | None]:
    """A registry of the schema and the metaschemas only (so no reference is ever fetched), and
    the first ``$ref`` it cannot resolve, if any."""
    import jsonschema_specifications
    import referencing
    import referencing.exceptions
    import referencing.jsonschema

    spec = referencing.jsonschema.specification_with(cls.META_SCHEMA.get("$schema", ""),
                                                       default=referencing.jsonschema.DRAFT202012)
    resource = referencing.Resource.from_contents(schema, default_specification=spec)
    base = resource.id() or ""
    registry = jsonschema_specifications.REGISTRY.with_resource(base, resource)
    resolver = registry.resolver(base_uri=base)
    for ref in _refs(schema):
        try:
            resolver.lookup(ref)
        except referencing.exceptions.Unresolvable:
            return registry, ref
    return registry, None


def _refs(node: object, named: bool = False) -> Iterator[str]:
    """Every ``$ref`` string in a schema (``named``: ``node`` maps names to schemas)."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if named:
                yield from _refs(value)
            elif key == "$ref" and isinstance(value, str):
                yield value
            elif key not in _DATA_KEYWORDS:
                yield from _refs(value, key in _NAMED_SCHEMAS)
    elif isinstance(node, list) and not named:
        for item in node:
            yield from _refs(item)


def _path(path: Iterable[str | int]) -> str:
    return ".".join(str(p) for p in path) or "(input)"


def _describe(error: ValidationError) -> str:
    """``path: message``, and for ``anyOf``/``oneOf`` what each alternative objected to."""
    text = f"{_path(error.absolute_path)}: {error.message}"
    if error.context and error.validator in ("anyOf", "oneOf"):
        first: dict[str | int | None, ValidationError] = {}
        for sub in error.context:  # the first complaint of each alternative
            first.setdefault(sub.relative_schema_path[0] if sub.relative_schema_path else None, sub)
        text += " (" + "; or ".join(f"{_path(s.absolute_path)}: {s.message}" for s in first.values()) + ")"
    if len(text) > MAX_PART:
        head = MAX_PART * 2 // 3
        text = f"{text[:head]} … {text[-(MAX_PART - head - 3):]}"
    return text


__all__ = ["MAX_ERRORS", "MAX_PART", "InputCheck", "input_check"]
