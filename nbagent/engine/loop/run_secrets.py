"""Which secrets a :class:`~nbagent.engine.loop.query.QueryEngine` redacts, request by request.

A mixin (moved out of query.py): the secrets are the session's ``secret_env`` variables (read at
each request), the secrets it was given in code, and the credential variables of the environment
and of the notebook's kernel, read once per run (~25 µs a request otherwise) and again after code
ran in the kernel during the run. :class:`QueryEngine` sets the attributes declared here.
"""

from __future__ import annotations

import os

from ..contracts.config import SessionConfig
from ..credentials.env_secrets import credential_env_values
from ..state.session import Session
from .facts import KernelFacts, kernel_secrets
from .sanitize import Sanitizer, secret_values, short_secret_notices


class RunSecrets:
    """The sanitizer of :class:`~nbagent.engine.loop.query.QueryEngine` (which sets these)."""

    session: Session
    kernel_facts: KernelFacts | None
    _config: SessionConfig
    _secrets: tuple[str | None, ...]
    _short_told: set[str]
    _sanitizer: tuple[tuple[str | None, ...], Sanitizer] | None  # by the secrets' values
    _run_env: tuple[str, ...] | None  # the credential-named variables' values, read at the run's start

    def credential_values(self) -> tuple[str, ...]:
        """The credential variables' values now: the environment's and the notebook's."""
        return (*credential_env_values(), *kernel_secrets(self.kernel_facts))

    def sanitizer(self) -> Sanitizer:
        """The boundary for this request: secrets are looked up now (the environment may have changed)."""
        # Between runs the credential variables are read at each call (a turn's record, serve).
        env = self._run_env if self._run_env is not None else self.credential_values()
        extra = (*self._secrets, *env)
        values = (*(os.environ.get(name) for name in self._config.secret_env), *extra)
        if self._sanitizer is None or self._sanitizer[0] != values:  # made again only when a secret changed
            self._sanitizer = (values, Sanitizer(secret_values(self._config.secret_env, extra)))
            self.session.notices += short_secret_notices(self._config.secret_env, self._short_told)
        return self._sanitizer[1]

    def sanitizer_after_code(self) -> Sanitizer:
        """The sanitizer once code ran in the kernel during the run (the python tool, a cell it ran):
        the credential variables it made (``cfg = dotenv_values(".env")``) join the run's secrets, for
        that call's output, its card and every later request (they were read once per run). The
        ones read before stay secrets for the rest of the run: code that printed a password, then
        deleted its variable (``p = db_password; del db_password; print(p)``), still shows none."""
        if self._run_env is not None:
            self._run_env = tuple(dict.fromkeys((*self._run_env, *self.credential_values())))
        return self.sanitizer()


__all__ = ["RunSecrets"]
