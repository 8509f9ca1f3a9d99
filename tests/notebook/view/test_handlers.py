"""Every engine event kind has a view handler, and handlers use only the view's public surface."""

from __future__ import annotations

import ast
import inspect
import typing

from nbagent.engine.contracts import events as ev
from nbagent.notebook.view import handlers
from nbagent.notebook.view.agent_view import AgentView


def test_every_event_kind_of_the_engine_has_a_view_handler() -> None:
    kinds = {cls.__dataclass_fields__["kind"].default for cls in typing.get_args(ev.Event)}
    assert kinds == set(handlers.HANDLERS), "an event kind without a handler is dropped silently by the view"


def test_each_handler_takes_the_event_type_of_its_kind() -> None:
    for kind, handler in handlers.HANDLERS.items():
        hints = typing.get_type_hints(handler, vars(handlers) | {"AgentView": AgentView})
        assert hints["e"] is ev.EVENT_TYPES[kind], kind


def test_handlers_reach_no_private_member_of_the_view() -> None:
    tree = ast.parse(inspect.getsource(handlers))
    private = sorted({node.attr for node in ast.walk(tree)
                      if isinstance(node, ast.Attribute) and node.attr.startswith("_")
                      and isinstance(node.value, (ast.Name, ast.Attribute))
                      and ast.unparse(node.value).startswith("view")})
    assert private == []
