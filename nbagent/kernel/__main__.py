"""``python -m nbagent.kernel -f {connection_file}`` runs the kernel;
``python -m nbagent.kernel install [--user|--sys-prefix|--prefix P]`` installs its kernelspec."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int | None:
    """Dispatch to the installer or launch the kernel."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "install":
        from .install import main as install_main

        return install_main(args[1:])
    from ipykernel.kernelapp import IPKernelApp

    from .kernel import NbAgentKernel

    IPKernelApp.launch_instance(argv=args, kernel_class=NbAgentKernel)
    return None


if __name__ == "__main__":
    sys.exit(main())
