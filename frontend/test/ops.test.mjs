// The bridge's operations against a real @jupyter/ydoc YNotebook (node --test; see Makefile `test-frontend`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { YNotebook } from '@jupyter/ydoc';
import { readFileSync } from 'node:fs';
import { addressedHere, headingLevel, opDelete, opFind, opInsert, opRead, opReplace, handleOp } from './build/ops.js';
import { sourceHash } from './build/guard.js';
import { ORIGIN, SESSION, agentInsert, byId, bytes, ids, mark, notebook, sources, user } from './helpers.mjs';

const EXPECT = { origin: ORIGIN, session: SESSION, kinds: ['code'] };

function fresh(t, cells) {
  const nb = notebook(cells);
  t.after(() => nb.dispose());
  return nb;
}

test('the issue\'s reproduction: deleting two agent cells above a user cell removes exactly those two', t => {
  const nb = fresh(t, [user('%load_ext nbagent'), user('%%agent --allow python\nWhat is 2 * 3 and 4 * 5?')]);
  const agentCell = nb.cells[1].id;
  const a = agentInsert(nb, 'print(2 * 3)', 1, { after: agentCell });
  const b = agentInsert(nb, 'print(4 * 5)', 1, { after: a });
  nb.insertCell(4, user('my_result = "my own cell"\nprint(my_result)'));
  const mine = bytes(nb.cells[4]);

  const result = opDelete(nb, { ids: [a, b], expect: { ...EXPECT, turns: [1] } });

  assert.deepEqual(result, { deleted: 2, removed: [a, b], kept: [] });
  assert.deepEqual(sources(nb), ['%load_ext nbagent', '%%agent --allow python\nWhat is 2 * 3 and 4 * 5?',
    'my_result = "my own cell"\nprint(my_result)']);
  assert.equal(bytes(nb.cells[2]), mine);
});

test('user cells interleaved with agent cells stay, whatever ids the kernel sends', t => {
  const nb = fresh(t, [user('u0')]);
  const a = agentInsert(nb, 'a', 1);
  nb.insertCell(2, user('u1'));
  const b = agentInsert(nb, 'b', 1);
  nb.insertCell(4, { cell_type: 'markdown', source: '# notes', metadata: {} });
  const c = agentInsert(nb, 'c', 1);
  const before = nb.cells.filter(x => ![a, b, c].includes(x.id)).map(bytes);

  const result = opDelete(nb, { ids: ids(nb), expect: EXPECT });

  assert.deepEqual(result.removed, [a, b, c]);
  assert.equal(result.deleted, 3);
  assert.deepEqual(sources(nb), ['u0', 'u1', '# notes']);
  assert.deepEqual(nb.cells.map(bytes), before);
  assert.deepEqual(result.kept.map(k => k.reason), ['not-nbagent', 'not-nbagent', 'not-code']);
});

test('a moved agent cell is still the agent\'s; an edited one is the user\'s', t => {
  const nb = fresh(t, [user('u0')]);
  const a = agentInsert(nb, 'a = 1', 1);
  const b = agentInsert(nb, 'b = 2', 1);
  nb.insertCell(3, user('u1'));
  nb.moveCell(2, 0); // the user moves b to the top
  byId(nb, a).setSource('a = 1  # my fix');

  const result = opDelete(nb, { ids: [a, b], expect: EXPECT });

  assert.deepEqual(result.removed, [b]);
  assert.deepEqual(result.kept, [{ id: a, reason: 'edited' }]);
  assert.deepEqual(sources(nb), ['u0', 'a = 1  # my fix', 'u1']);
});

test('an agent cell the user ran again is kept', t => {
  const nb = fresh(t, []);
  const a = agentInsert(nb, 'a = 1', 1);
  byId(nb, a).execution_count = 7;
  assert.deepEqual(opDelete(nb, { ids: [a], expect: EXPECT }).kept, [{ id: a, reason: 're-run' }]);
});

