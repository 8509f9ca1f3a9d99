"""The cases of a parametrized test that only the soak run takes (``make test`` runs both).

The default ``pytest`` run stays short (the brief asks for about fifteen minutes on two cores): a
check repeated on a second kernel or front-end, or the whole of an exhaustive sweep, runs in the
soak run (``--soak -m soak``), and the default run keeps one case or a sample that can fail the
same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

SOAK = pytest.mark.soak


def first_by_default(values: Sequence[object]) -> list[object]:
    """``values`` (one argument each) as parameters: the first in the default run, the others in
    the soak run."""
    return [value if i == 0 else pytest.param(value, marks=SOAK) for i, value in enumerate(values)]


def sample_by_default(sample: object, whole: object) -> list[object]:
    """Two parameters: ``sample`` (a part of a sweep) in the default run, ``whole`` in the soak run."""
    return [sample, pytest.param(whole, marks=SOAK)]
