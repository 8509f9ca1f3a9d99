/**
 * A click delay on a permission card's Allow buttons.
 *
 * A card appears while the user is doing something else: a click or a key press aimed at what was
 * under the cursor (or had the focus) a moment before could land on Allow / Allow always. Browsers
 * guard their own download and permission dialogs the same way (Firefox ignores a dialog's buttons
 * for `security.dialog_enable_delay`, 1000 ms; Chromium's prompts ignore input for about a
 * double-click interval, 500 ms). So each Allow button (class `nbagent-allow`, set by
 * nbagent/notebook/view/prompts.py) ignores activation for ARM_DELAY_MS after it is put on the
 * page, again each time it is put back (JupyterLab's windowed notebook re-attaches a cell scrolled
 * back into view), and again each time it moves on the page while its card waits: content above the
 * card that grows or shrinks by a line moved a wrapped row's "Allow always" (or Allow) under a cursor
 * resting on Deny, right below it (a narrow notebook wraps the row into a column). Deny is never
 * delayed. Nothing here focuses a button.
 */

export const ALLOW_CLASS = 'nbagent-allow';
export const ARMING_CLASS = 'nbagent-allow-arming';
/** 1000 ms: Firefox's dialog delay; longer than a double click, shorter than reading the card.
 * Measured on the monotonic clock (performance.now): the wall clock may be set back meanwhile. */
export const ARM_DELAY_MS = 1000;

/** The events that activate a button, by pointer or keyboard; each is stopped while it arms. */
const ACTIVATING = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'dblclick', 'keydown', 'keyup', 'keypress'];

/** How often a waiting card's Allow buttons are checked for having moved (only while one is open). */
export const MOVE_CHECK_MS = 100;

type Clock = () => number;
type Place = readonly [number, number];

/** Watches `doc` for Allow buttons and keeps each inert for `delay` ms after it appears;
 * returns a function that stops watching. */
export function guardAllowButtons(doc: Document, delay = ARM_DELAY_MS,
                                  now: Clock = () => performance.now()): () => void {
  const win = doc.defaultView as Window & typeof globalThis;
  const buttons = armer(win, delay, now);
  const observer = watchAdded(win, doc, buttons);
  const stop = (event: Event) => {
    const button = (event.target as Element | null)?.closest?.(`.${ALLOW_CLASS}`);
    if (button && buttons.early(button as HTMLButtonElement)) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  };
  ACTIVATING.forEach(type => doc.addEventListener(type, stop, true));
  return () => {
    buttons.stop();
    observer.disconnect();
    ACTIVATING.forEach(type => doc.removeEventListener(type, stop, true));
  };
}

type Armer = ReturnType<typeof armer>;

/** Arms Allow buttons (inert, shown as arming) and releases each `delay` ms after it was last armed. */
function armer(win: Window, delay: number, now: Clock) {
  const shownAt = new WeakMap<Element, number>();
  const places = watchPlaces(win, button => arm(button));
  const arm = (button: HTMLButtonElement) => {
    shownAt.set(button, now());
    places.note(button);
    button.classList.add(ARMING_CLASS);
    if (!button.disabled) {
      button.disabled = true; // shows it is not yet active; a disabled button takes no click
      button.dataset.nbagentArmed = '1';
    }
    win.setTimeout(() => release(button), delay);
  };
  const release = (button: HTMLButtonElement) => {
    const left = delay - (now() - (shownAt.get(button) ?? 0));
    if (left > 0) {
      // Put back on the page since, or the timer came a moment early by this clock (timers and
      // clocks round differently): try again then, never left disabled for good.
      win.setTimeout(() => release(button), left);
      return;
    }
    button.classList.remove(ARMING_CLASS);
    if (button.dataset.nbagentArmed && stillOpen(button)) {
      button.disabled = false;
    }
    delete button.dataset.nbagentArmed;
  };
  /** Whether an activation of `button` now comes too early. One on the page before the watch
   * began, or moved since the last check (the click may be the one aimed at what was there a
   * moment before), arms from now. */
  const early = (button: HTMLButtonElement): boolean => {
    const at = shownAt.get(button);
    if (at === undefined || places.moved(button)) {
      arm(button);
      return true;
    }
    return now() - at < delay;
  };
  return { arm, early, known: (button: Element) => shownAt.has(button), stop: places.stop };
}