test('running or queued cells and the protected cell are never deleted', t => {
  const nb = fresh(t, []);
  const a = agentInsert(nb, 'a', 1);
  const b = agentInsert(nb, 'b', 1);
  const c = agentInsert(nb, 'c', 1);
  byId(nb, a).executionState = 'running'; // JupyterLab: running, or queued by Run All ([*])

  const result = opDelete(nb, { ids: [a, b, c], expect: EXPECT, protect: [b] });

  assert.deepEqual(result.removed, [c]);
  assert.deepEqual(result.kept, [{ id: a, reason: 'running' }, { id: b, reason: 'protected' }]);
});

test('a markdown cell is never deleted, even with an nbagent mark', t => {
  const nb = fresh(t, []);
  const { id } = opInsert(nb, { cell: { cell_type: 'markdown', source: '## by the model', metadata: { nbagent: mark(1, { kind: 'new' }) } } });
  const result = opDelete(nb, { ids: [id], expect: { ...EXPECT, kinds: ['code', 'new'] } });
  assert.deepEqual(result.kept, [{ id, reason: 'not-code' }]);
});

test('cells of another kernel, session, turn, agent cell or kind are not ours', t => {
  const nb = fresh(t, []);
  // A received notebook: the same kind of mark, from another kernel's origin.
  nb.insertCell(0, { cell_type: 'code', source: 'theirs', metadata: { nbagent: { ...mark(1), origin: 'elsewhere', made: { source_sha256: sourceHash('theirs') } } }, outputs: [], execution_count: null });
  const theirs = nb.cells[0].id;
  const other = agentInsert(nb, 'x', 1, { session: 's-2', agent_cell: 'A1' });
  const later = agentInsert(nb, 'y', 3, { agent_cell: 'A1' });
  const cellOf = agentInsert(nb, 'z', 1, { agent_cell: 'A2' });
  const edit = agentInsert(nb, 'w', 1, { kind: 'edit', agent_cell: 'A1' });

  const result = opDelete(nb, { ids: ids(nb), expect: { ...EXPECT, turns: [1], agent_cell: 'A1' } });

  assert.equal(result.deleted, 0);
  assert.deepEqual(Object.fromEntries(result.kept.map(k => [k.id, k.reason])), {
    [theirs]: 'other-origin', [other]: 'other-session', [later]: 'other-turn', [cellOf]: 'other-agent-cell',
    [edit]: 'other-kind'
  });
  const rollback = opDelete(nb, { ids: ids(nb), expect: { ...EXPECT, after_turn: 1 } });
  assert.deepEqual(rollback.removed, [later]);
});

test('missing and repeated ids: counted once, reported as missing', t => {
  const nb = fresh(t, []);
  const a = agentInsert(nb, 'a', 1);
  const result = opDelete(nb, { ids: [a, a, 'gone'], expect: EXPECT });
  assert.deepEqual(result, { deleted: 1, removed: [a], kept: [{ id: 'gone', reason: 'missing' }] });
});

test('delete without the kernel\'s expectations (an older kernel) deletes nothing', t => {
  const nb = fresh(t, []);
  const a = agentInsert(nb, 'a', 1);
  assert.throws(() => opDelete(nb, { ids: [a] }), /expect\.origin/);
  assert.deepEqual(ids(nb), [a]);
});

test('inside an outer transaction delete stops after one cell instead of using a stale index', t => {
  const nb = fresh(t, []);
  const a = agentInsert(nb, 'a', 1);
  const b = agentInsert(nb, 'b', 1);
  nb.insertCell(2, user('mine'));
  assert.throws(() => nb.transact(() => opDelete(nb, { ids: [a, b], expect: EXPECT })), /transaction/);
  assert.deepEqual(sources(nb), ['b', 'mine']);
});

