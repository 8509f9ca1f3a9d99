"""``%load_ext nbagent`` / ``%unload_ext nbagent`` on a shell: the magics, the ``%%agent`` cell
transformer and the hook that tells which page runs a cell."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import completion, magics_api
from .cell_transformer import agent_cell_transformer
from .document.bridge import address_cell
from .magics import AgentMagics

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell


def load(shell: "InteractiveShell") -> AgentMagics:
    """Register magics and the transformer on ``shell`` (idempotent)."""
    _refuse_start_folder(shell)
    _unpriced_advice_in_the_cell()
    active = magics_api.active()
    if isinstance(active, AgentMagics) and active.shell is shell:
        return active
    magics = AgentMagics(shell=shell, carried=_unloaded.pop(id(shell), None))
    shell.register_magics(magics)
    if address_cell not in shell.events.callbacks["pre_run_cell"]:
        shell.events.register("pre_run_cell", address_cell)  # two pages on one notebook: the running one
    transforms = shell.input_transformer_manager.cleanup_transforms
    if agent_cell_transformer not in transforms:
        # Right after IPython drops leading blank lines, but before it strips indentation and
        # pasted ">>> " prompts, which belong to the prompt text of an %%agent cell.
        transforms.insert(1 if transforms else 0, agent_cell_transformer)
    completion.install(shell, magics)  # Tab on a %agent / %%agent line
    magics_api.set_active(magics)
    return magics


_unloaded: dict[int, AgentMagics] = {}
"""Per shell, the magics ``%unload_ext`` removed, until the next ``%load_ext`` takes what they held."""


def _refuse_start_folder(shell: "InteractiveShell") -> None:
    """nbagent's own imports never take a module from the folder the kernel started in (the notebook's),
    also after ``%cd``, where it is on ``sys.path`` by its absolute path (engine.disk.own_imports).
    IPython's directory history starts with it (``_dh[0]``), whatever ``%cd`` came before ``%load_ext``."""
    from ..engine.disk.own_imports import also_refuse

    history = getattr(getattr(shell, "history_manager", None), "dir_hist", None)
    if history:
        also_refuse(str(history[0]))


def _unpriced_advice_in_the_cell() -> None:
    """A model without prices is said once as a line of the agent cell's output (the loop's notice,
    naming ``%config AgentMagics.prices``), not also as a red stderr warnings block above it."""
    import warnings

    # By its text, not its class (engine.api_facts.cost.UnpricedModelWarning): the kernel's start
    # imports no engine module beyond plain-data settings (tests/test_layering.py).
    warnings.filterwarnings("ignore", message="nbagent has no prices for model", category=UserWarning)


def unload(shell: "InteractiveShell") -> None:
    """Remove the transformer (magics stay registered, as IPython offers no unregister)."""
    transforms = shell.input_transformer_manager.cleanup_transforms
    if agent_cell_transformer in transforms:
        transforms.remove(agent_cell_transformer)
    if address_cell in shell.events.callbacks["pre_run_cell"]:
        shell.events.unregister("pre_run_cell", address_cell)
    completion.uninstall(shell)
    # the unloaded magics no longer take %config: after a reload it would be said (and set) twice
    gone = magics_api.active()
    shell.configurables[:] = [c for c in shell.configurables if c is not gone]
    if isinstance(gone, AgentMagics) and gone.shell is shell:
        _unloaded[id(shell)] = gone
    magics_api.set_active(None)


__all__ = ["load", "unload"]
