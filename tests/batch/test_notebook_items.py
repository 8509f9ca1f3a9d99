"""``python -m nbagent.batch --notebook NB``: a parameterised agent notebook per item, on the
nbagent kernel, its sessions kept in the item's task folder and counted in the table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from nbagent.batch.item import ItemSpec
from nbagent.batch.notebook_item import parameters_source, with_parameters

ROOT = Path(__file__).resolve().parents[2]


def notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell('item = "example.csv"\nprompt = "Look at it."', metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("import pandas as pd\ndf = pd.read_csv(item)\nlen(df)"),
        nbformat.v4.new_code_cell('get_ipython().run_cell_magic("agent", "", prompt + " What is 2 * 3?")'),
    ]
    nbformat.write(nb, str(path))
    return path


def test_the_parameters_go_after_the_tagged_cell_as_literals(tmp_path: Path) -> None:
    nb = nbformat.read(str(notebook(tmp_path / "nb.ipynb")), as_version=4)
    spec = ItemSpec(item=str(tmp_path / "a'b.csv"), folder=str(tmp_path), prompt='Say "hi"', provider="simulated",
                    max_budget_usd=0.25)
    source = parameters_source(spec, tmp_path / "task")
    with_parameters(nb, source)
    assert nb.cells[1].source == source and "injected-parameters" in nb.cells[1].metadata["tags"]
    namespace: dict = {}
    exec("\n".join(line for line in source.splitlines() if not line.startswith("%")), namespace)  # noqa: S102
    assert namespace["item"].endswith("a'b.csv") and namespace["prompt"] == 'Say "hi"'
    assert "%config AgentMagics.max_budget = 0.25" in source


def test_the_prompt_names_the_item_where_its_template_says_item(tmp_path: Path) -> None:
    # classroom.md's "Check {item} for missing values" reached the model as "Check {item} …" in a notebook item.
    spec = ItemSpec(item=str(tmp_path / "d1.csv"), folder=str(tmp_path), prompt="Check {item} for missing values.",
                    provider="simulated")
    namespace: dict = {}
    source = parameters_source(spec, tmp_path / "task")
    exec("\n".join(line for line in source.splitlines() if not line.startswith("%")), namespace)  # noqa: S102
    assert namespace["prompt"] == "Check d1.csv for missing values."


@pytest.mark.kernel
def test_a_notebook_per_item_fills_the_same_table(tmp_path: Path) -> None:
    items = []
    for i in range(2):
        path = tmp_path / f"d{i}.csv"
        path.write_text("x,y\n1,2\n3,4\n")
        items.append(str(path))
    items.append(str(tmp_path / "missing.csv"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": ""}
    out = tmp_path / "runs"
    done = subprocess.run([sys.executable, "-m", "nbagent.batch", "Look at it.", *items, "--out", str(out),
                           "--jobs", "2", "--provider", "simulated", "--notebook", str(notebook(tmp_path / "nb.ipynb"))],
                          capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert done.returncode == 1 and "2/3 answered" in done.stdout, (done.stdout, done.stderr)
    rows = [json.loads((f / "result.json").read_text()) for f in sorted(out.iterdir()) if f.is_dir()]
    answered = [r for r in rows if r["outcome"] == "end_turn"]
    assert len(answered) == 2 and all(r["requests"] >= 1 and r["cost_usd"] > 0 for r in answered)
    executed = nbformat.read(str(sorted(out.iterdir())[0] / "executed.ipynb"), as_version=4)
    assert "6" in json.dumps(executed.cells[-1].outputs)  # the agent answered in the notebook


@pytest.mark.kernel
def test_a_notebook_item_runs_the_models_code_only_when_allow_names_it(tmp_path: Path) -> None:
    """Nobody watches a fleet: the model's python call is denied unless --allow names it (autorun
    pressed Allow on every question; attacker pass 6, F3)."""
    (tmp_path / "sales.csv").write_text("region,revenue\nnorth,1\nsouth,2\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell('item = "x.csv"', metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("import pandas as pd\nsales = pd.read_csv(item)"),
                nbformat.v4.new_code_cell('get_ipython().run_cell_magic("agent", "", '
                                          '"Which region has the largest total revenue in `sales`?")')]
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": ""}
    made = {}
    for name, extra in (("denied", []), ("allowed", ["--allow", "python"])):
        out = tmp_path / name
        done = subprocess.run([sys.executable, "-m", "nbagent.batch", "p", str(tmp_path / "sales.csv"), "--out",
                               str(out), "--provider", "simulated", "--notebook", str(tmp_path / "nb.ipynb"), *extra],
                              capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
        assert done.returncode == 0, (done.stdout, done.stderr)
        executed = nbformat.read(str(next(out.glob("*/executed.ipynb"))), as_version=4)
        made[name] = [c for c in executed.cells if c.metadata.get("nbagent", {}).get("kind") == "code"]
    assert made["denied"] == []  # on the old code the groupby ran and became a cell
    assert len(made["allowed"]) == 1 and "south" in json.dumps(made["allowed"][0].outputs)


@pytest.mark.kernel
def test_a_template_cells_click_metadata_does_not_allow_what_allow_does_not_name(tmp_path: Path) -> None:
    """A template notebook from elsewhere whose agent cell says ``{"nbagent": {"click": ["Allow"]}}``:
    autorun pressed Allow on that cell's questions although the batch answers Deny, so the model's
    python call ran unasked (attacker pass 10)."""
    (tmp_path / "sales.csv").write_text("region,revenue\nnorth,1\nsouth,2\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell('item = "x.csv"', metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("import pandas as pd\nsales = pd.read_csv(item)"),
                nbformat.v4.new_code_cell('get_ipython().run_cell_magic("agent", "", '
                                          '"Which region has the largest total revenue in `sales`?")',
                                          metadata={"nbagent": {"click": ["Allow always (this session)", "Allow"]}})]
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": ""}
    out = tmp_path / "runs"
    done = subprocess.run([sys.executable, "-m", "nbagent.batch", "p", str(tmp_path / "sales.csv"), "--out",
                           str(out), "--provider", "simulated", "--notebook", str(tmp_path / "nb.ipynb")],
                          capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, (done.stdout, done.stderr)
    executed = nbformat.read(str(next(out.glob("*/executed.ipynb"))), as_version=4)
    assert [c for c in executed.cells if c.metadata.get("nbagent", {}).get("kind") == "code"] == []


@pytest.mark.kernel
def test_an_items_folder_recorded_answer_is_not_replayed_as_the_items(tmp_path: Path) -> None:
    """An item's folder is data a submitter controls: its ``.nbagent/`` record of the template's
    agent cell (made by running the template there, then edited at will) is never shown as the item's
    answer. On the old code the batch replayed it: 0 requests, counted as answered (attacker pass 8)."""
    item, template = tmp_path / "item", tmp_path / "nb.ipynb"
    item.mkdir()
    (item / "data.csv").write_text("x,y\n1,2\n3,4\n")
    notebook(template)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": ""}
    # The submitter's record: the parameterised template run in the item's folder, recorded there.
    forged = with_parameters(nbformat.read(str(template), as_version=4),
                             "item = 'data.csv'\nprompt = 'Look at it.'\n%config AgentMagics.provider = 'simulated'")
    nbformat.write(forged, str(item / "parameterised.ipynb"))
    subprocess.run([sys.executable, "-m", "nbagent.notebook.autorun", "parameterised.ipynb", str(tmp_path / "rec.ipynb")],
                   check=True, capture_output=True, env=env, timeout=600, cwd=item)
    assert list((item / ".nbagent" / "replay").glob("*.json"))  # the record the batch must not replay
    out = tmp_path / "runs"
    done = subprocess.run([sys.executable, "-m", "nbagent.batch", "Look at it.", str(item / "data.csv"), "--out", str(out),
                           "--provider", "simulated", "--notebook", str(template)],
                          capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, (done.stdout, done.stderr)
    row = json.loads(next(out.glob("*/result.json")).read_text())
    executed = nbformat.read(str(next(out.glob("*/executed.ipynb"))), as_version=4)
    assert "replayed" not in json.dumps(executed.cells[-1].outputs)
    assert row["requests"] >= 1  # asked the model: 0 on the old code


def test_a_symlinked_item_runs_in_the_folder_it_is_listed_in_not_where_it_points(tmp_path: Path, monkeypatch) -> None:
    """A submission's ``data.csv -> ~/project/answers.csv``: the kernel works in the submissions folder, as a
    prompt item's Agent does. On the old code it worked in ``~/project`` (its AGENTS.md, its files for the
    model's tools; attacker pass 8)."""
    from nbagent.batch import notebook_item
    from nbagent.notebook import autorun

    project, submitted = tmp_path / "project", tmp_path / "submitted"
    project.mkdir()
    submitted.mkdir()
    (project / "answers.csv").write_text("x\n1\n")
    (submitted / "data.csv").symlink_to(project / "answers.csv")
    seen: dict[str, object] = {}
    monkeypatch.setattr(autorun, "run_notebook", lambda *args, **kwargs: seen.update(kwargs))
    spec = ItemSpec(item=str(submitted / "data.csv"), folder=str(tmp_path / "out"), prompt="p", provider="simulated",
                    notebook=str(notebook(tmp_path / "nb.ipynb")))
    (tmp_path / "out").mkdir()

    notebook_item.run_notebook_item(spec)

    assert seen["cwd"] == submitted.resolve()


