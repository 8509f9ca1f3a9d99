"""The house rule "arrows point down" (architecture.md, issue 4 test 10): ``nbagent/engine/`` imports
no IPython, ipywidgets or pandas, no SDK (``anthropic``, ``httpx2``: providers translate it), and nothing
above it (tools, notebook, providers, agent, kernel)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "nbagent" / "engine"
FORBIDDEN = (
    "IPython", "ipywidgets", "ipykernel", "pandas", "matplotlib", "anthropic", "httpx2",
    "nbagent.tools", "nbagent.notebook", "nbagent.providers", "nbagent.kernel", "nbagent.agent",
    "nbagent.console", "nbagent.demo",
)


def is_forbidden(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FORBIDDEN)


def package_of(path: Path) -> str:
    """The dotted package a source file belongs to (``nbagent.engine.loop`` for ``loop/query.py``)."""
    rel = path.resolve().relative_to(ROOT).with_suffix("").parts
    return ".".join(rel[:-1]) if rel[-1] != "__init__" else ".".join(rel[:-1])


def imported_modules(path: Path, package: str | None = None) -> list[tuple[int, str]]:
    """Every module a source file imports, at any depth (function bodies too), made absolute."""
    package = package or (package_of(path) if path.resolve().is_relative_to(ROOT) else "nbagent.engine")
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            # ``from .. import tools`` imports the submodule nbagent.tools.
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            found.append((node.lineno, str(node.args[0].value)))
    return found


def test_the_ast_scan_sees_every_kind_of_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import pandas as pd\nfrom ..tools import files\nfrom .. import notebook\n"
                      "def f():\n    from IPython import display\n    importlib.import_module('ipywidgets')\n")
    mods = [m for _, m in imported_modules(sample)]
    assert all(is_forbidden(m) for m in ["pandas", "nbagent.tools", "nbagent.notebook", "IPython", "ipywidgets"])
    assert {"pandas", "nbagent.tools", "nbagent.notebook", "IPython", "ipywidgets"} <= set(mods)


def test_engine_sources_import_nothing_above_the_engine() -> None:
    files = sorted(ENGINE.rglob("*.py"))  # every folder of the engine, context/ and loop/ included
    assert len(files) > 40
    bad = [f"{p.relative_to(ENGINE)}:{line}: {mod}" for p in files for line, mod in imported_modules(p)
           if is_forbidden(mod)]
    assert bad == []


# The engine's folders, bottom up: a folder may import its own modules and those of the folders its
# row names, nothing else. The contracts (what plug-ins implement and front-ends consume) and the
# Messages API's facts form the base; the loop is the only folder that sees everything.
ENGINE_LAYERS = {
    "contracts": {"contracts", "api_facts"},
    "api_facts": {"contracts", "api_facts"},
    "disk": {"contracts", "disk"},
    # which texts name a credential: read by the loop's sanitising boundary, beside the rest
    "credentials": {"contracts", "disk", "credentials"},
    "context": {"contracts", "api_facts", "disk", "context"},
    "state": {"contracts", "api_facts", "disk", "context", "state"},
    "loop": {"contracts", "api_facts", "disk", "credentials", "context", "state", "loop"},
}


def engine_folder(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["nbagent", "engine"] else None


def test_engine_folders_import_only_the_layers_below_them() -> None:
    assert {p.name for p in ENGINE.iterdir() if p.is_dir() and p.name != "__pycache__"} == set(ENGINE_LAYERS)
    assert sorted(p.name for p in ENGINE.glob("*.py")) == ["__init__.py"]  # every module lives in a role folder
    bad = []
    for folder, allowed in ENGINE_LAYERS.items():
        for path in sorted((ENGINE / folder).rglob("*.py")):
            for line, mod in imported_modules(path):
                target = engine_folder(mod)
                if target is not None and target in ENGINE_LAYERS and target not in allowed:
                    bad.append(f"{path.relative_to(ENGINE)}:{line}: {mod}")
    assert bad == []


def test_the_layer_check_sees_a_relative_import_from_a_subfolder(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from ..loop.query import QueryEngine\nfrom .events import Done\n")
    mods = [m for _, m in imported_modules(sample, package="nbagent.engine.state")]
    assert mods[0] == "nbagent.engine.loop.query" and engine_folder(mods[0]) == "loop"
    assert "nbagent.engine.state.events" in mods


CHECK = """
import json, sys, types
from pathlib import Path
if {isolate}:
    # Import the engine without running nbagent/__init__.py: the engine's own import closure.
    pkg = types.ModuleType("nbagent")
    pkg.__path__ = [str(Path({root!r}) / "nbagent")]
    sys.modules["nbagent"] = pkg
