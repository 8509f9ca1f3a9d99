"""The seven teaching notebooks run top to bottom, offline, on the nbagent kernel, unattended.

Executed with nbclient through :class:`AutoClickClient` (it presses the prompt buttons a cell's
metadata names). Any cell error fails the test; the saved outputs must carry the readable
fallbacks (text/plain transcript, the turn table) that static renderers show.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nbagent.notebook.autorun import run_notebook
from tests.notebook.support import cell_text, output_texts

pytestmark = pytest.mark.kernel

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _texts(nb) -> list[str]:
    out = []
    for cell in nb.cells:
        expected = "raises-exception" in cell.get("metadata", {}).get("tags", [])  # a failed cell, on purpose
        outputs = cell.get("outputs", [])
        for o in outputs:
            if o.get("output_type") == "error":
                out.append(("EXPECTED ERROR " if expected else "ERROR ") + o.get("ename", ""))
            out.append(str(o.get("data", {}).get("text/html", "")))
        out += output_texts(outputs)  # one print's stream messages joined, as a front-end shows them
    return out


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """Run each notebook once in a scratch copy of notebooks/ (they write files next to themselves)."""
    work = tmp_path_factory.mktemp("notebooks")
    results = {}

    def run(name: str, again: bool = False):
        """``again``: Restart & Run All of the notebook as the first run saved it (outputs, metadata)."""
        if (name, again) not in results:
            src = work / f"{name}.ipynb"
            if again:
                run(name)
                shutil.copy(work / f"{name}.out.ipynb", src)
            else:
                shutil.copy(NOTEBOOKS / f"{name}.ipynb", src)
            out = work / f"{name}.{'again' if again else 'out'}.ipynb"
            nb = run_notebook(src, out, kernel_name="nbagent", timeout=120, cwd=work)
            results[name, again] = nb
        return results[name, again]

    return run


@pytest.mark.parametrize("name", ["01_quickstart", "02_truncation_explorer", "03_retries_and_faults",
                                  "04_permissions_and_tools", "05_compaction_and_structured_output",
                                  "06_reproducible_notebook", "08_kernel_context"])
def test_notebook_runs_offline_without_an_error(executed, name):
    # Its minute is measured in bench/bench_teaching_notebooks.py: load on the machine moves it here.
    nb = executed(name)
    texts = _texts(nb)
    assert not [t for t in texts if t.startswith("ERROR")], [t for t in texts if t.startswith("ERROR")]
    joined = "\n".join(texts)
    assert "■ done" in joined  # the text/plain transcript of at least one %%agent cell
    assert "cumulative cost" in joined  # the per-request table


def test_quickstart_shows_the_answer_and_the_table(executed):
    nb = executed("01_quickstart")
    joined = "\n".join(_texts(nb))
    assert "391" in joined  # 17 * 23, computed by the python tool after the Allow click
    assert "permission: ✓ allowed" in joined
    assert "north has the largest total revenue (262.00) by region; `sales` has 0 missing values." in joined


def _agent_cells(nb) -> list[tuple[str, str]]:
    return [(c.metadata["nbagent"]["kind"], c.source) for c in nb.cells if "nbagent" in c.metadata]


def test_quickstart_gets_the_agents_code_as_cells_below_each_agent_cell(executed):
    nb = executed("01_quickstart")  # autorun is the notebook's front-end, as JupyterLab is
    assert _agent_cells(nb) == [
        ("agent", "%%agent\nWhich region has the largest total revenue in `sales`? Any missing values?"),
        ("code", 'sales.groupby("region")["revenue"].sum().sort_values(ascending=False)'),
        ("code", "sales.isna().sum()"),
        ("agent", "%%agent\nWhat is 17 * 23?"),
        ("code", "17 * 23")]
    totals = next(c for c in nb.cells if c.source.startswith("sales.groupby"))
    assert "north    262.0\n" in totals.outputs[0]["data"]["text/plain"]  # its output, in the cell
    agent = next(c for c in nb.cells if c.source.startswith("%%agent\nWhich region"))
    # Made by the agent during the agent cell's execution (its count), not run again by the notebook run.
    assert totals.execution_count == agent.execution_count is not None


def test_truncation_notebook_truncates_and_shows_the_strip(executed):
    nb = executed("02_truncation_explorer")
    joined = "\n".join(_texts(nb))
    assert "keep" in joined and ("half" in joined or "quarter" in joined)
    assert "<svg" in joined or "nbagent-strip" in joined  # the static strip of the explorer


def test_truncation_notebook_shows_the_file_read_de_duplication_it_promises(executed):
    # Its markdown promises the de-duplication of repeated reads of notes.txt; with the notebook tools
    # offered (JupyterLab, autorun) every truncation had hidden the older read already: saving 0 in every row.
    nb = executed("02_truncation_explorer")
    table = next(c for c in nb.cells if c.source.startswith("s.truncation_df()"))
    rows = table.outputs[0]["data"]["text/plain"]
    assert "duplicate file reads replaced (file-read saving" in "\n".join(_texts(nb))
    savings = _savings(nb)
    assert any(v > 0 for v in savings), rows
    # As its markdown says for JupyterLab and autorun: the first truncation saves (24 %, as the README says), the
    # later ones find the older reads hidden already.
    assert round(savings[0]) == 24 and all(v == 0 for v in savings[1:]), savings


def _savings(nb) -> list[float]:
    """02's `s.truncation_df()` cell: each truncation's `file-read saving`."""
    table = next(c for c in nb.cells if c.source.startswith("s.truncation_df()"))
    rows = table.outputs[0]["data"]["text/plain"]
    return [float(ln.split()[-1]) for ln in rows.splitlines() if ln.strip()[:1].isdigit() and "half" in ln]


def _headless(tmp_path: Path, name: str):
    """The teaching notebook ``name`` run as nbconvert and CI run it: plain nbclient in its own
    folder, no front-end (so no notebook tools)."""
    import nbclient
    import nbformat

    shutil.copy(NOTEBOOKS / name, tmp_path / name)
    nb = nbformat.read(tmp_path / name, as_version=4)
    nbclient.NotebookClient(nb, kernel_name="nbagent", timeout=120,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


def test_truncation_notebook_says_what_its_file_read_savings_are_headless(tmp_path):
    # Its markdown said "later, each truncation has already hidden the older reads, so there is nothing to replace
    # (0)"; run by nbconvert (no notebook tools, fewer truncations) every later one saved ~21 %.
    nb = _headless(tmp_path, "02_truncation_explorer.ipynb")
    savings = _savings(nb)
    assert round(savings[0]) == 24 and len(savings) > 1 and all(0 < v < 30 for v in savings[1:]), savings
    assert "Run by\nnbconvert (no notebook tools) it fills less often" in _markdown(nb)


def test_faults_notebook_retries_and_recovers(executed):
    nb = executed("03_retries_and_faults")
    joined = "\n".join(_texts(nb))
    assert "EXPECTED ERROR AgentRunFailed" in joined  # the 401 cell fails, like any failed cell
    for needle in ("overloaded (529)", "waiting for the shared rate limit", "interrupted", "history is valid",
                   "auth (401)"):
        assert needle in joined, needle


def _markdown(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _retries_by_request(nb) -> dict[int, int]:
    """The `retries` column of 03's `s.turns_df()[["request", "retries", …]]` cell, by request."""
    table = next(c for c in nb.cells if c.source.startswith('s.turns_df()[["request", "retries"'))
    rows = table.outputs[0]["data"]["text/plain"].splitlines()[1:]
    return {int(r.split()[1]): int(r.split()[2]) for r in rows}


