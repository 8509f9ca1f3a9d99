"""``notebook_read`` of a cell not run yet: a literal its code names as a credential is redacted, as the
loop redacts it once the cell ran (its ``_i`` variable)."""

from __future__ import annotations

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
