"""Records which front-end sources the committed build in ``labextension/`` was built from.

The built extension is committed so that ``pip install`` (and CI) needs no node. The risk is a
change to ``frontend/src`` that nobody rebuilt: ``make frontend`` writes the digest of the sources
next to the build, and tests/frontend/test_labextension_build.py fails when they differ.

Usage: ``python frontend/stamp.py write`` (after a build) or ``python frontend/stamp.py check``.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

FRONTEND = Path(__file__).resolve().parent
BUILD = FRONTEND.parent / "labextension"
STAMP = BUILD / "sources.sha256"
# Everything that changes what the build emits; node_modules is pinned by the lockfile.
TOP_LEVEL = ("package.json", "package-lock.json", "tsconfig.json", "install.json")


def sources() -> list[Path]:
    """The files the build is made from, in a stable order."""
    files = [FRONTEND / name for name in TOP_LEVEL]
    files += sorted(p for p in (FRONTEND / "src").rglob("*") if p.is_file())
    return files


def digest() -> str:
    """sha256 over each source's path (relative to frontend/) and bytes."""
    h = hashlib.sha256()
    for path in sources():
        h.update(path.relative_to(FRONTEND).as_posix().encode() + b"\0")
        # Line endings normalised: a Windows checkout (autocrlf) is not a source change.
        h.update(path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return h.hexdigest()


def main(argv: list[str]) -> int:
    if argv == ["write"]:
        STAMP.write_text(digest() + "\n")
        return 0
    if argv == ["check"]:
        recorded = STAMP.read_text().strip() if STAMP.exists() else "(none)"
        if recorded != digest():
            print(f"labextension/ was built from other sources (recorded {recorded[:12]}): run `make frontend`")
            return 1
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
