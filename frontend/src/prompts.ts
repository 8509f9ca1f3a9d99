/**
 * Permission prompts of a kernel that restarted or stopped.
 *
 * The kernel shows Allow / Deny as ipywidgets (class `nbagent-prompt`, nbagent/notebook/view/prompts.py).
 * When the kernel restarts, its widgets' views stay on the page looking live, and a click on them goes
 * to a kernel that no longer holds the question: the call it asked about never ran. So the page says
 * so on each prompt still open, and disables its controls.
 */

export const PROMPT_CLASS = 'nbagent-prompt';
export const RETIRED_CLASS = 'nbagent-prompt-retired';
export const RETIRED_TEXT =
  'The kernel restarted or stopped while this question waited: the call it asked about never ran, ' +
  'and these buttons no longer reach it. Run the agent cell again to ask anew.';

/** Kernel states after which a waiting question is gone with its kernel. */
const GONE = new Set(['restarting', 'autorestarting', 'dead', 'terminating']);

export function kernelGone(status: string): boolean {
  return GONE.has(status);
}

/** Disable every open prompt under `root` and say why, once each; returns how many were retired. */
export function retirePrompts(root: ParentNode): number {
  let retired = 0;
  root.querySelectorAll(`.${PROMPT_CLASS}`).forEach(prompt => {
    if (prompt.classList.contains(RETIRED_CLASS)) {
      return;
    }
    const controls = prompt.querySelectorAll<HTMLButtonElement | HTMLInputElement>('button, input');
    if (!Array.from(controls).some(c => !c.disabled)) {
      return; // already decided: its buttons were disabled by the kernel
    }
    controls.forEach(c => {
      c.disabled = true;
    });
    prompt.classList.add(RETIRED_CLASS);
    const note = prompt.ownerDocument.createElement('div');
    note.className = 'nbagent-prompt-retired-note';
    note.textContent = `⚠ ${RETIRED_TEXT}`;
    prompt.appendChild(note);
    retired++;
  });
  return retired;
}