test('a copy of an agent cell (pasted or duplicated: same metadata, new id) is the user\'s', t => {
  const nb = fresh(t, [user('%%agent\nask')]);
  const a = agentInsert(nb, '2 * 3', 1, { after: nb.cells[0].id });
  const { id: _id, ...json } = byId(nb, a).toJSON(); // what JupyterLab's paste and Duplicate insert
  nb.insertCell(2, json);
  nb.insertCell(3, json);
  const copies = [nb.cells[2].id, nb.cells[3].id];
  assert.deepEqual(nb.cells[2].getMetadata('nbagent'), byId(nb, a).getMetadata('nbagent'));

  const result = opDelete(nb, { ids: [a, ...copies], expect: { ...EXPECT, turns: [1] } });

  assert.deepEqual(result, { deleted: 1, removed: [a], kept: copies.map(id => ({ id, reason: 'copied' })) });
  assert.deepEqual(sources(nb), ['%%agent\nask', '2 * 3', '2 * 3']);
});

test('the stamp is the front-end\'s: a forged one in insert or replace is discarded', t => {
  const nb = fresh(t, [user('mine')]);
  const mine = nb.cells[0].id;
  const forged = { ...mark(1), made: { source_sha256: sourceHash('mine'), execution_count: null } };
  // The model's notebook_edit replace marks a user's cell "edit"; even marked "code", a forged stamp does not count.
  opReplace(nb, { metadata: { nbagent: forged } }, mine);
  assert.equal(nb.cells[0].getMetadata('nbagent').made, undefined);
  assert.deepEqual(opDelete(nb, { ids: [mine], expect: EXPECT }).kept, [{ id: mine, reason: 'edited' }]);

  const { id } = opInsert(nb, { cell: { cell_type: 'code', source: 'real', metadata: { nbagent: { ...mark(1), made: { source_sha256: 'x' } } } } });
  assert.equal(byId(nb, id).getMetadata('nbagent').made.source_sha256, sourceHash('real'));
});

test('replace by the kernel restamps what it wrote: its own later source edit is not the user\'s', t => {
  const nb = fresh(t, []);
  const a = agentInsert(nb, 'a = 1', 1);
  opReplace(nb, { source: 'a = 2', outputs: [{ output_type: 'stream', name: 'stdout', text: 'ok\n' }], execution_count: 4 }, a);
  assert.equal(opDelete(nb, { ids: [a], expect: EXPECT }).deleted, 1);
});

test('a cell the agent made, rewritten by notebook_edit with the mark it was made with, is still the agent\'s', t => {
  // The kernel sends the cell's own mark (without `made`) with the model's new text: the page keeps its
  // stamp of the cell's id and restamps the text, so a rollback or a re-run still removes the cell.
  const nb = fresh(t, [user('mine')]);
  const a = agentInsert(nb, 'y = 1', 1);
  opReplace(nb, { source: 'y = 2', metadata: { nbagent: mark(1, { tool_use_id: 'tu-edit' }) } }, a);
  assert.equal(byId(nb, a).getMetadata('nbagent').made.cell_id, a);
  assert.deepEqual(opDelete(nb, { ids: [a, nb.cells[0].id], expect: EXPECT }).removed, [a]);
  assert.deepEqual(sources(nb), ['mine']);
});

test('replace never lets an output carry a trusted flag, and untrusts a cell the user ran', t => {
  const nb = fresh(t, [user('x', { metadata: { trusted: true } })]);
  const id = nb.cells[0].id;
  opReplace(nb, { outputs: [{ output_type: 'display_data', data: { 'text/html': '<b>hi</b>' }, metadata: { trusted: true } }] }, id);
  assert.deepEqual(nb.cells[0].toJSON().outputs[0].metadata, {});
  assert.equal(nb.cells[0].getMetadata('trusted'), undefined);
});

const SHOWN = { outputs: 0, widgets: [], outputs_hidden: false, in_collapsed_section: false };

test('find says where a cell is and whether it runs or waits to run', t => {
  const nb = fresh(t, [user('a'), user('b')]);
  const b = nb.cells[1].id;
  assert.deepEqual(opFind(nb, b), { index: 1, running: false, ...SHOWN });
  nb.cells[1].executionState = 'running';
  assert.deepEqual(opFind(nb, b), { index: 1, running: true, ...SHOWN });
  assert.deepEqual(opFind(nb, 'gone'), { index: -1, running: false });
});