@pytest.mark.kernel
def test_a_template_that_carries_its_authors_record_asks_the_model_for_each_item(tmp_path: Path) -> None:
    """A template run once before (autorun or JupyterLab writes each agent cell's signed record into
    its metadata, which autorun sends back with the cell): every item asks the model, relative
    ``--out`` included. On the old code each item replayed the author's answer (0 requests), and a
    relative ``--out`` put the item's sessions into the item's folder, counted as 0 (attacker pass 8)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": ""}
    (tmp_path / "example.csv").write_text("x,y\n1,2\n")
    dev = notebook(tmp_path / "dev.ipynb")
    dev_nb = nbformat.read(str(dev), as_version=4)
    dev_nb.cells[0].source += "\n%config AgentMagics.provider = 'simulated'"
    nbformat.write(dev_nb, str(dev))
    subprocess.run([sys.executable, "-m", "nbagent.notebook.autorun", "dev.ipynb", "template.ipynb"],
                   check=True, capture_output=True, env=env, timeout=600, cwd=tmp_path)
    template = nbformat.read(str(tmp_path / "template.ipynb"), as_version=4)
    assert any("record" in c.metadata.get("nbagent", {}) for c in template.cells)
    items = tmp_path / "items"
    items.mkdir()
    (items / "d.csv").write_text("x,y\n5,6\n")

    done = subprocess.run([sys.executable, "-m", "nbagent.batch", "Look at it.", "items/d.csv", "--out", "runs",
                           "--provider", "simulated", "--notebook", "template.ipynb"],
                          capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)

    assert done.returncode == 0, (done.stdout, done.stderr)
    row = json.loads(next((tmp_path / "runs").glob("*/result.json")).read_text())
    assert row["requests"] >= 1 and row["cost_usd"] > 0
    assert sorted(p.name for p in items.iterdir()) == ["d.csv"]  # nothing written into the item's folder


@pytest.mark.kernel
def test_a_template_agent_cell_above_its_parameters_runs_with_the_items_settings_and_is_counted(
        tmp_path: Path, monkeypatch) -> None:
    """The injected ``%config`` lines came after the tagged cell only: an agent cell above it ran with
    your defaults (no per-item budget, ``record`` on), its session went into the submitted item's
    folder, and the row counted none of it: 0 requests, $0 (attacker pass 18)."""
    from nbagent.batch.notebook_item import run_notebook_item

    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "key"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    items = tmp_path / "submitted"
    items.mkdir()
    (items / "data.csv").write_text("a,b\n1,2\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%%agent\nhello there"),
                nbformat.v4.new_code_cell("item = None", metadata={"tags": ["parameters"]})]
    template = tmp_path / "template.ipynb"
    nbformat.write(nb, str(template))

    row = run_notebook_item(ItemSpec(item=str(items / "data.csv"), folder=str(tmp_path / "out"), prompt="p",
                                     provider="simulated", notebook=str(template)))

    assert row["outcome"] == "end_turn" and row["requests"] == 1, row
    assert not (items / ".nbagent").exists()  # nothing written into the submitted folder


@pytest.mark.kernel
@pytest.mark.parametrize("parameters_first", [True, False], ids=["parameters first", "a cell above the parameters"])
def test_a_submitted_folders_optional_dependency_does_not_run_when_the_template_imports_pandas(
        tmp_path: Path, monkeypatch, parameters_first: bool) -> None:
    """The kernel works in the submitted item's folder: a template's ``import pandas`` took pandas's
    optional dependencies from it (a submitted ``pyarrow.py`` ran on the teacher's machine; attacker
    pass 19). The injected cell imports them first, never from the folder."""
    from nbagent.batch.notebook_item import run_notebook_item

    monkeypatch.setenv("NBAGENT_REPLAY_KEY_FILE", str(tmp_path / "key"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    items, marker = tmp_path / "submitted", tmp_path / "ran.txt"
    items.mkdir()
    (items / "data.csv").write_text("a,b\n1,2\n")
    for name in ("pyarrow", "numexpr", "bottleneck", "pytz"):
        (items / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r} + ' ')\nraise ImportError('x')\n")
    (items / "solution.py").write_text("ANSWER = 42\n")  # the template may still import the submission's own module
    nb = nbformat.v4.new_notebook()
    reading = nbformat.v4.new_code_cell("import pandas as pd\nimport solution\nprint(len(pd.read_csv(item)), solution.ANSWER)")
    parameters = nbformat.v4.new_code_cell("item = None", metadata={"tags": ["parameters"]})
    nb.cells = [parameters, reading] if parameters_first else [nbformat.v4.new_code_cell("x = 1"), parameters, reading]
    template = tmp_path / "template.ipynb"
    nbformat.write(nb, str(template))

    row = run_notebook_item(ItemSpec(item=str(items / "data.csv"), folder=str(tmp_path / "out"), prompt="p",
                                     provider="simulated", notebook=str(template)))

    assert row["outcome"] == "end_turn", row
    executed = nbformat.read(str(tmp_path / "out" / "executed.ipynb"), as_version=4)
    assert "1 42" in json.dumps(executed.cells[-1].outputs)
    assert not marker.exists(), marker.read_text()