def test_faults_notebook_says_what_its_retries_column_counts(executed):
    # The markdown said the 429 was "not counted as a retry" and the overflow "no retry counted", while
    # the table it shows says retries 2 and 1 for those requests (the column counts every resend).
    nb = executed("03_retries_and_faults")
    retries, text = _retries_by_request(nb), _markdown(nb)
    assert retries[1] == 2 and retries[6] == 1  # 529 + 429 before request 1; the overflow's resend
    assert "no retry counted" not in text and "does not count it as a retry" not in text
    assert "counts every resend, so that request's row says 2" in text and "counts the resend: 1" in text
    # "this notebook clicks it for you when run unattended": nbconvert is unattended too, and waits the whole 30 s.
    assert "under `jupyter nbconvert --execute` nobody can click: the cell waits the whole 30 s" in text


def test_faults_notebook_shows_the_dropped_attempt_billed_in_the_retried_requests_row(executed):
    # The dropped stream's attempt is billed (spent) and has no row of its own: the cell's "session spent" was
    # above the rows' sum, the retry's row read 100 % from the cache, and nothing in the notebook said why.
    # Its cost is now in the retried request's row (pu6): the rows add up, and the notebook says so.
    import re

    def cost(nb) -> str:
        cell = next(c for c in nb.cells if c.source == "%agent cost")
        return "".join(o.get("text", "") or str(o.get("data", {}).get("text/plain", "")) for o in cell.outputs)

    nb = executed("03_retries_and_faults")
    text = cost(nb)
    spent, history = re.search(r"spent \$[\d.]+ in (\d+) request\(s\); in the current history \$[\d.]+ "
                               r"\((\d+) request\(s\); the others were rolled back, or cut off mid-answer", text).groups()
    assert int(spent) == int(history) + 1, text
    assert "dropped attempt was **billed**" in _markdown(nb) and "the rows still add up" in _markdown(nb)
    # Placed where the replayed session's totals are the live run's (Restart & Run All shows the same line).
    again = executed("03_retries_and_faults", again=True)
    assert cost(again) == text


