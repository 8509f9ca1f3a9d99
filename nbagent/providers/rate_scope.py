"""Which kernels share a rate limit: those that send with the same credential to the same endpoint.

The kernels of one machine pace their requests together per key
(:mod:`nbagent.engine.loop.shared_budget`); the file they share is named by a digest of the endpoint
and the credential, never by the credential itself (it is not recoverable from the name, and the
file holds only bucket levels and send times).
"""

from __future__ import annotations

import hashlib
import os

DEFAULT_BASE_URL = "https://api.anthropic.com"


def rate_scope(base_url: str | None, credential: str | None) -> str | None:
    """A digest naming (endpoint, credential); None without a credential (nothing to share)."""
    if not credential:
        return None
    url = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    return hashlib.sha256(f"nbagent-rate-scope\0{url}\0{credential}".encode()).hexdigest()[:32]


__all__ = ["rate_scope"]
