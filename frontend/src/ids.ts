/**
 * One id per cell. JupyterLab and Notebook 7 keep a code cell's id when it is cut and pasted (a
 * move), so Cut, Undo, Paste, or a cut cell pasted twice, leaves two cells sharing one id. The
 * kernel knows a running cell only by that id: the bridge would write the pasted cell's record and
 * live output into the first cell of that id, and a replay could not tell the two apart. So a cell
 * this page inserts under an id another cell already has gets a fresh id; the cell that had it first
 * keeps it (and with it its record and nbagent's stamps, which now read the newcomer as a copy).
 *
 * Only this page's own changes are repaired: in a shared (collaborative) document every page sees
 * the insert, and each choosing its own fresh id would race.
 */
import type { ISharedNotebook } from '@jupyter/ydoc';
import { UUID } from '@lumino/coreutils';

// The few Yjs members used here, typed structurally: a runtime import of yjs would bundle a second
// copy beside JupyterLab's (Yjs refuses to mix types from two copies).
type YCellMap = { get(key: string): unknown; set(key: string, value: unknown): void };
type YDelta = { insert?: YCellMap[] | string; retain?: number; delete?: number };
type YCellsEvent = { changes: { delta: YDelta[] } };
type YTransaction = { local: boolean; origin: unknown };
type Observer = (event: YCellsEvent, transaction: YTransaction) => void;
type YCells = { toArray(): YCellMap[]; observe(f: Observer): void; unobserve(f: Observer): void };
type YDoc = { getArray(name: string): YCells; transact(f: () => void, origin?: unknown): void };

/** The origin of this module's own transactions: not the notebook's, so the document-wide undo
 * manager does not track them (Ctrl+Z must never give a cell back an id another cell holds). */
const REPAIR = Symbol('nbagent: a pasted cell gets an id of its own');

/** Watch `nb` and give every cell this page inserts under a taken id a fresh one. Returns the
 * function that stops watching. */
export function keepIdsUnique(nb: ISharedNotebook): () => void {
  const ydoc = (nb as unknown as { ydoc: YDoc }).ydoc;
  const ycells = ydoc.getArray('cells');
  const observer: Observer = (event, transaction) => {
    if (!transaction.local || transaction.origin === REPAIR) {
      return;
    }
    const inserted = event.changes.delta.flatMap(d => (Array.isArray(d.insert) ? d.insert : []));
    const taken = duplicates(ycells, inserted);
    if (taken.length) {
      ydoc.transact(() => taken.forEach(cell => cell.set('id', UUID.uuid4())), REPAIR);
    }
  };
  ycells.observe(observer);
  return () => ycells.unobserve(observer);
}

/** The inserted cells whose id another cell of the notebook also has. Where two inserted cells
 * share an id no older cell has, the first in the notebook keeps it. */
function duplicates(ycells: YCells, inserted: YCellMap[]): YCellMap[] {
  if (!inserted.length) {
    return [];
  }
  const fresh = new Set(inserted);
  const holders = new Map<unknown, YCellMap[]>();
  for (const cell of ycells.toArray()) {
    const id = cell.get('id');
    const same = holders.get(id);
    if (same) {
      same.push(cell);
    } else {
      holders.set(id, [cell]);
    }
  }
  const taken: YCellMap[] = [];
  for (const same of holders.values()) {
    if (same.length < 2) {
      continue;
    }
    // Who keeps the id: the first cell that was there before this change, else the first of all.
    const keeper = same.find(cell => !fresh.has(cell)) ?? same[0];
    taken.push(...same.filter(cell => cell !== keeper && fresh.has(cell)));
  }
  return taken;
}
