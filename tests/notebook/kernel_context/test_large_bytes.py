"""A large ``bytes`` variable (a binary file read whole) is described from its head: its whole repr,
up to four times its size, was made at every prompt before 40 characters of it were kept (attacker
pass 20: a 200 MB ``blob`` took 600 MB and a second; a 1 GB one could end the kernel)."""

from __future__ import annotations

import tracemalloc

from tests.notebook.kernel_context.support import block_of, context_text, shell_with

SIZE = 40_000_000  # bytes; their repr would be about 4 × that


def _peak_while(shell: object, prompt: str) -> tuple[str, int]:
    context_text(shell_with(x=1), "warm up")  # the tokenizer's tables load once per process
    tracemalloc.start()
    try:
        text, _ctx = context_text(shell, prompt)
        return text, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_large_bytes_variable_is_described_without_its_whole_repr() -> None:
    blob = bytes(range(256)) * (SIZE // 256)
    text, peak = _peak_while(shell_with(("blob = open('model.bin', 'rb').read()",), blob=blob), "load `blob`")
    assert peak < SIZE // 4, f"{peak:,} bytes allocated to describe {SIZE:,} bytes"
    assert f"bytes (len {SIZE}, b'\\x00\\x01" in block_of(text, "blob")


def test_large_bytes_inside_a_container_are_cut_before_their_repr_is_made() -> None:
    blob = bytes(range(256)) * (SIZE // 256)
    text, peak = _peak_while(shell_with(("parts = [header, blob]",), parts=[b"PK\x03\x04", blob]), "read `parts`")
    assert peak < SIZE // 4, f"{peak:,} bytes allocated to describe {SIZE:,} bytes"
    assert "b'PK\\x03\\x04'" in block_of(text, "parts") and "..." in block_of(text, "parts")


def test_a_large_dict_or_set_is_listed_from_its_first_items_not_sorted_whole() -> None:
    """``reprlib`` sorted a whole set or dict (in C: the 0.5 s limit cannot stop it) to show 50 of its
    items, and a dict with tuple keys was copied whole: a 3 million-word vocabulary took a second at
    every prompt that named it."""
    import time

    n = 1_000_000
    vocab = {f"w{n - i:08d}": i for i in range(n)}  # inserted in reverse order: sorted, w00000001 comes first
    pairs = {(i, i + 1): i for i in range(n)}
    context_text(shell_with(x=1), "warm up")
    start = time.process_time()
    text, _ctx = context_text(shell_with(("vocab = build()",), vocab=vocab, ids=set(vocab)), "what are `vocab` and `ids`?")
    assert "{'w01000000': 0, 'w00999999': 1," in block_of(text, "vocab")  # its own order, first items
    assert time.process_time() - start < 0.5, "nothing sorted: a prompt's description stays fast"
    peak_text, peak = _peak_while(shell_with(("pairs = index()",), pairs=pairs), "what is `pairs`?")
    assert peak < 20_000_000, f"{peak:,} bytes allocated to describe a dict of {n:,} items"
    assert "{(0, 1): 0, (1, 2): 1," in block_of(peak_text, "pairs")


def test_short_bytes_full_of_escapes_stay_within_the_repr_bound() -> None:
    """The bound is on the repr's characters, as for a str: 2,000 bytes of ``\\xff`` (a header, a key
    file read as bytes) reprs as 8,003 characters, which the bytes cut let through whole, four times
    the bound, for each such value of a variable at every prompt (review of attacker pass 20)."""
    from nbagent.engine.loop.facts import MAX_OUTPUT_CHARS
    from nbagent.notebook.kernel_context.cells import safe_repr

    for value in (b"\xff" * MAX_OUTPUT_CHARS, [b"\x00" * MAX_OUTPUT_CHARS], bytearray(b"\x80" * 900)):
        shown = safe_repr(value)
        assert len(shown) <= MAX_OUTPUT_CHARS + 10, f"{type(value).__name__}: {len(shown):,} characters"
    assert safe_repr(b"PK\x03\x04") == "b'PK\\x03\\x04'"  # a short one whole, as before
