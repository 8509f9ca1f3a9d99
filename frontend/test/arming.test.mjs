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

/** A page with layout: buttons report where they are, a scroll box holds them, events reach the guard. */
function laidOutPage() {
  const timers = [], intervals = [], listeners = {};
  let observe;
  const win = {
    Element: FakeElement, HTMLButtonElement: FakeButton, scrollX: 0, scrollY: 0,
    MutationObserver: class { constructor(cb) { observe = cb; } observe() {} disconnect() {} },
    setTimeout: (fn, ms) => timers.push({ fn, ms }),
    setInterval: fn => intervals.push(fn),
    clearInterval: () => intervals.splice(0),
  };
  const doc = { defaultView: win, addEventListener: (type, fn) => { listeners[type] = fn; }, removeEventListener() {} };
  const scroller = { scrollTop: 0, scrollLeft: 0, parentElement: null };
  const button = () => {
    const b = new FakeButton([ALLOW_CLASS]);
    b.rect = { top: 500, left: 40 };
    b.isConnected = true;
    b.parentElement = scroller;
    b.getBoundingClientRect = () => b.rect;
    b.closest = sel => (sel === `.${ALLOW_CLASS}` ? b : null);
    return b;
  };
  const click = target => {
    const event = { target, stopped: false, preventDefault() {}, stopImmediatePropagation() { this.stopped = true; } };
    listeners.click(event);
    return event.stopped; // true: the guard swallowed it
  };
  return { doc, timers, intervals, scroller, button, click,
           add: node => observe([{ type: 'childList', addedNodes: [node], target: doc }]) };
}

test('an armed Allow that moves (content above its card grew a line) is inert again, as if it had just appeared', () => {
  const { doc, timers, intervals, button, click, add } = laidOutPage();
  let clock = 0;
  const stop = guardAllowButtons(doc, 1000, () => clock);
  const allow = button();
  add(allow);
  clock = 1500;
  while (timers.length) timers.shift().fn();
  assert.equal(allow.disabled, false); // armed
  allow.rect = { top: 520, left: 40 }; // the card moved 20 px down: Allow now where Deny was
  assert.equal(click(allow), true); // a click at once (before any check) is swallowed
  assert.equal(allow.disabled, true);
  clock = 2000;
  intervals[0](); // the periodic check: still where it moved to, nothing new
  clock = 2600;
  while (timers.length) timers.shift().fn();
  assert.equal(allow.disabled, false);
  assert.equal(click(allow), false); // a second later, a click allows
  allow.rect = { top: 560, left: 40 }; // moves again, with nobody clicking
  intervals[0]();
  assert.equal(allow.disabled, true); // the check armed it anew
  stop();
});

test('scrolling the notebook does not re-arm an Allow button: it did not move in the notebook', () => {
  const { doc, timers, intervals, scroller, button, click, add } = laidOutPage();
  let clock = 0;
  const stop = guardAllowButtons(doc, 1000, () => clock);
  const allow = button();
  add(allow);
  clock = 1500;
  while (timers.length) timers.shift().fn();
  scroller.scrollTop = 300;
  allow.rect = { top: 200, left: 40 };
  intervals[0]();
  assert.equal(allow.disabled, false);
  assert.equal(click(allow), false);
  allow.isConnected = false; // gone from the page: no longer checked
  intervals[0]();
  assert.equal(intervals.length, 0);
  stop();
});
