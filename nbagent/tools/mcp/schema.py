"""An MCP tool's JSON schema as a pydantic model, so its inputs are checked like built-in tools'.

The common subset is converted with ``pydantic.create_model``: object properties (nested too),
``required``, the basic types (strictly, as JSON Schema means them: ``"integer"`` is not ``true``
and ``"string"`` is not ``3``), arrays, ``enum``/``const``, ``anyOf``/``oneOf``, type lists,
``nullable``, local ``$ref`` into ``$defs``, ``additionalProperties`` and the usual string, number
and array bounds. Anything else that changes what is valid (``allOf`` of several schemas, ``not``,
``if``/``then``, recursive references, …) makes :func:`model_for_schema` give up with a reason;
the tool then accepts any JSON object and the server does the checking.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Optional, Union

import pydantic
from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr
from typing_extensions import Annotated

from nbagent.engine.tool_api import ToolInputError

_UNSUPPORTED = (
    "not", "if", "then", "else", "patternProperties", "dependentRequired", "dependentSchemas",
    "dependencies", "prefixItems", "additionalItems", "unevaluatedProperties", "unevaluatedItems",
    "propertyNames", "contains", "minContains", "maxContains", "minProperties", "maxProperties",
)
_LITERAL_TYPES = (str, int, bool, type(None))
_BOUNDS = {
    "minimum": "ge", "maximum": "le", "exclusiveMinimum": "gt", "exclusiveMaximum": "lt", "multipleOf": "multiple_of",
    "minLength": "min_length", "maxLength": "max_length", "pattern": "pattern",
    "minItems": "min_length", "maxItems": "max_length",
}


class UnsupportedSchema(Exception):
    """The schema uses a feature this converter does not model (the message says which, where)."""


@dataclass(frozen=True)
class SchemaModel:
    """The result of converting one tool's schema: a model, or None and why not."""

    model: type[pydantic.BaseModel] | None
    unsupported: str | None = None

    def validate(self, tool_name: str, raw_input: Any) -> dict[str, Any]:
        """``raw_input`` checked against the schema, as the dict to send to the server.

        Only keys the model gave are sent (no defaults filled in, no ``null`` for omitted optional
        fields): the server applies its own defaults.
        """
        if not isinstance(raw_input, dict):
            raise ToolInputError(
                f"Invalid input for tool {tool_name!r}: expected a JSON object, got {type(raw_input).__name__}.")
        if self.model is None:
            return dict(raw_input)
        try:
            parsed = self.model.model_validate(raw_input)
        except pydantic.ValidationError as exc:
            parts = []
            for err in exc.errors(include_url=False):
                loc = ".".join(str(x) for x in err.get("loc", ())) or "(input)"
                parts.append(f"{loc}: {err.get('msg')}")
            raise ToolInputError(f"Invalid input for tool {tool_name!r}: " + "; ".join(parts)) from None
        return parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)


def model_for_schema(schema: Any, name: str = "Input") -> SchemaModel:
    """Convert a tool's ``inputSchema``; never raises (an unsupported schema gives ``model=None``)."""
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        return SchemaModel(None, "the input schema is not a JSON object schema")
    try:
        return SchemaModel(_Converter(schema, name).object_model(schema, name, "(root)"))
    except UnsupportedSchema as exc:
        return SchemaModel(None, str(exc))
    except Exception as exc:  # noqa: BLE001 - pydantic refusing a bound (say, a bad regex) is the same case
        return SchemaModel(None, f"pydantic could not build a model ({type(exc).__name__}: {exc})")


