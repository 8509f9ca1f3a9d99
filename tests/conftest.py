"""Shared test fixtures."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def _is_loopback(address: Any) -> bool:
    """Whether a socket address stays on this machine (loopback host or an AF_UNIX path)."""
    if isinstance(address, (str, bytes, bytearray)):
        return True  # AF_UNIX path (or abstract socket name)
    if not isinstance(address, tuple) or not address:
        return False
    host = address[0]
    if isinstance(host, bytes):
        host = host.decode()
    host = str(host).split("%", 1)[0]  # drop an IPv6 zone id
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _block_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach the network: any connect to a non-loopback address raises."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_create_connection = socket.create_connection

    def refuse(address: Any) -> None:
        raise OSError(f"tests may not reach the network (blocked connect to {address!r})")

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family != getattr(socket, "AF_UNIX", None) and not _is_loopback(address):
            refuse(address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if self.family != getattr(socket, "AF_UNIX", None) and not _is_loopback(address):
            refuse(address)
        return real_connect_ex(self, address)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        if not _is_loopback(address):
            refuse(address)
        return real_create_connection(address, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "create_connection", create_connection)
