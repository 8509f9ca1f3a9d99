/**
 * Permission prompts and agent runs of a kernel that restarted or stopped.
 *
 * The kernel shows Allow / Deny as ipywidgets (class `nbagent-prompt`, nbagent/notebook/view/prompts.py),
 * and a running agent cell as a live widget (class `nbagent-run`) that its end replaces with a static
 * transcript. When the kernel restarts, those widgets' views stay on the page looking live, and a click
 * on them goes to a kernel that no longer holds them: the call asked about never ran, the run never
 * finished. So the page says so on each one still there, and disables its controls.
 */

export const PROMPT_CLASS = 'nbagent-prompt';
export const RETIRED_CLASS = 'nbagent-prompt-retired';
export const RUN_CLASS = 'nbagent-run';
export const RUN_RETIRED_CLASS = 'nbagent-run-retired';
export const RUN_RETIRED_TEXT =
  'The kernel restarted or stopped while this agent cell ran: the turn never finished (nothing after ' +
  'this point ran, and it was not recorded). Run the agent cell again to ask anew.';
export const RETIRED_TEXT =
  'The kernel restarted or stopped while this question waited: the call it asked about never ran, ' +
  'and these buttons no longer reach it. Run the agent cell again to ask anew.';
export const SERVE_CLASS = 'nbagent-serve';
export const SERVE_RETIRED_TEXT =
  'The kernel restarted or stopped while this question waited: the MCP client\'s call it asked about never ran, ' +
  'and these buttons no longer reach it. The server ended with the kernel: run %agent serve again for a new one.';

/** Kernel states after which a waiting question is gone with its kernel. */
const GONE = new Set(['restarting', 'autorestarting', 'dead', 'terminating']);

export function kernelGone(status: string): boolean {
  return GONE.has(status);
}

function disableAll(box: Element): boolean {
  const controls = box.querySelectorAll<HTMLButtonElement | HTMLInputElement>('button, input');
  const open = Array.from(controls).some(c => !c.disabled);
  controls.forEach(c => {
    c.disabled = true;
  });
  return open;
}

function addNote(box: Element, className: string, text: string): void {
  const note = box.ownerDocument.createElement('div');
  note.className = className;
  note.textContent = `⚠ ${text}`;
  box.appendChild(note);
}

/** Disable every open prompt under `root` and say why, once each; returns how many were retired. */
export function retirePrompts(root: ParentNode): number {
  let retired = 0;
  root.querySelectorAll(`.${PROMPT_CLASS}:not(.${RETIRED_CLASS})`).forEach(prompt => {
    if (!disableAll(prompt)) {
      return; // already decided: its buttons were disabled by the kernel
    }
    prompt.classList.add(RETIRED_CLASS);
    // A card of `%agent serve` (in its panel) has no agent cell to run again: the client calls again.
    const text = prompt.closest(`.${SERVE_CLASS}`) ? SERVE_RETIRED_TEXT : RETIRED_TEXT;
    addNote(prompt, 'nbagent-prompt-retired-note', text);
    retired++;
  });
  return retired;
}

/** Mark every agent run still live under `root` as never finished (after `retirePrompts`: a run
 * whose open question already says why gets no second line); returns how many. */
export function retireRuns(root: ParentNode): number {
  let retired = 0;
  root.querySelectorAll(`.${RUN_CLASS}:not(.${RUN_RETIRED_CLASS})`).forEach(run => {
    disableAll(run);
    run.classList.add(RUN_RETIRED_CLASS);
    if (!run.querySelector('.nbagent-prompt-retired-note')) {
      addNote(run, 'nbagent-run-retired-note', RUN_RETIRED_TEXT);
    }
    retired++;
  });
  return retired;
}

/** What a kernel's end means for the page: its open questions and its runs are gone. */
export function retireAll(root: ParentNode): void {
  retirePrompts(root);
  retireRuns(root);
}