def test_permissions_notebook_denies_and_resumes(executed):
    nb = executed("04_permissions_and_tools")
    joined = "\n".join(_texts(nb))
    assert "PermissionDenial(" in joined
    assert "outside" in joined
    assert "'max_requests'" in joined and "'max_budget'" in joined
    assert "'aborted'" in joined and "'end_turn'" in joined
    # The rollback lesson runs in a session of its own: the lesson's earlier answers stay recorded,
    # so Restart & Run All replays them instead of showing six cells as undone.
    assert "rolled back to the end of turn 1" in joined and "25" in joined
    sessions = {c.metadata["nbagent"]["session"] for c in nb.cells if c.metadata.get("nbagent", {}).get("kind") == "agent"}
    assert len(sessions) == 2, sessions
    # Run by nbconvert every lesson's call was "Denied without asking", which no markdown explained
    assert "nbconvert" in _markdown(nb) and "denied" in _markdown(nb)


def _outputs(cell) -> str:
    return cell_text(cell)  # one print's stream messages joined, as a front-end shows them


def test_permissions_notebook_run_again_replays_and_reads_the_replayed_sessions(executed):
    nb = executed("04_permissions_and_tools", again=True)
    agent_cells = [c for c in nb.cells if c.source.startswith("%%agent")]
    undone = [c for c in agent_cells if "was undone with %agent rollback" in _outputs(c)]
    assert [c.source.splitlines()[-1] for c in undone] == ["What is 6 * 6?"]  # the rollback lesson's turn
    assert all("⟲ replayed" in _outputs(c) for c in agent_cells if c not in undone)  # no request sent
    # The session the first cell made asked nothing: the notebook's session is the replayed one,
    # with the denial it recorded, and its done events.
    denials = next(c for c in nb.cells if c.source == "nbagent.session().agent.denials")
    assert "PermissionDenial(tool='python', input={'code': '4 * 4'}" in _outputs(denials)
    done = next(c for c in nb.cells if "nbagent.session().events" in c.source)
    assert "'max_requests'" in _outputs(done) and "'max_budget'" in _outputs(done)
    # After the rollback lesson's --new cell replayed, status and rollback read its session (shown
    # to turn 1), never the first one: nothing is rolled back, the first session keeps its turns.
    status, rollback = (next(c for c in nb.cells if c.source == src) for src in ("%agent status", "%agent rollback 1"))
    assert "turns        1 " in _outputs(status) and "turns        0 " not in _outputs(status)
    assert "nothing rolled back" in _outputs(rollback)
    first_session = agent_cells[0].metadata["nbagent"]["session"]
    assert f"replaying session {first_session}" not in _outputs(status)


def test_compaction_notebook_binds_data_compacts_and_denies(executed):
    nb = executed("05_compaction_and_structured_output")
    joined = "\n".join(_texts(nb))
    assert "City(name='Paris', population=2100000)" in joined  # %%agent --out city --schema City
    assert "Row(label='north', value=1.5)" in joined
    assert "Compacted messages 2-" in joined and "compact" in joined  # the notice and the turn-table row
    assert "[Summary of the earlier conversation" in joined and "(simulated model) Summary" in joined  # %agent saw
    assert "rolled back to the end of turn 3" in joined
    assert "plan mode: python is not read-only" in joined
    assert "A pre_tool_use hook denied this python call: policy: no arithmetic" in joined
    assert _percent_of_max(nb, request=2) > 55  # the notebook tools' definitions are sent: as the markdown says


