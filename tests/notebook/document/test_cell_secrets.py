"""``notebook_read`` of a cell not run yet: a literal its code names as a credential is redacted, as the
loop redacts it once the cell ran (its ``_i`` variable)."""

from __future__ import annotations

from nbagent.notebook.document.bridge_types import CellJSON
from nbagent.notebook.document.cells import cell_for_model


def test_a_password_typed_in_a_cell_not_run_yet_is_not_shown_to_the_model() -> None:
    """The cell is in no ``_i`` variable before it runs, so nothing the loop knows held the password:
    the model (or a ``%agent serve`` client) read it as typed (attacker pass 13)."""
    source = 'conn = psycopg2.connect(host="db", user="ana", password="S3cret-Pg-pw!")\nsort_key = "date"'
    text, _ = cell_for_model(0, {"id": "c1", "cell_type": "code", "source": source, "outputs": [], "metadata": {}}, 2000)
    assert "S3cret-Pg-pw!" not in text and 'password="[redacted]"' in text and 'sort_key = "date"' in text
    note, _ = cell_for_model(1, {"id": "m1", "cell_type": "markdown", "source": 'password="in prose-123"',
                                 "metadata": {}}, 2000)
    assert "in prose-123" in note  # prose is the user's text, not code


def test_a_literal_of_one_cell_is_redacted_from_every_cells_source_and_saved_outputs() -> None:
    # The cell's own source was redacted, but not the outputs a received notebook saved (the loop's
    # secrets never held that literal: the cell has not run here), nor another cell that printed it.
    from nbagent.notebook.document.cells import literal_secrets

    password = "S3cr3t-Pa55word"
    connect: CellJSON = {"id": "c1", "cell_type": "code", "metadata": {},
               "source": f'conn = psycopg2.connect(host="db", password="{password}")\nprint(conn.dsn)',
               "outputs": [{"output_type": "stream", "name": "stdout", "text": f"host=db password={password}\n"}]}
    later: CellJSON = {"id": "c2", "cell_type": "code", "metadata": {}, "source": "print(conn.dsn)",
             "outputs": [{"output_type": "stream", "name": "stdout", "text": f"dbname=sales password={password}\n"}]}
    secrets = literal_secrets([connect, later])
    shown = [cell_for_model(i, cell, 2000, None, secrets)[0] for i, cell in enumerate([connect, later])]
    assert password not in "".join(shown) and all("[redacted]" in text for text in shown)
    assert password not in cell_for_model(0, connect, 2000)[0]


def test_a_saved_shell_command_s_password_is_redacted_from_a_cell_not_run_yet() -> None:
    # A received notebook's ``!mysql -p…`` / ``%%bash`` cell: IPython makes the command a literal only when
    # it runs the cell, so the saved source was read for no flag and went to the model whole (review of atk21).
    from nbagent.notebook.document.cells import literal_secrets

    password = "S3cr3t-Pa55word"
    cells: list[CellJSON] = [
        {"id": "c1", "cell_type": "code", "metadata": {}, "outputs": [], "source": f"!mysql -u ana -p{password} sales"},
        {"id": "c2", "cell_type": "code", "metadata": {}, "outputs": [],
         "source": f"%%bash\nsshpass -p {password}x ssh host 'mkdir -p /srv/data'\n"},
        {"id": "c3", "cell_type": "code", "metadata": {}, "outputs": [], "source": "!mkdir -p outputs2024\nx = 1 != 2"}]
    assert literal_secrets(cells) == (f"{password}x", password)
    shown = "".join(cell_for_model(i, cell, 2000, None, literal_secrets(cells))[0] for i, cell in enumerate(cells))
    assert password not in shown and "outputs2024" in shown
