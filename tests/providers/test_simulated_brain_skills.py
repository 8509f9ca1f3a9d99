"""The demo brain's notebook skills through the real SDK against the simulated API: fixing a
misspelt column after a failed cell, loading a CSV with pandas, plotting, and multi-line output.

The kernel facts are given as the notebook layer gives them (a :class:`NotebookState`), and the
python tool runs in a :class:`NamespaceExecutor` holding the user's variables.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from nbagent import Agent
from nbagent.engine.contracts.events import Done, ToolUse
from nbagent.engine.contracts.messages import ToolResultBlockParam
from nbagent.engine.loop.facts import NotebookState, VariableInfo
from nbagent.providers.simulated import SimulatedAPI
from nbagent.tools.executor import NamespaceExecutor

from ._messages import list_content

SALES = pd.DataFrame({"region": ["north", "south", "north"], "revenue": [120.0, 95.5, 130.25], "units": [12, 9, 13]})
# What ``%agent fix`` sends (nbagent.notebook.fix_prompt.FIX_PROMPT), kept literal: the brain must read it as sent.
FIX = ("The notebook cell In[{cell}] failed. Explain the cause in one or two sentences, then fix it: check the "
       "corrected code with the python tool, and end with the corrected cell as one python code block.\n\n{error}")


def failure(source: str, namespace: dict[str, Any], cell: int = 4) -> str:
    """The last-error text as the notebook builds it: the exception, the cell, the last frames
    (here of pandas' own files, like ``pandas/core/frame.py``)."""
    try:
        exec(compile(source, "<cell>", "exec"), namespace)
    except Exception as error:
        frames = "".join(traceback.format_exception(type(error), error, error.__traceback__, limit=-3))
        return f"In[{cell}] raised {type(error).__name__}: {error}\n{source}\n{frames}"
    raise AssertionError("the cell did not fail")


def facts_of(namespace: dict[str, Any], last_error: str | None = None) -> Any:
    def facts() -> NotebookState:
        found = [VariableInfo(k, type(v).__name__, f"shape {v.shape}, columns {list(v.columns)}")
                 for k, v in namespace.items() if isinstance(v, pd.DataFrame)]
        return NotebookState(found, [], last_error)
    return facts


def agent_on(namespace: dict[str, Any], tmp_path: Path, last_error: str | None = None) -> Agent:
    return Agent(provider="simulated", simulated_options={"api": SimulatedAPI()}, cwd=tmp_path, allow=["python"],
                 executor=NamespaceExecutor(namespace), kernel_facts=facts_of(namespace, last_error))


async def run(agent: Agent, prompt: str) -> tuple[list[ToolUse], str]:
    events = [e async for e in agent.run(prompt)]
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "end_turn", done
    texts = assistant_texts(agent)
    assert texts and all(t.startswith("(simulated model)") for t in texts)  # honest in every reply
    return [e for e in events if isinstance(e, ToolUse)], texts[-1]


def assistant_texts(agent: Agent) -> list[str]:
    return [b["text"] for m in agent.history if m["role"] == "assistant" for b in list_content(m) if b["type"] == "text"]


def results(agent: Agent) -> list[ToolResultBlockParam]:
    return [b for m in agent.history if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b["type"] == "tool_result"]


def code_of(call: ToolUse) -> str:
    """The code of a python tool call."""
    assert isinstance(call.input, dict), call
    code = call.input["code"]
    assert isinstance(code, str), call
    return code


async def test_fix_names_the_misspelt_column_and_runs_the_corrected_cell(tmp_path: Path) -> None:
    ns: dict[str, Any] = {"df": SALES.copy()}
    error = failure("df.groupby('regoin')['revenue'].sum()", ns)
    assert "pandas/core" in error.replace("\\", "/")  # the traceback's frames are pandas' files
    agent = agent_on(ns, tmp_path)
    calls, answer = await run(agent, FIX.format(cell=4, error=error))
    assert [c.input for c in calls] == [{"code": "df.groupby('region')['revenue'].sum()"}]
    assert not any(r.get("is_error") for r in results(agent))  # no NameError on a `frame` from a path
    assert "'regoin'" in answer and "typo for 'region'" in answer
    assert answer.rstrip().endswith("```python\ndf.groupby('region')['revenue'].sum()\n```")
    exec(code_of(calls[-1]), dict(ns))  # the code --insert-code would insert runs


async def test_fix_corrects_a_misspelt_variable_and_admits_what_it_cannot_fix(tmp_path: Path) -> None:
    ns: dict[str, Any] = {"sales": SALES.copy()}
    calls, answer = await run(agent_on(ns, tmp_path), FIX.format(cell=2, error=failure("sale.head()", ns)))
    assert [code_of(c) for c in calls] == ["sales.head()"] and "typo for `sales`" in answer
    calls, answer = await run(agent_on(ns, tmp_path / "b"), FIX.format(cell=3, error=failure("sales['zzz']", ns)))
    assert calls == [] and "cannot guess" in answer and "region, revenue, units" in answer
    calls, answer = await run(agent_on(ns, tmp_path / "c"), FIX.format(cell=5, error=failure("1 / 0", ns)))
    assert calls == [] and "ZeroDivisionError" in answer and "not a language model" in answer


async def test_why_did_my_cell_fail_uses_the_last_error_in_the_facts(tmp_path: Path) -> None:
    ns: dict[str, Any] = {"df": SALES.copy()}
    agent = agent_on(ns, tmp_path, last_error=failure("df['Revenue'].mean()", ns))
    calls, answer = await run(agent, "Why did my cell fail?")
    assert [code_of(c) for c in calls] == ["df['revenue'].mean()"] and "typo for 'revenue'" in answer


async def test_load_a_csv_runs_read_csv_into_a_named_variable(tmp_path: Path) -> None:
    SALES.to_csv(tmp_path / "sales.csv", index=False)
    ns: dict[str, Any] = {}
    agent = agent_on(ns, tmp_path)
    calls, answer = await run(agent, "Load sales.csv into a DataFrame")
    assert [code_of(c) for c in calls] == ['import pandas as pd\n\nsales = pd.read_csv("sales.csv")\nsales.head()',
                                               "sales.shape"]
    assert isinstance(ns["sales"], pd.DataFrame) and ns["sales"].shape == (3, 3)
    assert "Loaded sales.csv into `sales`; `sales` has 3 rows and 3 columns." in answer
    calls, _ = await run(agent_on(ns, tmp_path / "x"), "Load ../sales.csv as `orders`")
    assert 'orders = pd.read_csv("../sales.csv")' in code_of(calls[0])


@pytest.mark.parametrize("prompt", ["Load sales.csv as class", "Load sales.csv into `None`", "Load sales.csv as lambda"])
def test_a_name_python_cannot_assign_is_not_the_loaded_variable(prompt: str) -> None:
    # before: "class = pd.read_csv(...)": the offline model's code was a SyntaxError in the user's kernel
    from nbagent.providers.simulated.loading import variable_for

    assert variable_for(prompt, "sales.csv", 1) == "sales"


async def test_plot_draws_the_requested_chart(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    ns: dict[str, Any] = {"sales": SALES.copy()}
    agent = agent_on(ns, tmp_path)
    calls, answer = await run(agent, "Plot revenue by region")
    (code,) = [code_of(c) for c in calls]
    assert code.splitlines() == ["import matplotlib.pyplot as plt", "",
                                 'sales.groupby("region")["revenue"].sum().sort_values(ascending=False).plot.bar()',
                                 'plt.title("Total revenue by region")', 'plt.xlabel("region")',
                                 'plt.ylabel("total revenue")', "plt.show()"]
    assert 'Drew "Total revenue by region" from `sales`' in answer and "sum" not in answer.split("\n")[0]
    assert not any(r.get("is_error") for r in results(agent))


async def test_plot_without_matplotlib_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what find_spec sees when it is not installed
    ns: dict[str, Any] = {"sales": SALES.copy()}
    agent = agent_on(ns, tmp_path)
    calls, answer = await run(agent, "Plot a histogram of units")
    assert code_of(calls[0]).startswith("import matplotlib.pyplot as plt\n")  # no defensive branch in the code
    assert [r.get("is_error") for r in results(agent)] == [True]  # the import fails, as it would for the user
    assert answer.startswith("(simulated model) I cannot draw the plot: matplotlib is not installed")


async def test_multi_line_output_stays_multi_line_and_the_phrasing_is_plain(tmp_path: Path) -> None:
    ns: dict[str, Any] = {"df": SALES.copy()}
    agent = agent_on(ns, tmp_path)
    _, answer = await run(agent, "describe `df` and count its missing values")
    said = assistant_texts(agent)
    assert "(simulated model) I will count the missing values in `df`." in said
    assert "(simulated model) I will describe `df` with summary statistics." in said
    table = SALES.describe().to_string()
    assert table in answer  # every line of the table, in order, each on its own line
    fence_open = answer.rindex("```\n", 0, answer.index(table))
    assert answer[fence_open:answer.index(table)] == "```\n[result]\n"  # inside a fence: Markdown keeps the lines


async def test_fix_adds_a_missing_import_and_only_a_question_about_the_error_reopens_it(tmp_path: Path) -> None:
    ns: dict[str, Any] = {"df": SALES.copy()}
    calls, answer = await run(agent_on(ns, tmp_path), FIX.format(cell=1, error=failure("np.log(df['units'])", ns)))
    assert [code_of(c) for c in calls] == ["import numpy as np\n\nnp.log(df['units'])"] and "import numpy" in answer
    stale = failure("df['Revenue']", ns)
    calls, _ = await run(agent_on(ns, tmp_path / "b", last_error=stale), "What is the standard error of `df`?")
    assert all("Revenue" not in code_of(c) and "revenue" not in code_of(c) for c in calls)
