"""What ``%agent fix`` asks the model, and how a recorded turn is known to be such a fix."""

from __future__ import annotations

FIX_PROMPT = (
    "The notebook cell In[{cell}] failed. Explain the cause in one or two sentences, then fix it: check the "
    "corrected code with the python tool, and end with the corrected cell as one python code block.\n\n{error}"
)
_FIX_HEAD = FIX_PROMPT.split("{cell}")[0]


def is_fix_prompt(prompt: str) -> bool:
    """The prompt ``%agent fix`` sent (a cell's record of it says so: a cell retyped into ``%agent fix``
    keeps the record of the question it answered before, which is not a fix)."""
    return prompt.strip().startswith(_FIX_HEAD.strip())


__all__ = ["FIX_PROMPT", "is_fix_prompt"]
