"""autorun's notebook packages (nbclient, nbformat, nbconvert) are an optional extra."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
for name in ("nbclient", "nbformat", "nbconvert"):
    sys.modules[name] = None  # as if not installed
import nbagent.notebook.autorun as autorun
try:
    autorun.run_notebook("missing.ipynb")
except ImportError as exc:
    print(exc)
try:
    autorun.AutoClickClient
except ImportError as exc:
    print(exc)
"""


def test_autorun_imports_without_the_notebooks_extra_and_names_it_when_used() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True)
    lines = out.stdout.splitlines()
    assert len(lines) == 2 and all("pip install 'nbagent[notebooks]'" in line for line in lines), out.stdout
    assert "nbformat" in lines[0] and "nbclient" in lines[1]


def test_the_client_class_is_built_once() -> None:
    from nbagent.notebook import autorun

    assert autorun.AutoClickClient is autorun.client_class()
    # Allow, and a failed request's Cancel (an unattended run never waits on a Retry nobody presses)
    assert autorun.AutoClickClient.class_traits()["click"].default() == ["Allow", autorun.CANCEL_FAILED]
