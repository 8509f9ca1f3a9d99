// Shared by the bridge's tests: a real @jupyter/ydoc YNotebook and the kernel's side of a request.
import { YNotebook } from '@jupyter/ydoc';
import { opInsert } from './build/ops.js';

// Yjs warns when @jupyter/ydoc builds a cell before it joins the document (JupyterLab does the same):
// noise here, dropped so that a failure's output is readable.
const PREMATURE = 'Invalid access: Add Yjs type to a document before reading data.';
const warn = console.warn;
console.warn = (...args) => {
  if (!args.some(a => typeof a === 'string' && a.includes(PREMATURE))) {
    warn(...args);
  }
};

export const ORIGIN = 'k-origin-1';
export const SESSION = 's-1';

/** A notebook holding `cells` (nbformat JSON); disposed by the caller (`t.after`). */
export function notebook(cells = []) {
  const nb = new YNotebook();
  if (cells.length) {
    nb.insertCells(0, cells.map(c => ({ metadata: {}, ...c })));
  }
  return nb;
}

/** A user's code cell (no nbagent mark). */
export function user(source, extra = {}) {
  return { cell_type: 'code', source, metadata: { tags: ['mine'] }, outputs: [], execution_count: null, ...extra };
}

/** What nbagent's kernel puts in a cell's metadata. */
export function mark(turn, extra = {}) {
  return { origin: ORIGIN, session: SESSION, turn, kind: 'code', tool_use_id: `tu-${turn}`, ...extra };
}

/** Insert an agent-made code cell the way the kernel does (through the bridge's insert). */
export function agentInsert(nb, source, turn, { after, index, ...extra } = {}) {
  const cell = { cell_type: 'code', source, outputs: [], execution_count: null, metadata: { nbagent: mark(turn, extra) } };
  const args = after !== undefined ? { cell, after_id: after } : { cell, index: index ?? nb.cells.length };
  return opInsert(nb, args).id;
}

export function ids(nb) {
  return nb.cells.map(c => c.id);
}

export function sources(nb) {
  return nb.cells.map(c => c.getSource());
}

/** A cell's full JSON (source, metadata, outputs, count), as a string: "byte-identical" means equal. */
export function bytes(cell) {
  return JSON.stringify(cell.toJSON());
}

export function byId(nb, id) {
  return nb.cells.find(c => c.id === id);
}
