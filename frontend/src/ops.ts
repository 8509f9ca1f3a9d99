/**
 * The bridge's operations on a notebook's shared model (docs/bridge-protocol.md), kept apart from
 * the plugin's wiring so they run, and are tested, against a real `@jupyter/ydoc` YNotebook
 * without JupyterLab (frontend/test/).
 *
 * The rule they enforce: a cell nbagent did not make in this kernel is never deleted. `delete`
 * resolves each id when it removes it and checks, at that moment, what the cell's own metadata
 * and state say (see guard.ts); the kernel's list of ids is a wish, never an authority.
 */
import type { ISharedCell, ISharedCodeCell, ISharedNotebook } from '@jupyter/ydoc';
import { UUID } from '@lumino/coreutils';
import { BridgeError, MARK, madeOf, parseExpect, restamp, stampNew, whyKept, type Kept } from './guard.js';

export { BridgeError } from './guard.js';

/** The protocol version this front-end speaks (sent in the hello). */
export const VERSION = 2;
const CELL_TYPES = ['code', 'markdown', 'raw'];

/** A request's arguments (beside type/id/op, or nested under "args"). */
export type Args = { [key: string]: any };
type CellJSON = { [key: string]: any };

function indexOf(nb: ISharedNotebook, id: unknown): number {
  if (typeof id !== 'string') {
    throw new BridgeError('cell_id (the target cell\'s id, a string) is required; "id" is the request\'s own number');
  }
  return nb.cells.findIndex(cell => cell.id === id);
}

function requireIndex(nb: ISharedNotebook, id: unknown): number {
  const index = indexOf(nb, id);
  if (index < 0) {
    throw new BridgeError(`no cell with id ${JSON.stringify(id)}: read the notebook again`);
  }
  return index;
}

/** The cell as JupyterLab's insertCell wants it; a kernel-chosen id is dropped so ids stay unique. */
function toNewCell(cell: CellJSON, id?: string): CellJSON {
  if (!cell || typeof cell !== 'object' || !CELL_TYPES.includes(cell.cell_type)) {
    throw new BridgeError(`cell_type must be one of ${CELL_TYPES.join(', ')}`);
  }
  const source = Array.isArray(cell.source) ? cell.source.join('') : String(cell.source ?? '');
  // "trusted" would let JupyterLab run the cell's HTML/JS outputs unsanitised: never from a request.
  const { trusted: _ignored, ...metadata } = cell.metadata ?? {};
  const out: CellJSON = { cell_type: cell.cell_type, source, metadata };
  if (id) {
    out.id = id;
  }
  if (cell.cell_type === 'code') {
    out.outputs = cell.outputs ?? [];
    out.execution_count = cell.execution_count ?? null;
  }
  return out;
}

/** A cell as nbformat JSON, without JupyterLab's in-memory "trusted" flag (it flips when the user
 * runs a cell, which would look like an edit to the kernel's read-before-edit check). */
export function readCell(cell: ISharedCell): CellJSON {
  const json = cell.toJSON() as CellJSON;
  const { trusted: _ignored, ...metadata } = json.metadata ?? {};
  return { ...json, metadata };
}

export function opRead(nb: ISharedNotebook, req: Args = {}): CellJSON[] {
  return req.lean === true ? nb.cells.map(leanCell) : nb.cells.map(readCell);
}

/** A cell's id, type, text and metadata without its outputs, attachments and nbagent's signed record:
 * what a replay compares (texts and marks), for a small read per agent cell (a notebook's images and
 * records are most of its bytes). Built without `toJSON()`, which would copy the outputs first. */
function leanCell(cell: ISharedCell): CellJSON {
  const { trusted: _ignored, ...metadata } = (cell.getMetadata() ?? {}) as { [key: string]: any };
  const mark = metadata[MARK];
  if (mark && typeof mark === 'object' && !Array.isArray(mark) && 'record' in mark) {
    const { record: _record, ...rest } = mark;
    metadata[MARK] = rest;
  }
  return { id: cell.id, cell_type: cell.cell_type, source: cell.getSource(), metadata };
}