class _Converter:
    def __init__(self, root: Mapping[str, Any], name: str) -> None:
        self.root = root
        self.name = name
        self.refs: list[str] = []  # the $ref chain being expanded, to refuse recursion
        self.counter = itertools.count(1)

    # -- types -------------------------------------------------------------------------------
    def type_of(self, s: Any, path: str) -> Any:
        if s is True or s == {}:
            return Any
        if not isinstance(s, Mapping):
            raise UnsupportedSchema(f"{path}: schema {s!r}")
        for keyword in _UNSUPPORTED:
            if keyword in s:
                raise UnsupportedSchema(f"{path}: '{keyword}'")
        t = self._base_type(s, path)
        return Optional[t] if s.get("nullable") is True else t

    def _base_type(self, s: Mapping[str, Any], path: str) -> Any:
        if "$ref" in s:
            return self._ref(s["$ref"], path)
        if "allOf" in s:
            parts = s["allOf"]
            if not isinstance(parts, list) or len(parts) != 1:
                raise UnsupportedSchema(f"{path}: 'allOf' with several schemas")
            return self.type_of(parts[0], path)
        if "const" in s:
            return self._literal([s["const"]], path)
        if "enum" in s:
            if not isinstance(s["enum"], list) or not s["enum"]:
                raise UnsupportedSchema(f"{path}: empty or non-list 'enum'")
            return self._literal(s["enum"], path)
        for key in ("anyOf", "oneOf"):  # oneOf checked as anyOf: a little lenient, the server is exact
            if key in s:
                options = s[key]
                if not isinstance(options, list) or not options:
                    raise UnsupportedSchema(f"{path}: empty '{key}'")
                return Union[tuple(self.type_of(o, f"{path}.{key}[{i}]") for i, o in enumerate(options))]
        t = s.get("type")
        if isinstance(t, list):
            if not t:
                raise UnsupportedSchema(f"{path}: empty 'type' list")
            return Union[tuple(self._typed(s, str(x), path) for x in t)]
        if t is None:
            t = "object" if "properties" in s else "array" if "items" in s else None
        return Any if t is None else self._typed(s, t, path)

    def _typed(self, s: Mapping[str, Any], t: str, path: str) -> Any:
        if t == "string":
            return self._bounded(StrictStr, s, ("minLength", "maxLength", "pattern"))
        if t == "integer":
            return self._bounded(StrictInt, s, ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"))
        if t == "number":
            # Two members, so that 3 stays 3 on the way to the server instead of becoming 3.0.
            keys = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
            return self._bounded(Union[StrictInt, StrictFloat], s, keys)
        if t == "boolean":
            return StrictBool
        if t == "null":
            return None
        if t == "array":
            items = s.get("items", True)
            if isinstance(items, list):
                raise UnsupportedSchema(f"{path}: 'items' as a list (tuple validation)")
            return self._bounded(list[self.type_of(items, f"{path}[]")], s, ("minItems", "maxItems"))  # type: ignore[misc]
        if t == "object":
            if "properties" in s:
                return self.object_model(s, f"{self.name}_{next(self.counter)}", path)
            extra = s.get("additionalProperties", True)
            return dict[str, self.type_of(extra, f"{path}.*")] if extra is not False else dict[str, Any]  # type: ignore[misc]
        raise UnsupportedSchema(f"{path}: type {t!r}")

    @staticmethod
    def _bounded(base: Any, s: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
        bounds = {_BOUNDS[k]: s[k] for k in keys if k in s and not isinstance(s[k], bool)}
        return Annotated[base, Field(**bounds)] if bounds else base

    @staticmethod
    def _literal(values: list[Any], path: str) -> Any:
        if not all(isinstance(v, _LITERAL_TYPES) for v in values):
            raise UnsupportedSchema(f"{path}: 'enum'/'const' with values other than strings, integers, booleans, null")
        return Literal[tuple(values)]  # type: ignore[valid-type]

    def _ref(self, ref: Any, path: str) -> Any:
        if ref == "#":
            raise UnsupportedSchema(f"{path}: recursive '$ref' to the root")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise UnsupportedSchema(f"{path}: non-local '$ref' {ref!r}")
        if ref in self.refs:
            raise UnsupportedSchema(f"{path}: recursive '$ref' {ref!r}")
        target: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                raise UnsupportedSchema(f"{path}: '$ref' {ref!r} points nowhere")
            target = target[part]
        self.refs.append(ref)
        try:
            return self.type_of(target, ref)
        finally:
            self.refs.pop()

    # -- objects -----------------------------------------------------------------------------
    def object_model(self, s: Mapping[str, Any], model_name: str, path: str) -> type[pydantic.BaseModel]:
        props = s.get("properties") or {}
        required = s.get("required") or []
        if not isinstance(props, Mapping) or not isinstance(required, list):
            raise UnsupportedSchema(f"{path}: 'properties' must be an object and 'required' a list")
        for keyword in _UNSUPPORTED:
            if keyword in s:
                raise UnsupportedSchema(f"{path}: '{keyword}'")
        extra = s.get("additionalProperties", True)
        fields: dict[str, Any] = {}
        # Generated field names with the property as alias: properties may be keywords ("from"),
        # contain dashes, or shadow BaseModel attributes ("model_config", "copy").
        for i, (prop, sub) in enumerate(props.items()):
            annotation = self.type_of(sub, f"{path}.{prop}" if path != "(root)" else prop)
            if prop in required:
                fields[f"f{i}"] = (annotation, Field(alias=prop))
            else:
                fields[f"f{i}"] = (annotation, Field(default=None, alias=prop))
        missing = [r for r in required if r not in props]
        for j, prop in enumerate(missing):
            fields[f"r{j}"] = (Any, Field(alias=prop))
        config = pydantic.ConfigDict(
            extra="forbid" if extra is False else "allow", regex_engine="python-re", protected_namespaces=(),
        )
        # A typed ``additionalProperties`` next to fixed properties is rare: its extra keys pass
        # through unchecked (the server checks them).
        return pydantic.create_model(model_name, __config__=config, **fields)


__all__ = ["SchemaModel", "UnsupportedSchema", "model_for_schema"]