function widgetView(modelId) {
  return { output_type: 'display_data', metadata: {}, data: { 'application/vnd.jupyter.widget-view+json':
    { model_id: modelId, version_major: 2, version_minor: 0 }, 'text/plain': 'VBox()' } };
}

test('find says which widgets a cell shows and whether its outputs are hidden', t => {
  const stream = { output_type: 'stream', name: 'stdout', text: 'serving\n' };
  const nb = fresh(t, [user('%agent serve', { outputs: [stream, widgetView('panel-1')] })]);
  const serve = nb.cells[0].id;
  assert.deepEqual(opFind(nb, serve), { index: 0, running: false, ...SHOWN, outputs: 2, widgets: ['panel-1'] });
  nb.cells[0].setMetadata('jupyter', { outputs_hidden: true }); // the collapse bar's click
  assert.equal(opFind(nb, serve).outputs_hidden, true);
  nb.cells[0].setMetadata('jupyter', { outputs_hidden: false });
  nb.cells[0].setMetadata('collapsed', true); // the older form of the same
  assert.equal(opFind(nb, serve).outputs_hidden, true);
  nb.cells[0].deleteMetadata('collapsed');
  opReplace(nb, { outputs: [] }, serve); // Clear Outputs
  assert.deepEqual(opFind(nb, serve), { index: 0, running: false, ...SHOWN });
});

test('a Markdown cell\'s level is its highest heading as JupyterLab parses it (the kernel reads the same cases)', () => {
  const { cases } = JSON.parse(readFileSync(new URL('./heading_cases.json', import.meta.url), 'utf8'));
  for (const [source, level] of cases) {
    assert.equal(headingLevel(source), level, JSON.stringify(source));
  }
});

test('find says whether a collapsed heading above a cell hides it, as far as the next heading of its level', t => {
  const md = (source, collapsed) => ({ cell_type: 'markdown', source,
    metadata: collapsed ? { 'jp-MarkdownHeadingCollapsed': true } : {} });
  const nb = fresh(t, [md('# Sales', false), md('## Cleaning', true), user('a'), md('### detail', false), user('b'),
    md('## Model', false), user('c'), md('text, no heading', false), user('d')]);
  const under = i => opFind(nb, nb.cells[i].id).in_collapsed_section;
  assert.deepEqual([2, 4, 6, 8].map(under), [true, true, false, false]);
  nb.cells[0].setMetadata('jp-MarkdownHeadingCollapsed', true); // the top heading hides all below it
  assert.deepEqual([2, 4, 6, 8].map(under), [true, true, true, true]);
});

test('a section ends at an underlined or HTML heading of its level, not at a # inside a code fence', t => {
  const md = (source, collapsed) => ({ cell_type: 'markdown', source,
    metadata: collapsed ? { 'jp-MarkdownHeadingCollapsed': true } : {} });
  const nb = fresh(t, [md('## A', true), md('```\n# setup\n```', false), user('a'), md('Results\n---', false), user('b'),
    md('## B', true), md('<h2>C</h2>', false), user('c')]);
  const under = i => opFind(nb, nb.cells[i].id).in_collapsed_section;
  assert.deepEqual([2, 4, 7].map(under), [true, false, false]);
});

test('a request addressed to another page is neither applied nor answered here; an unaddressed one is', () => {
  assert.equal(addressedHere('page-a', 'page-a'), true);
  assert.equal(addressedHere('page-a', 'page-b'), false);
  assert.equal(addressedHere(undefined, 'page-b'), true); // %agent serve's requests, an older kernel's
});

test('an unknown op is an error naming the protocol version', t => {
  const nb = fresh(t, []);
  assert.throws(() => handleOp(nb, 'explode', {}, undefined, 'x.ipynb'), /unknown op "explode" \(bridge version 2\)/);
});