import importlib
engine = Path({root!r}) / "nbagent" / "engine"
for source in sorted(engine.rglob("*.py")):
    parts = source.relative_to(engine).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    importlib.import_module(".".join(("nbagent", "engine", *parts)))
print(json.dumps(sorted(sys.modules)))
"""


def loaded_after_import(isolate: bool) -> list[str]:
    out = subprocess.run([sys.executable, "-c", CHECK.format(isolate=isolate, root=str(ROOT))], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_importing_the_engine_loads_nothing_above_it() -> None:
    loaded = loaded_after_import(isolate=True)
    assert "nbagent.engine.loop.query" in loaded
    assert [m for m in loaded if is_forbidden(m)] == []


def test_importing_the_engine_through_the_package_loads_nothing_above_it() -> None:
    loaded = loaded_after_import(isolate=False)
    assert [m for m in loaded if is_forbidden(m)] == []


def test_loading_the_extension_imports_no_heavy_package_it_does_not_need_yet() -> None:
    # %load_ext and the nbagent kernel's start must stay close to a stock kernel's (issue 13, P6):
    # the SDK, MCP, jsonschema (≈1 s of format checkers) and pandas load on first use only.
    code = ("import sys; import nbagent.notebook.magics, nbagent.kernel.kernel; "
            "print(sorted(m for m in ('anthropic', 'httpx2', 'mcp', 'jsonschema', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# What the engine may contribute to a kernel's start: its plain-data settings (defaults, model facts,
# errors), which the magics' traitlets and option parsers need. Not the Agent, the loop, the state,
# the context manager or the pydantic message models (≈120 ms, issue 28): the first prompt loads those.
ENGINE_AT_START = {
    "nbagent.engine", "nbagent.engine.api_facts", "nbagent.engine.api_facts.models",
    "nbagent.engine.api_facts.request_params", "nbagent.engine.contracts", "nbagent.engine.contracts.config",
    "nbagent.engine.contracts.errors",
    # the context policy setting (the magics' --context and traitlet) and the API's edit constants
    "nbagent.engine.contracts.context_policy", "nbagent.engine.api_facts.context_edits",
}
KERNEL_START = """
import json, sys
from IPython.core.interactiveshell import InteractiveShell
from nbagent.kernel.kernel import NbAgentKernel
before = set(sys.modules)
shell = InteractiveShell.instance()
kernel = NbAgentKernel.__new__(NbAgentKernel)  # only its start step: no sockets needed
kernel.shell = shell
assert kernel._load_extension(), "the extension did not load"
assert "agent" in shell.magics_manager.magics["cell"], "%%agent was not registered"
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_the_kernel_start_registers_the_magics_without_importing_the_engine() -> None:
    out = subprocess.run([sys.executable, "-c", KERNEL_START], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    engine = {m for m in loaded if m == "nbagent.engine" or m.startswith("nbagent.engine.")}
    assert engine <= ENGINE_AT_START, sorted(engine - ENGINE_AT_START)
    heavy = ("nbagent.agent", "nbagent.providers", "nbagent.tools", "pydantic", "tiktoken", "anthropic")
    assert [m for m in loaded if m.split(".")[0] in heavy or m.startswith(heavy)] == []


# --- the package graph (issue 23, item 5) --------------------------------------------------------
# One node per top-level package (engine, display, tools, providers, notebook, explorer, kernel) or
# top-level module (agent, console, ...); ``nbagent`` is the facade (__init__.py). An edge A → B means
# some module of A imports some module of B, at any depth, relative or absolute.
PACKAGE = ROOT / "nbagent"
FACADE = "nbagent"


def package_nodes() -> set[str]:
    return {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}


def node_of(module: str, nodes: set[str]) -> str | None:
    """The node a dotted nbagent module belongs to; a name the facade exports is the facade."""
    parts = module.split(".")
    if parts[0] != "nbagent":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in nodes else FACADE


def facade_targets(path: Path) -> list[str]:
    # The facade imports its exports lazily, by name in a dict (``_LAZY``): those names are edges too.
    return [n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("nbagent.")]


def package_graph() -> dict[str, set[str]]:
    nodes = package_nodes()
    graph: dict[str, set[str]] = {node: set() for node in nodes | {FACADE}}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).parts
        source = FACADE if rel == ("__init__.py",) else rel[0].removesuffix(".py")
        mods = [m for _, m in imported_modules(path)] + (facade_targets(path) if source == FACADE else [])
        graph[source] |= {t for m in mods if (t := node_of(m, nodes)) not in (None, source)}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle as a path ``[a, b, …, a]``, or ``[]`` when the graph has none (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return []

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return []


def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a", "c"}}) == []
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_package_graph_sees_every_package_and_relative_imports() -> None:
    graph = package_graph()
    assert {"engine", "display", "tools", "providers", "notebook", "explorer", "kernel", "agent", "console"} <= set(graph)
    assert "display" in graph["explorer"] and "explorer" in graph["notebook"] and "engine" in graph["display"]
    assert "agent" in graph[FACADE]  # through the lazy exports


def test_the_package_import_graph_has_no_cycle() -> None:
    assert find_cycle(package_graph()) == []


def test_the_explorer_imports_neither_the_notebook_nor_the_providers() -> None:
    # The explorer replays the engine's own context manager; the caching facts it needs are in
    # engine/api_facts, not in the simulated server.
    assert package_graph()["explorer"] <= {"engine", "display"}


def test_display_imports_no_front_end_and_no_widgets() -> None:
    bad = [f"{p.relative_to(PACKAGE)}:{line}: {mod}" for p in sorted((PACKAGE / "display").rglob("*.py"))
           for line, mod in imported_modules(p)
           if mod.split(".")[0] in ("ipywidgets", "ipykernel")
           or node_of(mod, package_nodes()) not in (None, "display", "engine")]
    assert bad == []


# --- the module graph: no import circle between files (issue 37) ---------------------------------
# One node per module of nbagent/ (a package is its __init__.py). Every import counts, wherever it is:
# at the top, under ``if TYPE_CHECKING:`` (a circle there is still two modules that each need the other
# to be understood, and mypy follows it) and inside a function (a deferred import hides a circle from
# Python's loader, not from a reader). ``from pkg import name`` is an edge to ``pkg.name`` when that is
# a module and to ``pkg`` otherwise; importing a submodule is not counted as importing its parent
# package's __init__ (Python runs it first, but that is the loader's order, not a dependency).


def module_name(path: Path) -> str:
    parts = path.resolve().relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_imports(path: Path, known: set[str], package: str | None = None) -> set[str]:
    """The modules of ``known`` that one source file imports, at any depth."""
    package = package or package_of(path)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            module = (f"{base}.{node.module}" if node.module else base) if node.level else node.module or ""
            found |= {f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names}
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            found.add(str(node.args[0].value))
    return found & known


def module_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    known = set(files)
    return {name: module_imports(path, known) - {name} for name, path in files.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            nxt = next((t for t in targets if t not in index or t in on_stack), None)
            if nxt is not None and nxt not in index:
                index[nxt] = low[nxt] = len(index)
                stack.append(nxt)
                on_stack.add(nxt)
                work.append((nxt, iter(sorted(graph.get(nxt, ())))))
            elif nxt is not None:
                low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def test_the_component_finder_finds_every_circle_and_only_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": {"f", "a"}, "g": set()}
    assert strongly_connected(graph) == [["a", "b", "c"], ["d", "e"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_the_module_graph_counts_deferred_and_type_checking_imports(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from typing import TYPE_CHECKING\nfrom . import a\nfrom .b import name\n"
                      "if TYPE_CHECKING:\n    from .c import C\ndef f():\n    from ..d import e\n")
    known = {"p.q", "p.q.a", "p.q.b", "p.q.c", "p.d", "p.d.e"}
    assert module_imports(sample, known, package="p.q") == {"p.q.a", "p.q.b", "p.q.c", "p.d.e"}
    graph = module_graph()
    assert "nbagent.engine.loop.query" in graph["nbagent.agent"]



def test_no_module_of_the_package_imports_itself_back_through_others() -> None:
    graph = module_graph()
    circles = [
        " <-> ".join(component) + "\n    " + ", ".join(
            f"{a} -> {b}" for a in component for b in sorted(graph[a] & set(component)))
        for component in strongly_connected(graph)]
    assert circles == [], "import circles (and the imports that close them):\n" + "\n".join(circles)
