"""Install the ``nbagent`` kernelspec (display name "Python 3 (nbagent)").

The files ship as package data in ``nbagent/kernel/resources/`` (a copy of the canonical
``kernelspec/nbagent/``; a test keeps them identical) so that installing works from a wheel too.
``argv[0]`` is replaced by the running interpreter, so the kernel runs in this environment.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TypedDict

KERNEL_NAME = "nbagent"
RESOURCES = Path(__file__).with_name("resources")


class KernelSpecJSON(TypedDict):
    """The ``kernel.json`` of ``resources/``, as Jupyter reads it."""

    argv: list[str]
    display_name: str
    language: str
    interrupt_mode: str
    metadata: dict[str, bool]


def kernel_json(executable: str | None = None) -> KernelSpecJSON:
    """The kernelspec's ``kernel.json`` with ``argv[0]`` set to ``executable`` (default: this Python)."""
    spec: KernelSpecJSON = json.loads((RESOURCES / "kernel.json").read_text(encoding="utf-8"))
    spec["argv"][0] = executable or sys.executable
    return spec


def install(
    *,
    user: bool = False,
    prefix: str | None = None,
    sys_prefix: bool = False,
    kernel_name: str = KERNEL_NAME,
    display_name: str | None = None,
    executable: str | None = None,
) -> str:
    """Install the kernelspec and return the directory it was installed to.

    Without ``user``/``prefix``/``sys_prefix`` it goes to the system-wide Jupyter data dir, like
    ``jupyter kernelspec install``.
    """
    from jupyter_client.kernelspec import KernelSpecManager

    if sys_prefix:
        prefix = sys.prefix
    spec = kernel_json(executable)
    if display_name:
        spec["display_name"] = display_name
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / kernel_name
        shutil.copytree(RESOURCES, src, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
        (src / "kernel.json").write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
        return str(KernelSpecManager().install_kernel_spec(str(src), kernel_name, user=user, prefix=prefix))


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m nbagent.kernel install [--user|--sys-prefix|--prefix P]``."""
    parser = argparse.ArgumentParser(prog="python -m nbagent.kernel install", description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="install for the current user")
    where.add_argument("--sys-prefix", action="store_true", help="install into this environment (sys.prefix)")
    where.add_argument("--prefix", metavar="P", help="install under prefix P (P/share/jupyter/kernels)")
    parser.add_argument("--name", default=KERNEL_NAME, help="kernel name (default: %(default)s)")
    parser.add_argument("--display-name", default=None, help="display name shown by Jupyter")
    args = parser.parse_args(argv)
    dest = install(user=args.user, prefix=args.prefix, sys_prefix=args.sys_prefix,
                   kernel_name=args.name, display_name=args.display_name)
    print(f"Installed kernelspec {args.name} in {dest}")
    return 0
