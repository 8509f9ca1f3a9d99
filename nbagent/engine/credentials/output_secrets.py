"""The secrets a cell's printed output names, held by no variable: ``!cat .env``, ``%env``,
``print(open("settings.ini").read())`` or a config printed as a dict show ``DB_PASSWORD=…`` /
``'api_key': '…'`` lines whose values nbagent knows from nothing else (the file was read in a
helper, or never into the kernel). ``notebook_read`` shows a cell's outputs to the model unasked,
while ``read_file`` of that ``.env`` asks: the values are taken by the names the lines give them,
by the environment's rule (``DB_PASSWORD``, ``GITHUB_TOKEN``: whatever the value but a path) and the
notebook's (a key's name needs a value shaped like a generated one).
"""

from __future__ import annotations

from .assigned_secrets import assigned_secrets
from .kernel_secrets import code_secrets

MAX_OUTPUT_CHARS = 200_000
"""Of a longer output only this much is read (its head)."""


def output_secrets(text: str) -> tuple[str, ...]:
    """The values ``text``'s ``NAME=value`` lines and named literals (``{'password': '…'}``) give
    credentials' names, longest first."""
    head = text[:MAX_OUTPUT_CHARS]
    found = [*code_secrets(head)] if any(c in head for c in "\"'") else []
    found += assigned_secrets(head)
    return tuple(sorted(dict.fromkeys(found), key=len, reverse=True))


__all__ = ["output_secrets"]
