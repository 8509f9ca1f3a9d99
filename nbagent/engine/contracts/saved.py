"""How a record the task folder keeps is checked on load: the frozen dataclass *is* the schema.

Every saved record and event is a frozen dataclass marked :func:`saved_record`; the writer turns it
into JSON with ``dataclasses.asdict`` and the loader validates the JSON through one pydantic
``TypeAdapter`` of the same class (:func:`validate_saved`), so the two can never drift apart.

Unknown keys are refused (``extra="forbid"``): a key this version does not know means a folder
written by a newer version (or edited by hand), and loading it would drop that key on the next
rewrite, silently losing what the newer version kept; refusing names the file and the field
instead. (``Spent`` is the one exception, documented there.)
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Annotated, Any, TypeVar, Union

import pydantic

_T = TypeVar("_T")

SAVED_CONFIG = pydantic.ConfigDict(strict=True, extra="forbid")
"""Strict types, unknown keys refused. Validation runs in JSON mode (:func:`validate_saved`), where
strict still turns a JSON object into the dataclass and a JSON array into a tuple."""

NonNegInt = Annotated[int, pydantic.Field(ge=0)]
"""A count (tokens, requests, an index): a negative one in a file is corrupt."""

Number = Union[int, float]
"""A JSON number kept as written: strict ``float`` validation would turn ``5`` into ``5.0``, and a file
rewritten after loading (a rollback rewrites the logs) would then differ from the one first written."""

MAX_MONEY_USD = 1_000_000.0
"""More than any session or request is billed. Beyond about 1e15 a float cannot hold a request's cost
added to it: a received (or edited) ``session.json`` saying ``"spent": 1e18`` made every later request's
cost vanish into the sum, so the prompt's budget and the administrator's day cap (both measured as the
sum's growth) never moved, and the day's ledger never grew."""

Money = Annotated[float, pydantic.Field(ge=0, le=MAX_MONEY_USD, allow_inf_nan=False)]
"""Money spent: NaN, an infinity, a negative sum or one above :data:`MAX_MONEY_USD` would switch a
budget off (every comparison with NaN is false; see there), so a file holding one is refused."""


def saved_record(cls: type[_T]) -> type[_T]:
    """Mark a dataclass as a saved record: validated with :data:`SAVED_CONFIG` on load."""
    return pydantic.with_config(SAVED_CONFIG)(cls)


@lru_cache(maxsize=None)
def adapter(shape: Any) -> pydantic.TypeAdapter[Any]:  # Any: a type form (a class, list[X], Annotated[...])
    """The one ``TypeAdapter`` of ``shape`` (built once: building one costs milliseconds)."""
    return pydantic.TypeAdapter(shape)


def validate_saved(shape: object, data: object) -> Any:
    """``data`` (loaded from JSON) validated as ``shape``; raises ``pydantic.ValidationError``.

    Validated as the JSON it came from: strict mode in Python mode would refuse a dict for a
    dataclass and a list for a tuple, which is exactly how JSON holds them.
    """
    return adapter(shape).validate_json(json.dumps(data))


def first_error(exc: pydantic.ValidationError) -> str:
    """The first problem of a validation error, as ``field a.b: message (and N more)``."""
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ())) or "(top level)"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"field {loc}: {err.get('msg')}{more}"

