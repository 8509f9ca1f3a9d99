// What a kernel restart says on the cards still open: an agent's card and a serve card differ.
import test from 'node:test';
import assert from 'node:assert/strict';
import { RETIRED_TEXT, SERVE_RETIRED_TEXT, retirePrompts } from './build/prompts.js';

/** The least of a DOM element retirePrompts touches: its controls, classes, notes, the panel around it. */
function card(inPanel) {
  const button = { disabled: false };
  const notes = [];
  const classes = new Set(['nbagent-prompt']);
  const box = {
    notes,
    classList: { add: c => classes.add(c) },
    querySelectorAll: () => [button],
    closest: sel => (inPanel && sel === '.nbagent-serve' ? {} : null),
    ownerDocument: { createElement: () => ({}) },
    appendChild: node => notes.push(node.textContent),
  };
  return box;
}

test('a serve card retired by a kernel restart says to run %agent serve again, not an agent cell', () => {
  const serve = card(true);
  const agent = card(false);
  assert.equal(retirePrompts({ querySelectorAll: () => [serve, agent] }), 2);
  assert.deepEqual(serve.notes, [`⚠ ${SERVE_RETIRED_TEXT}`]);
  assert.deepEqual(agent.notes, [`⚠ ${RETIRED_TEXT}`]);
  assert.match(serve.notes[0], /%agent serve again/);
  assert.doesNotMatch(serve.notes[0], /agent cell/);
});