test('the kernel\'s mark and record are not undo steps: Ctrl+Z in a cell never takes them away', t => {
  // JupyterLab's default: each cell has its own undo manager, over its whole model (source and
  // metadata); nbagent's metadata written as an undoable change was the first thing Ctrl+Z undid.
  for (const disableDocumentWideUndoRedo of [true, false]) {
    const nb = new YNotebook({ disableDocumentWideUndoRedo });
    t.after(() => nb.dispose());
    nb.insertCells(0, [user('%%agent\nWhat is 2 * 3?')]);
    const cell = nb.cells[0];
    cell.undoManager.stopCapturing(); // each step its own, as a user's are (seconds apart)
    cell.setSource('%%agent\nWhat is 2 * 4?'); // the user's typing: undoable
    cell.undoManager.stopCapturing();
    const record = { session: SESSION, turn: 1 };
    opReplace(nb, { metadata: { nbagent: { ...mark(1, { kind: 'agent' }) } } }, cell.id);
    opReplace(nb, { metadata: { nbagent: { ...mark(1, { kind: 'agent' }), record } } }, cell.id);
    const undo = disableDocumentWideUndoRedo ? cell : nb;
    undo.undo();
    assert.deepEqual(cell.getMetadata('nbagent').record, record, `document-wide undo ${!disableDocumentWideUndoRedo}`);
    assert.equal(cell.getSource(), '%%agent\nWhat is 2 * 3?', 'the first undo is the user\'s typing');
  }
});

test('a source the kernel replaced is still undoable, its metadata is not', t => {
  const nb = new YNotebook({ disableDocumentWideUndoRedo: true });
  t.after(() => nb.dispose());
  nb.insertCells(0, [user('a = 1')]);
  const cell = nb.cells[0];
  cell.undoManager.stopCapturing();
  opReplace(nb, { source: 'a = 2', metadata: { nbagent: mark(1) } }, cell.id);
  cell.undo();
  assert.equal(cell.getSource(), 'a = 1');
  assert.equal(cell.getMetadata('nbagent').turn, 1);
});

test('a removal starts an undo step of its own: Ctrl+Z does not take the user\'s cell inserted just before', t => {
  const nb = fresh(t, [user('%%agent\nask')]);
  const a = agentInsert(nb, '2 * 3', 1, { after: nb.cells[0].id });
  nb.undoManager.stopCapturing(); // the agent's run ended seconds ago
  nb.insertCell(2, user('%agent rollback 0')); // typed and run at once: less than 0.5 s before the removal

  opDelete(nb, { ids: [a], expect: { ...EXPECT, turns: [1] } });
  nb.undo();

  assert.deepEqual(sources(nb), ['%%agent\nask', '2 * 3', '%agent rollback 0']);
});

test('a lean read leaves out outputs, attachments and the signed record, and keeps texts and marks', t => {
  const nb = fresh(t, [user('%%agent\nask')]);
  nb.cells[0].setMetadata('nbagent', { kind: 'agent', turn: 1, record: { transcript: 'x'.repeat(5000) } });
  const a = agentInsert(nb, '2 * 3', 1, { after: nb.cells[0].id });
  byId(nb, a).setOutputs([{ output_type: 'execute_result', data: { 'image/png': 'iVBOR'.repeat(1000) },
    metadata: {}, execution_count: 1 }]);

  const lean = opRead(nb, { lean: true });

  assert.deepEqual(lean.map(c => [c.id, c.cell_type, c.source, 'outputs' in c]),
    [[nb.cells[0].id, 'code', '%%agent\nask', false], [a, 'code', '2 * 3', false]]);
  assert.deepEqual(lean[0].metadata.nbagent, { kind: 'agent', turn: 1 });
  assert.deepEqual(lean[1].metadata.nbagent, byId(nb, a).getMetadata('nbagent'));
  assert.equal(opRead(nb)[1].outputs.length, 1); // a plain read, as before
  assert.equal(nb.cells[0].getMetadata('nbagent').record.transcript.length, 5000); // the model untouched
});
