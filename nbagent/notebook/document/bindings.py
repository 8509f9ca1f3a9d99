"""Which names a statement of the agent's code surely binds when it completes: what makes a
variable the turn's own rather than an input (:class:`~.inputs.TurnWatch`, docs/replay.md)."""

from __future__ import annotations

import ast


def surely_bound(statement: ast.stmt) -> list[str]:
    """The names a top-level statement binds whenever it completes: plain-name targets of ``=`` (and
    of tuple unpacking), ``x: T = v``, ``import``, ``def`` and ``class``. Not a ``for``/``with``
    target, a name bound inside a compound statement's body, ``+=`` (it reads first), nor a walrus."""
    if isinstance(statement, ast.Assign):
        return [n.id for target in statement.targets for n in _target_names(target)]
    if isinstance(statement, ast.AnnAssign) and statement.value is not None:
        return [statement.target.id] if isinstance(statement.target, ast.Name) else []
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in statement.names if a.name != "*"]
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    return []


def _target_names(target: ast.expr) -> list[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _target_names(element)]
    return []  # `sales["x"] = 1`, `obj.attr = 1`: a change to an existing value, not a new name


__all__ = ["surely_bound"]