def _percent_of_max(nb, request: int) -> float:
    """05's `s.turns_df()[["turn", "request", "cost", …, "% of max", "keep"]]` cell: ``request``'s `% of max`."""
    table = next(c for c in nb.cells if c.source.startswith('s.turns_df()[["turn", "request", "cost"'))
    for line in table.outputs[0]["data"]["text/plain"].splitlines():
        cells = line.replace("\\", "").split()
        if len(cells) >= 7 and cells[2] == str(request):
            return float(cells[6])
    raise AssertionError(f"no row for request {request}")


def test_compaction_notebook_compacts_where_it_says_also_headless(tmp_path):
    # Run by plain nbclient (nbconvert --execute, CI: no front-end, so no notebook tools in the
    # requests) the third request stayed under 55 % of the window: no summary, no `compact` row, an
    # empty rollback lesson, under a markdown cell saying "used more than 55 %… (see the notice)".
    nb = _headless(tmp_path, "05_compaction_and_structured_output.ipynb")
    oceans = next(c for c in nb.cells if c.source.endswith("And what about oceans?"))
    assert "ℹ Compacted messages 2-" in _outputs(oceans)
    table = next(c for c in nb.cells if c.source.startswith("s.turns_df()"))
    assert "compact" in _outputs(table)
    # The markdown said "request 2 is over 55 % of max" under a table reading 54.1 (no notebook tools headless).
    assert _percent_of_max(nb, request=2) < 55
    assert "just under it in a run by nbconvert" in "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_reproducible_notebook_fixes_a_cell_with_the_notebook_tools(executed):
    nb = executed("06_reproducible_notebook")
    fixed = next(c for c in nb.cells if c.metadata.get("nbagent", {}).get("kind") == "edit")
    assert fixed.source == 'sales.groupby("region")["revenue"].sum()'  # was sale.groupby(...): a NameError
    assert "north    262.00" in fixed.outputs[-1]["data"]["text/plain"]  # notebook_run put its output there
    joined = "\n".join(_texts(nb))
    assert "there is no variable `sale`; it looks like a typo for `sales`" in joined
    assert "The notebook has" in joined and "made by the agent" in joined  # "Read this notebook"


def test_reproducible_notebook_replays_with_no_request_and_an_edit_goes_live(executed):
    nb = executed("06_reproducible_notebook")
    joined = "\n".join(_texts(nb))
    assert joined.count("requests sent to the API: 0") == 1  # Run All with no key: replayed
    assert "what is 17 * 23? use python      True" in joined and "what is 391 + 7?     False" in joined
    assert "(True," in joined  # the replayed transcripts equal the recorded ones


def test_reproducible_notebook_run_again_in_its_folder_runs_its_analysis_live_first_again(tmp_path):
    # Its step 3 said "we run it once live", but a second run of the notebook (Restart & Run All, a
    # second nbconvert) found the first run's analysis_run/ records: the "live" run replayed, 2
    # requests instead of 4. And the child kernels' TCP warning was printed into the lesson.
    shutil.copy(NOTEBOOKS / "06_reproducible_notebook.ipynb", tmp_path / "06.ipynb")
    runs = [run_notebook(tmp_path / "06.ipynb", tmp_path / f"run{n}.ipynb", kernel_name="nbagent", timeout=120,
                         cwd=tmp_path) for n in (1, 2)]
    for nb in runs:
        joined = "\n".join(_texts(nb))
        live = next(c for c in nb.cells if c.source.startswith("live = analysis(PROMPTS)"))
        assert "requests sent to the API: 4" in cell_text(live)
        assert "without encryption" not in joined


def test_reproducible_notebook_says_what_its_fix_lesson_does_headless(tmp_path):
    # Run by nbconvert the markdown said "The cell with the typo … now reads sales.groupby(…)" under a cell that
    # still failed: with no front-end there are no notebook tools, which no line of the lesson said.
    nb = _headless(tmp_path, "06_reproducible_notebook.ipynb")
    typo = next(c for c in nb.cells if c.source.startswith("sale.groupby"))
    assert typo.outputs[-1]["output_type"] == "error"  # not fixed in place: no notebook_edit headless
    fix = next(c for c in nb.cells if c.source.endswith("Fix the cell that fails with a NameError"))
    assert 'sales.groupby("region")["revenue"].sum()' in _outputs(fix)  # checked with python, printed
    read = next(c for c in nb.cells if c.source.endswith("Read this notebook"))
    assert "I cannot read the notebook here" in _outputs(read)
    text = _markdown(nb)
    assert "`jupyter nbconvert --execute`, plain nbclient and papermill have no\nfront-end" in text
    assert "the cell with the typo stays as it was" in text