/** Arms each Allow button put on the page, and each that gets our class once there (ipywidgets
 * may give a view its classes after it is on the page). */
function watchAdded(win: Window & typeof globalThis, doc: Document, buttons: Armer): MutationObserver {
  const observer = new win.MutationObserver(records => {
    for (const record of records) {
      record.addedNodes.forEach(node => {
        if (node instanceof win.Element) {
          allowButtonsIn(node).forEach(buttons.arm);
        }
      });
      const target = record.target;
      if (record.type === 'attributes' && target instanceof win.HTMLButtonElement &&
          target.classList.contains(ALLOW_CLASS) && !buttons.known(target)) {
        buttons.arm(target);
      }
    }
  });
  observer.observe(doc, { childList: true, subtree: true, attributes: true, attributeFilter: ['class'] });
  return observer;
}

/** Where each open Allow button was last seen; `onMove` for one that moved since, checked every
 * MOVE_CHECK_MS while one is open (the interval stops when none is). */
function watchPlaces(win: Window, onMove: (button: HTMLButtonElement) => void) {
  const places = new Map<HTMLButtonElement, Place | null>();
  let checking: number | undefined;
  const moved = (button: HTMLButtonElement): boolean => {
    const was = places.get(button), is = placeOf(button, win);
    return !!was && !!is && (Math.abs(was[0] - is[0]) > 1 || Math.abs(was[1] - is[1]) > 1);
  };
  const stop = () => {
    if (checking !== undefined) {
      win.clearInterval(checking);
      checking = undefined;
    }
  };
  const check = () => {
    places.forEach((_place, button) => {
      if (!button.isConnected || !stillOpen(button)) {
        places.delete(button);
      } else if (moved(button)) {
        onMove(button);
      }
    });
    if (!places.size) {
      stop();
    }
  };
  const note = (button: HTMLButtonElement) => {
    places.set(button, placeOf(button, win));
    if (checking === undefined && typeof win.setInterval === 'function') {
      checking = win.setInterval(check, MOVE_CHECK_MS);
    }
  };
  return { note, moved, stop };
}

/** Where a button is in the page's content, whatever any box around it is scrolled to (scrolling
 * is not moving); null where there is no layout to ask. */
function placeOf(button: HTMLElement, win: Window): Place | null {
  if (typeof button.getBoundingClientRect !== 'function') {
    return null;
  }
  const r = button.getBoundingClientRect();
  let top = r.top + (win.scrollY || 0), left = r.left + (win.scrollX || 0);
  for (let el = button.parentElement; el; el = el.parentElement) {
    top += el.scrollTop;
    left += el.scrollLeft;
  }
  return [top, left];
}

function allowButtonsIn(node: Element): HTMLButtonElement[] {
  const found = Array.from(node.querySelectorAll<HTMLButtonElement>(`button.${ALLOW_CLASS}`));
  return node.matches(`button.${ALLOW_CLASS}`) ? [node as HTMLButtonElement, ...found] : found;
}

/** Whether the card is still waiting: the kernel disables every control once it is answered (or
 * the page retired it), and Deny, never delayed, says which. */
function stillOpen(button: Element): boolean {
  const card = button.closest('.nbagent-prompt');
  if (!card) {
    return true; // not in a card as the kernel builds it: never left disabled for good
  }
  if (card.classList.contains('nbagent-prompt-retired')) {
    return false;
  }
  const controls = Array.from(card.querySelectorAll<HTMLButtonElement>('button'));
  return controls.some(c => !c.classList.contains(ALLOW_CLASS) && !c.disabled);
}