export function opInsert(nb: ISharedNotebook, req: Args): CellJSON {
  let index = nb.cells.length;
  if (req.after_id !== undefined && req.after_id !== null) {
    index = requireIndex(nb, req.after_id) + 1;
  } else if (typeof req.index === 'number') {
    index = Math.max(0, Math.min(req.index, nb.cells.length));
  }
  // A fresh id chosen here (the kernel's is dropped, so ids stay unique) and stamped with the rest:
  // a copy the user pastes gets another id, so removal can tell it from the cell nbagent made.
  const cell = toNewCell(req.cell as CellJSON, UUID.uuid4());
  stampNew(cell); // what removal later compares: the id, source and count as nbagent made them
  const made = nb.insertCell(index, cell as any);
  return { id: made.id, index };
}

export function opReplace(nb: ISharedNotebook, req: Args, cellId: unknown): CellJSON {
  const index = requireIndex(nb, cellId);
  let cell: ISharedCell = nb.cells[index];
  if (typeof req.cell_type === 'string' && req.cell_type !== cell.cell_type) {
    // A Y cell cannot change type in place: rebuild it at the same place, keeping its id.
    const old = readCell(cell);
    const rebuilt = toNewCell({ ...old, cell_type: req.cell_type, outputs: [], execution_count: null }, cell.id);
    nb.transact(() => {
      nb.deleteCell(index);
      cell = nb.insertCell(index, rebuilt as any);
    });
  }
  if ((req.outputs !== undefined || req.execution_count !== undefined) && cell.cell_type !== 'code') {
    throw new BridgeError(`cell ${cell.id} is a ${cell.cell_type} cell: only code cells have outputs`);
  }
  const before = madeOf(cell);
  if (typeof req.source === 'string') {
    // The model's edit of a cell's text: an undo step, as the user's own typing is.
    const source = req.source;
    cell.transact(() => cell.setSource(source));
  }
  // Outputs and counts are not undo steps in JupyterLab; nbagent's mark and record must not be
  // either: a cell's undo manager covers its metadata, so Ctrl+Z in an agent cell that just ran
  // silently took its signed record away, then its mark, before any of the user's typing.
  cell.transact(() => {
    if (Array.isArray(req.outputs)) {
      // Outputs as nbformat JSON only: a "trusted" key in an output's metadata is not ours to set, and
      // a cell the user ran (JupyterLab then marks it trusted) is untrusted again by outputs nbagent wrote.
      cell.deleteMetadata('trusted');
      (cell as ISharedCodeCell).setOutputs(req.outputs.map(untrustedOutput) as any);
    }
    if (req.execution_count !== undefined) {
      (cell as ISharedCodeCell).execution_count = req.execution_count as number | null;
    }
    if (req.metadata && typeof req.metadata === 'object') {
      // Only nbagent's own key: tags, collapsed state and other extensions' keys are the user's.
      const value = req.metadata[MARK];
      if (value === undefined || value === null) {
        cell.deleteMetadata(MARK);
      } else {
        cell.setMetadata(MARK, value);
      }
    }
    restamp(cell, before, {
      source: typeof req.source === 'string',
      count: req.execution_count !== undefined
    });
  }, false);
  return { id: cell.id };
}

function untrustedOutput(output: any): any {
  if (!output || typeof output !== 'object' || !output.metadata || typeof output.metadata !== 'object') {
    return output;
  }
  const { trusted: _ignored, ...metadata } = output.metadata;
  return { ...output, metadata };
}

/** Remove the listed cells that are nbagent's to remove (guard.ts), one at a time, each looked up
 * when it goes. Replies with what really went and what stayed, and why. */
