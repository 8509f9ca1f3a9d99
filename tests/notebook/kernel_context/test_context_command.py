"""``%agent context`` shows what the turn sent about the kernel; the names the model was told
about are read back from what was sent (what the replay compares with the live kernel)."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from nbagent.engine.contracts.config import DEFAULT_KERNEL_CONTEXT_TOKENS
from nbagent.notebook import magics as magics_mod
from nbagent.notebook.kernel_context import described_variables
from tests.notebook.support import list_content


@pytest.fixture
def ip(tmp_path, monkeypatch) -> Iterator[Any]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    shell = InteractiveShell.instance()
    saved = shell.display_pub
    shell.display_pub = CapturingDisplayPublisher()
    # The shell is shared with other in-process tests: their variables (one named like a word of a
    # prompt is ranked first) would change what fits the budget here.
    namespace = dict(shell.user_ns)
    for name in [n for n in shell.user_ns if not n.startswith("_") and n not in shell.user_ns_hidden]:
        del shell.user_ns[name]
    shell.run_cell("%load_ext nbagent")
    errors = magics_mod.active_magics().last_error
    errors.text, errors.cell = None, None  # an earlier test's failed cell would take the budget here
    magics_mod.active_magics().new_session(allow=("python", "read_file"))
    try:
        yield shell
    finally:
        shell.user_ns.clear()
        shell.user_ns.update(namespace)
        magics_mod.active_magics().kernel_context_tokens = DEFAULT_KERNEL_CONTEXT_TOKENS
        shell.display_pub = saved


def cell(ip: Any, code: str) -> str:
    with capture_output() as cap:
        result = ip.run_cell(code)
    assert result.error_in_exec is None and result.error_before_exec is None, (result, cap.stdout)
    return cap.stdout


def test_agent_context_shows_the_kernel_context_sent_and_what_was_left_out(ip: Any) -> None:
    cell(ip, "import pandas as pd\nkc_sales = pd.DataFrame({'price': [1.0, None], 'region': ['n', 's']})")
    cell(ip, "%config AgentMagics.kernel_context_tokens = 400")
    cell(ip, "kc_many = list(range(3))\n" + "\n".join(f"kc_v{i} = {i}" for i in range(200)))
    cell(ip, "%%agent\nWhich columns of `kc_sales` have missing values?")
    shown = cell(ip, "%agent context")
    assert shown.startswith("Kernel context sent with turn 1:\n<kernel-state>")
    assert "price: float64, 1 missing" in shown and "In full: kc_sales" in shown
    assert "Left out (the kernel context's token budget; ask the python tool for them): " in shown
    assert "tokens as a whole (a later prompt sends only the change), built in" in shown
    sent = list_content(magics_mod.active_magics().session().saw()[0].messages[-1])
    facts = next(b["text"] for b in sent if b["type"] == "text" and b["text"].startswith("<kernel-state>"))
    assert facts in shown  # exactly what was sent


def test_described_variables_are_the_names_the_model_knew_at_that_turn(ip: Any) -> None:
    cell(ip, "kc_a = 1\nkc_b = 2")
    cell(ip, "%%agent\nWhat is `kc_a`?")
    cell(ip, "del kc_b\nkc_c = 3")
    cell(ip, "%%agent\nAnd `kc_c`?")
    sess = magics_mod.active_magics().session()
    first, second = described_variables(sess, 1), sess.described_variables()
    assert {"kc_a", "kc_b"} <= set(first) and "kc_c" not in first
    assert {"kc_a", "kc_c"} <= set(second) and "kc_b" not in second


def test_a_displayed_plot_reaches_the_model_and_shows_in_saw_context_and_the_turn_table(ip: Any) -> None:
    from nbagent.notebook.kernel_context.figures import DisplayedImages
    from tests.notebook.kernel_context.test_figures import png

    magics = magics_mod.active_magics()
    magics.displayed = DisplayedImages(ip)  # on this test's display publisher
    magics.new_session(allow=("python",))
    ip.user_ns["kc_png"] = png(300, 200)
    # Not under capture_output, which swaps the publisher the watcher reads (as %%capture would).
    assert ip.run_cell("from IPython.display import Image, display\ndisplay(Image(data=kc_png))").success
    cell(ip, "%%agent\nWhy is this plot so small?")
    sess = magics.session()
    prompt = list_content(sess.saw()[0].messages[-1])
    assert [b["type"] for b in prompt][-2:] == ["text", "image"]
    with capture_output() as saw:
        ip.run_cell("%agent saw")
    assert "(image, ~80 tokens)" in "".join(str(o.data) for o in saw.outputs)
    assert "(image block, ~80 tokens)" in cell(ip, "%agent context")
    table = sess.turns_df()
    assert table["image tokens"].tolist()[-1] == 80


def test_what_a_turn_was_shown_is_read_back_after_the_session_is_loaded_again(ip: Any) -> None:
    cell(ip, "import pandas as pd\nkc_frame = pd.DataFrame({'a': [1.0, None]})")
    cell(ip, "%%agent\nWhat is missing in `kc_frame`?")
    magics = magics_mod.active_magics()
    before = magics.session()
    told, text = before.described_variables(1), cell(ip, "%agent context 1").split("\n\nIn full")[0]
    folder = before.agent.session.task_dir
    assert folder is not None and "kc_frame" in told and "a: float64, 1 missing" in text
    cell(ip, "del kc_frame")
    loaded = magics.new_session(resume_from=folder)
    assert loaded is not before and loaded.described_variables(1) == told
    assert cell(ip, "%agent context 1").startswith(text)


def test_a_plot_is_sent_once_while_the_model_sees_it_and_again_after_a_rollback(ip: Any) -> None:
    from nbagent.notebook.kernel_context.figures import DisplayedImages
    from tests.notebook.kernel_context.test_figures import png

    magics = magics_mod.active_magics()
    magics.displayed = DisplayedImages(ip)
    magics.new_session(allow=("python",))
    ip.user_ns["kc_png"] = png(120, 80)
    assert ip.run_cell("from IPython.display import Image, display\ndisplay(Image(data=kc_png))").success
    sess = magics.session()

    def images_sent() -> int:
        return sum(b["type"] == "image" for b in list_content(sess.saw()[0].messages[-1]))

    cell(ip, "%%agent\nWhat does this plot show?")
    assert images_sent() == 1
    cell(ip, "%%agent\nAnd this plot's axes?")
    assert images_sent() == 0  # still in the conversation
    cell(ip, "%agent rollback 0")
    cell(ip, "%%agent\nWhat does this plot show?")
    assert images_sent() == 1


def test_a_turn_the_session_does_not_have_fails_the_context_and_saw_cells(ip: Any) -> None:
    """``%agent context 9`` after one turn printed "No request was sent in turn 9." with the history
    table and passed (Run All went on), while ``%agent saw 9`` and ``%agent rollback 9`` failed; and
    ``%agent context 0`` / ``saw 0`` said "No request sent yet." after a request had been sent."""
    from tests.notebook.test_magics_inprocess import fails

    cell(ip, "%%agent\nWhat is 2 * 3?")
    assert fails(ip, "%agent context 9") == "no turn 9 in this session (turn 1): %agent history lists the requests of each turn."
    for command in ("%agent context 0", "%agent saw 0"):
        assert fails(ip, command).startswith("turn 0 is the start of the conversation, before the first prompt")
    assert fails(ip, "%agent saw 9").startswith("no turn 9 in this session (turn 1)")
    assert cell(ip, "%agent context 1").startswith(("Kernel context sent with turn 1:", "Turn 1 sent nothing"))