@pytest.mark.parametrize("name", ["01_quickstart", "04_permissions_and_tools", "06_reproducible_notebook",
                                  "08_kernel_context"])
def test_a_notebook_whose_cells_ask_says_to_click_allow_and_what_happens_unattended(executed, name):
    # 08's cells showed Allow / Deny cards its markdown never mentioned (and headless, denials it never explained)
    nb = executed(name)
    assert "permission: ✓ allowed" in "\n".join(_texts(nb))  # a card was answered (autorun clicks Allow)
    text = _markdown(nb)
    assert "**Allow**" in text and ("unattended" in text or "Unattended" in text)


def test_kernel_context_notebook_shows_what_the_model_was_told_beside_the_answer(executed):
    nb = executed("08_kernel_context")
    joined = "\n".join(_texts(nb))
    assert "`sales` has 87 missing values (price: 87)" in joined  # the answer
    assert "price: float64, 87 missing, 0.91 .. 241.87" in joined  # what the model was told of the data
    assert "region: category, 0 missing, levels ['east', 'north', 'south', 'west']" in joined
    assert "Forecast of daily revenue, 30 days ahead" in joined
    assert "broken: Broken (not described: raised RuntimeError: the database is down)" in joined
    assert "EMPTY, the lines have no data" in joined and "(image block, ~" in joined
    assert "Left out (the kernel context's token budget; ask the python tool for them): " in joined
    # "Why is this plot empty?" got the offline model's "no rule matched" text; the facts it was sent say why.
    plot = next(c for c in nb.cells if c.source.endswith("Why is this plot empty?"))
    assert "1 lines (0 points): EMPTY, the lines have no data): the plot has axes but no data" in _outputs(plot)
    assert "`june` has no rows" in _outputs(plot) and "I understood your message as" not in _outputs(plot)
    # Beside the image tokens, the cache columns: `input` alone read 0 for the request carrying a 186-token image.
    table = next(c for c in nb.cells if c.source.startswith("nbagent.session().turns_df()"))
    assert "cache write" in _outputs(table) and "image tokens" in _outputs(table)
    assert "`input` counts only the uncached prompt" in _markdown(nb)


def _bench(name: str):
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_context_policies_notebook_prints_the_bench_tables(executed):
    from nbagent.explorer import comparison_df, recall_df

    nb = executed("07_context_policies")
    texts = _texts(nb)
    assert not [t for t in texts if t.startswith("ERROR")], [t for t in texts if t.startswith("ERROR")]
    joined = "\n".join(texts)
    rows = _bench("bench_context_policies").results()  # the bench's own function and session
    assert comparison_df(rows).to_string(index=False) in joined
    assert recall_df(rows).to_string(index=False) in joined
    by = {r.label: r for r in rows}
    assert f"costs ${by['layered'].usd:.2f} against ${by['cline'].usd:.2f}" in joined  # the conclusions' numbers
    assert f"({by['layered'].usd / by['cline'].usd:.2f}×)" in joined
    # Conclusion 4 said "(0.58×" beside a table whose `× layered` reads 1.14: it is relative to truncation, and says so.
    k30 = by["mask:keep=3:clear=30000"]
    assert f"for ${k30.usd:.2f} ({k30.usd / by['cline'].usd:.2f}× truncation, " in joined
    server = _bench("bench_context_policies")
    server_rows = server.results(server.SERVER_POLICIES)
    assert comparison_df(server_rows).to_string(index=False) in joined  # the server layers' table too
    assert "nbagent-policy-explorer" in joined and "<svg" in joined  # the static fallback of the explorer


def test_context_policies_notebook_quotes_the_prices_its_numbers_are_computed_with():
    # Its dollars include one-hour cache writes (the cache anchors) at $4 per million, which it did not quote.
    import nbformat

    from nbagent.engine.api_facts.models import get_model

    nb = nbformat.read(NOTEBOOKS / "07_context_policies.ipynb", as_version=4)
    model = get_model("claude-sonnet-5-5")
    assert model is not None
    p = model.prices
    quoted = f"${p.input:g} per million input tokens, ${p.cache_write_5m:.2f} to write the cache (${p.cache_write_1h:g} for " \
             f"the one-hour breakpoints"
    assert quoted in " ".join(_markdown(nb).split()), quoted
