"""The public contract (issue 23, item 6): what ``nbagent`` exports, how type checkers see it, and
that the package says it is typed."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import nbagent
from nbagent.engine.contracts.hooks import HOOK_NAMES, HookMap, Hooks

ROOT = Path(__file__).resolve().parents[1]
INIT = ROOT / "nbagent" / "__init__.py"
ANNOTATION_ONLY = frozenset({"NotebookSession"})


def type_checking_imports() -> dict[str, str]:
    """``name -> module`` of every import under ``if TYPE_CHECKING:`` in nbagent/__init__.py."""
    found: dict[str, str] = {}
    for node in ast.parse(INIT.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.level == 1
                for alias in imp.names:
                    if alias.name in ANNOTATION_ONLY and alias.asname is None:
                        continue  # imported to annotate nbagent.session(), not exported
                    assert alias.asname == alias.name  # ``X as X``: an explicit re-export
                    found[alias.name] = f"nbagent.{imp.module}"
    return found


def test_type_checkers_see_exactly_the_lazy_exports() -> None:
    assert type_checking_imports() == nbagent._LAZY


def test_every_public_name_resolves_and_is_the_defining_modules_object() -> None:
    import importlib

    for name in nbagent.__all__:
        value = getattr(nbagent, name)
        if name in nbagent._LAZY:
            assert value is getattr(importlib.import_module(nbagent._LAZY[name]), name)


def test_the_event_union_is_exported_with_each_of_its_classes() -> None:
    from typing import get_args

    assert {cls.__name__ for cls in get_args(nbagent.Event)} <= set(nbagent.__all__)


def test_public_classes_and_functions_have_docstrings() -> None:
    import inspect

    bare = [name for name in nbagent.__all__ if (inspect.isclass(getattr(nbagent, name))
            or inspect.isfunction(getattr(nbagent, name))) and not inspect.getdoc(getattr(nbagent, name))]
    assert bare == []


def test_importing_the_public_names_loads_no_jupyter_and_no_sdk() -> None:
    # Events, tools, hooks and the provider protocol are contracts: naming them costs no SDK import.
    code = ("import sys; from nbagent import Event, Tool, ToolOutput, ToolContext, Provider, HookMap, Done; "
            "print(sorted(m for m in ('anthropic', 'IPython', 'ipywidgets', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_hook_map_names_every_hook_and_the_dict_call_style_still_works() -> None:
    assert set(HookMap.__annotations__) == set(HOOK_NAMES)
    hooks = Hooks.from_mapping({"pre_tool_use": lambda call: None, "on_done": print})
    assert set(hooks.by_name) == {"pre_tool_use", "on_done"}


def test_the_package_ships_py_typed_in_the_wheel() -> None:
    assert (ROOT / "nbagent" / "py.typed").is_file()
    # hatch puts every file under the listed packages into the wheel unless excluded or git-ignored.
    # (A regex, not tomllib: the tests run on Python 3.10 too.)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    wheel = re.search(r"^\[tool\.hatch\.build\.targets\.wheel\]\n(.*?)(?=^\[)", pyproject, re.M | re.S)
    assert wheel is not None and 'packages = ["nbagent"]' in wheel.group(1) and "exclude" not in wheel.group(1)
    ignored = subprocess.run(["git", "check-ignore", "-q", "nbagent/py.typed"], cwd=ROOT)
    assert ignored.returncode == 1  # not ignored


def test_nbagent_session_is_typed_as_the_notebook_session_it_returns() -> None:
    # It was ``-> Any``: the docs' ``nbagent.session().described_variables()`` / ``turns_df()`` were
    # unchecked, a misspelt method or a wrong argument passed a user's mypy.
    import typing

    import nbagent
    from nbagent.notebook.session import NotebookSession

    hints = typing.get_type_hints(nbagent.session, localns={"NotebookSession": NotebookSession})
    assert hints["return"] is NotebookSession


def test_a_type_checker_sees_only_the_exported_names() -> None:
    # A module ``__getattr__`` a type checker can see resolves every name, as ``Any``: ``from nbagent
    # import Agnet`` (or ``RunResult`` before it was exported) passed ``mypy --strict`` and failed
    # when run. The lazy loader is hidden from type checkers, which see the imports above it.
    for node in ast.parse(INIT.read_text(encoding="utf-8")).body:
        visible = [node]
        if isinstance(node, ast.If) and ast.unparse(node.test) == "not TYPE_CHECKING":
            visible = []  # a type checker skips this block
        elif isinstance(node, ast.If):
            visible = [*node.body, *node.orelse]
        assert not any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in visible)


def test_the_errors_the_docs_say_to_catch_are_importable_from_nbagent() -> None:
    # ``except nbagent.SessionClosedError:`` raised AttributeError at the moment the error arrived.
    agent = nbagent.Agent(provider="simulated")
    agent.close()
    try:
        agent.run_sync("hi")
    except nbagent.SessionClosedError as exc:
        assert isinstance(exc, nbagent.NbAgentError) and "closed" in str(exc)
    for name in ("RunInProgressError", "TaskFolderLockedError", "SettingNotSupported", "EndpointError",
                 "AdminLockedError", "DailyBudgetSpentError"):
        assert issubclass(getattr(nbagent, name), nbagent.NbAgentError)
    assert issubclass(nbagent.ContextPolicyError, ValueError)  # bad arguments: Python's own kind (docs/api.md)
    with pytest.raises(nbagent.ContextPolicyError):
        nbagent.Agent(provider="simulated", context={"mask": "keep=2"})
    assert isinstance(nbagent.Agent(provider="simulated").run_sync("What is 2 * 3?"), nbagent.RunResult)
