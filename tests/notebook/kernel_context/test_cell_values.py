"""A cell's value (its ``execute_result``) is told as the cell showed it: an image on a cell's last
line (``Image(...)``, a PIL image) reaches a prompt about "this image" as ``display()``'s does, and
``Out[n]``'s text is what the cell output then, not its object as a later cell changed it."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.engine.loop.facts import FactsFocus, FactsSnapshot
from nbagent.notebook.kernel_context import KernelContext
from nbagent.notebook.kernel_context.figures import DisplayedImages
from tests.notebook.kernel_context.test_figures import png


@pytest.fixture
def ip() -> Iterator[Any]:
    shell = InteractiveShell.instance()
    saved = dict(shell.user_ns)
    try:
        yield shell
    finally:
        shell.user_ns.clear()
        shell.user_ns.update(saved)


def _context(shell: Any, displayed: DisplayedImages, prompt: str) -> tuple[str, list[Any]]:
    state = KernelContext(shell, None, displayed).focused(FactsFocus(prompt, (), 3_000))
    return FactsSnapshot.of(*state).full_text(), list(state.images)


def test_an_image_on_a_cells_last_line_reaches_a_prompt_about_this_image(ip: Any) -> None:
    displayed = DisplayedImages(ip)
    ip.user_ns["cv_png"] = png(64, 48)
    result = ip.run_cell("from IPython.display import Image\nImage(data=cv_png)", store_history=True)  # a value
    assert result.success
    cell = result.execution_count
    _, images = _context(ip, displayed, "What does this image show?")
    assert [b["type"] for b in images] == ["text", "image"], images
    assert f"Image displayed by In[{cell}] (64x48 px)" in images[0]["text"]


def test_an_output_is_told_as_the_cell_showed_it_not_as_its_object_is_now(ip: Any) -> None:
    displayed = DisplayedImages(ip)
    assert ip.run_cell("import pandas as pd\ncv_df = pd.DataFrame({'a': [1, 2, 3]})").success
    result = ip.run_cell("cv_df", store_history=True)
    assert result.success
    shown = result.execution_count
    assert ip.run_cell("cv_df['a'] = cv_df['a'] * 100", store_history=True).success  # Out[n] is the same object, changed
    text, _ = _context(ip, displayed, "what did the table show?")
    out = text[text.index(f"Out[{shown}]:"):]
    assert "0  1\n" in out and "100" not in out, text


def test_a_displayed_image_is_labelled_with_the_number_of_the_cell_that_displayed_it(ip: Any) -> None:
    # IPython's counter is already the next cell's while a cell runs: In[3]'s plot read "In[4]",
    # and a prompt naming In[3] found none of its images.
    displayed = DisplayedImages(ip)
    ip.user_ns["cv_png"] = png(64, 48)
    result = ip.run_cell("from IPython.display import Image, display\ndisplay(Image(data=cv_png))", store_history=True)
    assert result.success
    _, images = _context(ip, displayed, f"What does the plot of In[{result.execution_count}] show?")
    assert [b["type"] for b in images] == ["text", "image"], images
    assert f"Image displayed by In[{result.execution_count}] (64x48 px)" in images[0]["text"]


def test_a_container_a_cell_showed_is_told_without_its_items_own_reprs(ip: Any) -> None:
    # The review of power pass 2 (H1): IPython's text of `[conn]` is the dataclass's repr, token and
    # all, and of `{'key': svc_key}` the UUID; the variables show both by type name, so Out[n] does too.
    cell = ("import dataclasses, uuid\n"
            "@dataclasses.dataclass\nclass Conn:\n    host: str\n    token: str\n"
            "cv_conn = Conn('db.example', 'ghp_' + 'R4nd0mT0k3n' * 3)\n"
            "cv_key = uuid.UUID('12345678-1234-5678-1234-567812345678')")
    displayed = DisplayedImages(ip)
    assert ip.run_cell(cell).success
    assert ip.run_cell("[cv_conn]", store_history=True).success
    assert ip.run_cell("{'key': cv_key}", store_history=True).success
    text, _ = _context(ip, displayed, "what did the last cells show?")
    assert "R4nd0mT0k3n" not in text and "12345678-1234" not in text, text
    assert "Conn object" in text and "UUID object" in text, text


def test_a_table_masked_after_it_was_shown_is_told_without_the_secrets_it_showed(ip: Any) -> None:
    """The output is told as the cell showed it: a users table displayed, then its passwords hashed
    in place, was told with the raw passwords while its value (all the walk of the namespace reads)
    no longer held them (attacker pass 15)."""
    from nbagent.engine.loop.sanitize import Sanitizer

    displayed = DisplayedImages(ip)
    assert ip.run_cell("import pandas as pd\ncv_users = pd.DataFrame({'user': ['ana'], 'password': ['Shown-Pw-2024!']})").success
    assert ip.run_cell("cv_users", store_history=True).success
    assert ip.run_cell("cv_users['password'] = cv_users['password'].str.len()", store_history=True).success
    ctx = KernelContext(ip, None, displayed)
    assert "Shown-Pw-2024!" in ctx.secrets()
    text, _ = _context(ip, displayed, "what did the table show?")
    assert "Shown-Pw-2024!" not in Sanitizer(ctx.secrets()).redact(text)


def test_a_password_a_module_names_in_the_last_errors_traceback_is_a_secret(ip: Any, tmp_path: Any,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The last error's traceback quotes the source lines of the user's modules: a helper's
    ``connect(password="…")`` line went to the model at every prompt, where the same literal typed
    in a cell is redacted (attacker pass 17)."""
    from nbagent.engine.loop.sanitize import Sanitizer
    from nbagent.notebook.session import LastError

    (tmp_path / "atk17_helpers.py").write_text(
        "def connect(**kw):\n    raise ConnectionError('could not reach db')\n\n"
        "def fetch():\n    return connect(host='db.internal', user='ana', password='Helper-Pw-2024x')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    errors = LastError(ip)
    try:
        assert ip.run_cell("from atk17_helpers import fetch", store_history=True).success
        assert not ip.run_cell("fetch()", store_history=True).success
        ctx = KernelContext(ip, errors, None)
        state = ctx.focused(FactsFocus("why did the last cell fail?", (), 3_000))
        text = FactsSnapshot.of(*state).full_text()
        assert "password='Helper-Pw-2024x'" in text  # the traceback quotes the helper's line
        assert "Helper-Pw-2024x" in ctx.secrets()
        assert "Helper-Pw-2024x" not in Sanitizer(ctx.secrets()).redact(text)
    finally:
        ip.events.unregister("post_run_cell", errors._after_cell)
