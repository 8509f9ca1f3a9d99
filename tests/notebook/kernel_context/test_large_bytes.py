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
