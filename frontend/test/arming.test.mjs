// The click delay on a permission card's Allow buttons (src/arming.ts), on a fake page and clock.
import test from 'node:test';
import assert from 'node:assert/strict';
import { ALLOW_CLASS, guardAllowButtons } from './build/arming.js';

class FakeElement {
  constructor(classes = []) {
    this.classes = new Set(classes);
    this.classList = { add: c => this.classes.add(c), remove: c => this.classes.delete(c), contains: c => this.classes.has(c) };
  }
  matches(sel) { return sel === `button.${ALLOW_CLASS}` && this instanceof FakeButton && this.classes.has(ALLOW_CLASS); }
  querySelectorAll() { return []; }
  closest() { return null; }
}
class FakeButton extends FakeElement {
  constructor(classes) { super(classes); this.disabled = false; this.dataset = {}; }
}

/** A page whose clock the test moves, and whose timers fire when the test says. */
function page() {
  const timers = [];
  let observe;
  const win = {
    Element: FakeElement,
    HTMLButtonElement: FakeButton,
    MutationObserver: class { constructor(cb) { observe = cb; } observe() {} disconnect() {} },
    setTimeout: (fn, ms) => timers.push({ fn, ms }),
  };
  const doc = { defaultView: win, addEventListener() {}, removeEventListener() {} };
  return { doc, timers, add: node => observe([{ type: 'childList', addedNodes: [node], target: doc }]) };
}

test('an Allow button whose timer fires a moment early by the clock is still enabled, not left disabled for good', () => {
  const { doc, timers, add } = page();
  let clock = 0;
  const stop = guardAllowButtons(doc, 1000, () => clock);
  const allow = new FakeButton([ALLOW_CLASS]);
  add(allow);
  assert.equal(allow.disabled, true); // inert as it appears
  clock = 999; // the timer of 1000 ms fires; the clock (rounded otherwise) says 999
  timers.shift().fn();
  clock = 1000;
  while (timers.length) {
    timers.shift().fn();
  }
  assert.equal(allow.disabled, false);
  stop();
});