export function opDelete(nb: ISharedNotebook, req: Args): CellJSON {
  if (!Array.isArray(req.ids) || !req.ids.every((id: unknown) => typeof id === 'string')) {
    throw new BridgeError('ids must be a list of cell ids');
  }
  const expect = parseExpect(req.expect);
  const protect = new Set<string>(Array.isArray(req.protect) ? req.protect.filter((p: unknown) => typeof p === 'string') : []);
  const removed: string[] = [];
  const kept: Kept[] = [];
  // The removal starts an undo step of its own: Yjs merges changes less than 0.5 s apart, so a cell the
  // user inserted just before (Shift+Enter on the last cell) went with one Ctrl+Z of the rollback. What
  // follows at once may join it: a re-run's new cells, which one Ctrl+Z then swaps back for the old ones.
  stopCapturing(nb);
  removeEach(nb, new Set<string>(req.ids), expect, protect, removed, kept);
  return { deleted: removed.length, removed, kept };
}

function stopCapturing(nb: ISharedNotebook): void {
  // The YNotebook's document-wide undo manager (ISharedNotebook does not declare it).
  (nb as unknown as { undoManager?: { stopCapturing(): void } | null }).undoManager?.stopCapturing();
}

function removeEach(nb: ISharedNotebook, ids: Set<string>, expect: ReturnType<typeof parseExpect>,
                    protect: Set<string>, removed: string[], kept: Kept[]): void {
  for (const id of ids) {
    // Resolved now, from the model as it is after the previous removal (never a stale index).
    const index = nb.cells.findIndex(cell => cell.id === id);
    if (index < 0) {
      kept.push({ id, reason: 'missing' });
      continue;
    }
    const reason = whyKept(nb.cells[index], expect, protect);
    if (reason !== null) {
      kept.push({ id, reason });
      continue;
    }
    const before = nb.cells.length;
    nb.deleteCell(index);
    removed.push(id);
    if (nb.cells.length !== before - 1) {
      // Inside someone's transaction the cell list is only updated at its end, so the next index
      // would be stale: stop rather than risk the wrong cell.
      throw new BridgeError('delete cannot run inside a transaction of the notebook model');
    }
  }
}

export function opMove(nb: ISharedNotebook, req: Args, cellId: unknown): CellJSON {
  const from = requireIndex(nb, cellId);
  if (typeof req.index !== 'number') {
    throw new BridgeError('index (a number) is required');
  }
  const to = Math.max(0, Math.min(req.index, nb.cells.length - 1));
  if (to !== from) {
    nb.moveCell(from, to);
  }
  return { index: to };
}

/** Where a cell is and whether it runs: what the kernel asks before it waits on a prompt shown
 * in that cell (a cell deleted while queued still runs in the kernel, and nobody sees its output);
 * and what of it the page shows (see shownOf), so the kernel need not read the whole notebook. */
export function opFind(nb: ISharedNotebook, cellId: unknown): CellJSON {
  const index = indexOf(nb, cellId);
  const cell = index >= 0 ? nb.cells[index] : null;
  const running = cell !== null && cell.cell_type === 'code' && (cell as ISharedCodeCell).executionState === 'running';
  return cell === null ? { index, running } : { index, running, ...shownOf(nb, index) };
}

const WIDGET_VIEW = 'application/vnd.jupyter.widget-view+json';
/** At most this many widget ids are listed: a panel is one, a cell of hundreds is no panel. */
const MAX_WIDGETS = 20;

/** What the page shows of the cell at `index`, read off the model (not the DOM, which a long
 * notebook virtualises): how many outputs it has and the widgets they view, whether its outputs
 * are hidden (collapsed), and whether a collapsed Markdown heading above it hides the cell. */
function shownOf(nb: ISharedNotebook, index: number): CellJSON {
  const cell = nb.cells[index];
  const outputs = cell.cell_type === 'code' ? (cell as ISharedCodeCell).outputs : [];
  const widgets: string[] = [];
  for (const output of outputs) {
    const view = (output as CellJSON).data?.[WIDGET_VIEW];
    if (view && typeof view.model_id === 'string' && widgets.length < MAX_WIDGETS) {
      widgets.push(view.model_id);
    }
  }
  const meta = (cell.getMetadata() ?? {}) as CellJSON;
  const jupyter = meta.jupyter;
  const hidden = meta.collapsed === true || (!!jupyter && typeof jupyter === 'object' && jupyter.outputs_hidden === true);
  return { outputs: outputs.length, widgets, outputs_hidden: hidden, in_collapsed_section: underCollapsedHeading(nb, index) };
}

