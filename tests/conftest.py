"""Shared test fixtures.

No test may reach the network: pytest-socket (``addopts`` in pyproject.toml) lets sockets connect
only to loopback hosts and unix paths.
"""

from __future__ import annotations
