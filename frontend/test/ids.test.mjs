// A pasted cell gets an id of its own (src/ids.ts), against the real @jupyter/ydoc model, doing what
// JupyterLab's Cut, Undo and Paste do to it (@jupyterlab/notebook's actions: a cut code cell is
// pasted with its id).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as Y from 'yjs';
import { YNotebook } from '@jupyter/ydoc';
import { keepIdsUnique } from './build/ids.js';
import { opReplace } from './build/ops.js';
import { agentInsert, byId, ids, notebook, user } from './helpers.mjs';

/** A notebook whose ids this page keeps unique, undone by the test's end. */
function watched(t, cells) {
  const nb = notebook(cells);
  nb.undoManager.clear(); // the notebook as opened: its cells are no undo step
  const stop = keepIdsUnique(nb);
  t.after(() => {
    stop();
    nb.dispose();
  });
  return nb;
}

/** JupyterLab's Cut: the cell's JSON (id included) to the clipboard, the cell out, one undo step. */
function cut(nb, index) {
  const json = nb.cells[index].toJSON();
  nb.transact(() => nb.deleteCell(index));
  nb.undoManager.stopCapturing();
  return json;
}

/** JupyterLab's Paste of a cut code cell: inserted with the id it had. */
function paste(nb, index, json) {
  nb.insertCells(index, [structuredClone(json)]);
  nb.undoManager.stopCapturing();
}

function unique(nb) {
  return new Set(ids(nb)).size === nb.cells.length;
}

test('cut, undo, paste: the pasted cell gets a fresh id and the original keeps its own', t => {
  const nb = watched(t, [user('a = 1'), user('%%agent\nsum a')]);
  const agentCell = nb.cells[1].id;
  const clip = cut(nb, 1);
  nb.undo();
  assert.equal(nb.cells[1].id, agentCell, 'undo gives the cut cell back with its id');
  paste(nb, 2, clip);
  assert.equal(nb.cells.length, 3);
  assert.ok(unique(nb), `ids ${ids(nb)}`);
  assert.equal(nb.cells[1].id, agentCell);
  assert.notEqual(nb.cells[2].id, agentCell);
  assert.equal(nb.cells[2].getSource(), '%%agent\nsum a', 'the copy is the same cell but for its id');
});

test('a cut cell pasted twice: the second paste is the copy', t => {
  const nb = watched(t, [user('x = 1'), user('y = 2')]);
  const moved = nb.cells[0].id;
  const clip = cut(nb, 0);
  paste(nb, 1, clip);
  assert.equal(nb.cells[1].id, moved, 'cut and paste is a move: the id stays');
  paste(nb, 2, clip);
  assert.ok(unique(nb), `ids ${ids(nb)}`);
  assert.equal(nb.cells[1].id, moved);
});

test('the bridge then writes a record into the cell that runs, not into the first of the id', t => {
  const nb = watched(t, [user('%%agent\nplot it')]);
  const clip = cut(nb, 0);
  nb.undo();
  paste(nb, 1, clip);
  const pasted = nb.cells[1].id;
  opReplace(nb, { metadata: { nbagent: { record: 'r2' } } }, pasted);
  assert.equal(nb.cells[1].getMetadata('nbagent').record, 'r2');
  assert.equal(nb.cells[0].getMetadata('nbagent'), undefined, 'the original is untouched');
});

test('undo of the paste, then redo: still one id per cell, and undo never brings the shared id back', t => {
  const nb = watched(t, [user('a = 1')]);
  const first = nb.cells[0].id;
  const clip = cut(nb, 0);
  nb.undo();
  paste(nb, 1, clip);
  nb.undo();
  assert.deepEqual(ids(nb), [first]);
  nb.redo();
  assert.equal(nb.cells.length, 2);
  assert.ok(unique(nb), `ids ${ids(nb)}`);
  assert.equal(nb.cells[0].id, first);
});

test('a move, an agent insert and a plain paste keep their ids', t => {
  const nb = watched(t, [user('a = 1'), user('b = 2')]);
  const before = ids(nb);
  nb.moveCell(0, 1);
  assert.deepEqual(ids(nb), [before[1], before[0]]);
  const made = agentInsert(nb, 'print(a)', 1);
  assert.ok(byId(nb, made), 'the bridge finds the cell it made by the id it replied');
  assert.ok(unique(nb));
});

test('a change from another page of a shared document is left to that page', t => {
  const here = watched(t, [user('a = 1')]);
  const there = new YNotebook();
  t.after(() => there.dispose());
  Y.applyUpdate(there.ydoc, Y.encodeStateAsUpdate(here.ydoc));
  const shared = there.cells[0].id;
  there.insertCells(1, [{ ...there.cells[0].toJSON(), id: shared }]); // that page's own duplicate
  Y.applyUpdate(here.ydoc, Y.encodeStateAsUpdate(there.ydoc));
  assert.deepEqual(ids(here), [shared, shared], 'not repaired here: the other page would race');
});

test('stopping the watch leaves later inserts alone', t => {
  const nb = notebook([user('a = 1')]);
  nb.undoManager.clear();
  t.after(() => nb.dispose());
  keepIdsUnique(nb)();
  const clip = cut(nb, 0);
  nb.undo();
  paste(nb, 1, clip);
  assert.equal(new Set(ids(nb)).size, 1);
});
