"""Transitional: the explorer is :mod:`nbagent.explorer`; delete once ``commands.py`` imports it there."""

from ..explorer import explore

__all__ = ["explore"]