/** Whether a collapsed Markdown heading above `index` hides that cell: JupyterLab keeps
 * `jp-MarkdownHeadingCollapsed` on the heading's cell, and hides every cell up to the next cell
 * whose level is the same or higher (a Markdown cell's level is its highest heading's). */
function underCollapsedHeading(nb: ISharedNotebook, index: number): boolean {
  let open: Array<[number, boolean]> = []; // the enclosing headings: (level, collapsed)
  for (let i = 0; i < index; i++) {
    const cell = nb.cells[i];
    const level = cell.cell_type === 'markdown' ? headingLevel(cell.getSource()) : null;
    if (level === null) {
      continue;
    }
    open = open.filter(([above]) => above < level);
    open.push([level, cell.getMetadata('jp-MarkdownHeadingCollapsed') === true]);
  }
  return open.some(([, collapsed]) => collapsed);
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]|$)/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const HTML_HEADING = /<h([1-6])[\s>/]/i;

/** The level of a Markdown cell's highest heading (1 is highest), as JupyterLab's Markdown parser
 * finds them: `#` headings indented up to 3 spaces, underlined ones (`===` for 1, `---` for 2,
 * under a line of text), HTML `<h1>`–`<h6>`; none inside a fenced code block. null: no heading
 * (the cell neither starts nor ends a section). The kernel's twin: nbagent/notebook/document/cell_view.py. */
export function headingLevel(markdown: string): number | null {
  const levels: number[] = [];
  let fence: string | null = null; // the open code fence's marker
  let textAbove = false; // the line above is a paragraph's: a `---` under it underlines a heading
  for (const line of markdown.split(/\r\n|\r|\n/)) {
    let opening = FENCE.exec(line);
    if (opening && opening[1][0] === '`' && line.slice(opening[0].length).includes('`')) {
      opening = null; // a backtick fence's info string holds no backtick: this line is text
    }
    if (fence !== null) {
      if (opening && opening[1][0] === fence[0] && opening[1].length >= fence.length &&
          line.slice(opening[0].length).trim() === '') {
        fence = null;
      }
      continue;
    }
    if (opening) {
      fence = opening[1];
      textAbove = false;
      continue;
    }
    const level = lineLevel(line, textAbove);
    if (level !== null) {
      levels.push(level);
    }
    textAbove = level === null && line.trim() !== '';
  }
  return levels.length ? Math.min(...levels) : null;
}

/** The level of the heading `line` makes (outside a code fence), if it makes one. */
function lineLevel(line: string, textAbove: boolean): number | null {
  const atx = ATX.exec(line);
  if (atx) {
    return atx[1].length;
  }
  const underline = textAbove ? SETEXT.exec(line) : null;
  if (underline) {
    return underline[1][0] === '=' ? 1 : 2;
  }
  const html = HTML_HEADING.exec(line);
  return html ? parseInt(html[1], 10) : null;
}

/** Whether a request is this page's to apply and answer: the kernel addresses what a running cell
 * asks to the page that runs it (`client`: that page's kernel session), so another window on the
 * same notebook, or a second view of a shared document, neither applies it twice nor answers for it. */
export function addressedHere(client: unknown, clientId: string): boolean {
  return typeof client !== 'string' || client === clientId;
}

/** One request against the notebook: what index.ts calls with a comm message's data. */
export function handleOp(nb: ISharedNotebook, op: string, args: Args, cellId: unknown, path: string): CellJSON {
  switch (op) {
    case 'read':
      return { path, cells: opRead(nb, args) };
    case 'insert':
      return opInsert(nb, args);
    case 'replace':
      return opReplace(nb, args, cellId);
    case 'delete':
      return opDelete(nb, args);
    case 'move':
      return opMove(nb, args, cellId);
    case 'find':
      return opFind(nb, cellId);
    default:
      throw new BridgeError(`unknown op ${JSON.stringify(op)} (bridge version ${VERSION})`);
  }
}
