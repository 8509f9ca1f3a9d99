"""The fingerprint of a value nbagent cannot hash by content but describes to the model by its own
text: an object of the user's class with ``_repr_llm_`` (``Experiment: 12 runs, best loss 0.125``),
a matplotlib figure (its titles, limits and what is drawn), a type given a ``register_llm_repr``.

The model may answer from that text alone, so a replay compares it: the digest of the description
as it reads when the turn is recorded, and again when its cell replays (the same bounded call the
kernel context makes). Without it such a value had no fingerprint at all (``unchecked`` in the
record), and a replay showed an answer about the old text as current, silently."""

from __future__ import annotations

import re

from .fingerprint import Secret, _digest, fingerprint, without_addresses

REPLAY_SECONDS = 2.0
"""The bound on describing a value again at a replay: the text was made within the kernel context's
0.5 s when it was recorded, and a Restart & Run All on a loaded machine may take longer to make the
same text; past the context's bound that read as a change (a false "changed since"). Still bounded:
one that hangs reads as changed after this."""

_ITEM = r"'(?:[^'\\\n]|\\.)*'" + r'|"(?:[^"\\\n]|\\.)*"'
_STRING_SET = re.compile(rf"\{{((?:{_ITEM})(?:, (?:{_ITEM}))+)\}}")
"""A set of strings as Python prints it (``{'dog', 'cat'}``): its order follows the string hashes,
randomised in each process, so the same set prints in another order in each kernel."""

DESCRIBED = "described:"
"""In front of a digest of the description: compared by describing the value again, not by content."""


def described_fingerprint(value: object, secret: Secret | None = None, *, replay: bool = False,
                          told: str | None = None) -> str | None:
    """``described:`` and a digest of the full description of ``value`` as the model is told it;
    None when it is not described by its own text, describing it failed, or (with ``secret``) the
    text holds a secret (the digest, saved in the record, would let a guess of it be checked).
    ``replay``: made again to compare, with the longer :data:`REPLAY_SECONDS`. ``told``: that
    description as the kernel context just made it (not made again)."""
    from ..kernel_context.protocol import content_description

    text = told if told is not None else content_description(value, REPLAY_SECONDS if replay else None)
    if text is None or (secret is not None and secret(text)):
        return None
    text = without_addresses(text)  # not a change of what the model was told
    text = _STRING_SET.sub(lambda m: "{" + ", ".join(sorted(re.findall(_ITEM, m.group(1)))) + "}", text)
    return DESCRIBED + _digest(type(value).__qualname__.encode(), text.encode("utf-8", "surrogatepass"))


def value_fingerprint(value: object, secret: Secret | None = None, *, replay: bool = False,
                      told: str | None = None) -> str | None:
    """The content fingerprint of ``value`` (:func:`~.fingerprint.fingerprint`), else the digest of
    what the model is told of it (:func:`described_fingerprint`; ``told``: that text, just made),
    else None (unchecked)."""
    found = fingerprint(value, secret=secret)
    return found if found is not None else described_fingerprint(value, secret, replay=replay, told=told)


__all__ = ["DESCRIBED", "REPLAY_SECONDS", "described_fingerprint", "value_fingerprint"]
