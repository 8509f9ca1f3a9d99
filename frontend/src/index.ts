/**
 * nbagent bridge: lets the nbagent kernel change the live notebook it is running in.
 *
 * The kernel opens a comm on target "nbagent.bridge"; this plugin answers with a hello and then
 * applies read/insert/replace/delete/move requests to the notebook's shared model. The protocol is
 * docs/bridge-protocol.md. Edits go through the shared model (not the .ipynb on disk) so they are
 * undoable, rendered by JupyterLab's own output renderers, and saved with the notebook.
 */
import type { ISharedCell, ISharedCodeCell, ISharedNotebook } from '@jupyter/ydoc';
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IConsoleTracker } from '@jupyterlab/console';
import { INotebookTracker, type NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import type { JSONObject, JSONValue, PartialJSONObject } from '@lumino/coreutils';

const TARGET = 'nbagent.bridge';
const VERSION = 1;
const CELL_TYPES = ['code', 'markdown', 'raw'];

/** An error whose message is sent back to the kernel as the reply's `error`. */
class BridgeError extends Error {}

type Request = { id: number; op: string; [key: string]: JSONValue };
/** A request's arguments: beside type/id/op, or nested under "args" (both are accepted). */
type Args = { [key: string]: JSONValue };
type CellJSON = { [key: string]: any };

function notebookOf(panel: NotebookPanel): ISharedNotebook {
  const model = panel.content.model;
  if (!model) {
    throw new BridgeError('the notebook is not loaded yet; try again once it is open');
  }
  return model.sharedModel;
}

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
function readCell(cell: ISharedCell): JSONObject {
  const json = cell.toJSON() as CellJSON;
  const { trusted: _ignored, ...metadata } = json.metadata ?? {};
  return { ...json, metadata };
}

function opInsert(nb: ISharedNotebook, req: Args): JSONObject {
  let index = nb.cells.length;
  if (req.after_id !== undefined && req.after_id !== null) {
    index = requireIndex(nb, req.after_id) + 1;
  } else if (typeof req.index === 'number') {
    index = Math.max(0, Math.min(req.index, nb.cells.length));
  }
  const cell = nb.insertCell(index, toNewCell(req.cell as CellJSON) as any);
  return { id: cell.id, index };
}

function opReplace(nb: ISharedNotebook, req: Args, cellId: JSONValue | undefined): JSONObject {
  const index = requireIndex(nb, cellId);
  let cell: ISharedCell = nb.cells[index];
  if (typeof req.cell_type === 'string' && req.cell_type !== cell.cell_type) {
    // A Y cell cannot change type in place: rebuild it at the same place, keeping its id.
    const old = cell.toJSON() as CellJSON;
    const rebuilt = toNewCell({ ...old, cell_type: req.cell_type, outputs: [], execution_count: null }, cell.id);
    nb.transact(() => {
      nb.deleteCell(index);
      cell = nb.insertCell(index, rebuilt as any);
    });
  }
  if (req.outputs !== undefined || req.execution_count !== undefined) {
    if (cell.cell_type !== 'code') {
      throw new BridgeError(`cell ${cell.id} is a ${cell.cell_type} cell: only code cells have outputs`);
    }
  }
  cell.transact(() => {
    if (typeof req.source === 'string') {
      cell.setSource(req.source);
    }
    if (Array.isArray(req.outputs)) {
      (cell as ISharedCodeCell).setOutputs(req.outputs as any);
    }
    if (req.execution_count !== undefined) {
      (cell as ISharedCodeCell).execution_count = req.execution_count as number | null;
    }
    if (req.metadata && typeof req.metadata === 'object') {
      // Only nbagent's own key: tags, collapsed state and other extensions' keys are the user's.
      const value = (req.metadata as PartialJSONObject).nbagent;
      if (value === undefined || value === null) {
        cell.deleteMetadata('nbagent');
      } else {
        cell.setMetadata('nbagent', value);
      }
    }
  });
  return { id: cell.id };
}

function opDelete(nb: ISharedNotebook, req: Args): JSONObject {
  if (!Array.isArray(req.ids)) {
    throw new BridgeError('ids must be a list of cell ids');
  }
  let deleted = 0;
  nb.transact(() => {
    for (const id of req.ids as JSONValue[]) {
      const index = indexOf(nb, id);
      if (index >= 0) {
        nb.deleteCell(index);
        deleted += 1;
      }
    }
  });
  return { deleted };
}

function opMove(nb: ISharedNotebook, req: Args, cellId: JSONValue | undefined): JSONObject {
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

function handle(panel: NotebookPanel, req: Request): JSONObject {
  const nb = notebookOf(panel);
  const nested = req.args !== null && typeof req.args === 'object' && !Array.isArray(req.args);
  const args = nested ? (req.args as Args) : (req as Args);
  // Beside the request's own "id", the target cell is "cell_id"; nested args may call it "id".
  const cellId = args.cell_id ?? (nested ? args.id : undefined);
  switch (req.op) {
    case 'read':
      return { path: panel.context.localPath, cells: nb.cells.map(readCell) };
    case 'insert':
      return opInsert(nb, args);
    case 'replace':
      return opReplace(nb, args, cellId);
    case 'delete':
      return opDelete(nb, args);
    case 'move':
      return opMove(nb, args, cellId);
    default:
      throw new BridgeError(`unknown op ${JSON.stringify(req.op)} (bridge version ${VERSION})`);
  }
}

function onRequest(panel: NotebookPanel, comm: Kernel.IComm, msg: KernelMessage.ICommMsgMsg): void {
  const req = msg.content.data as Request;
  if (!req || req.type !== 'request') {
    return; // not ours to answer: only requests get replies
  }
  let reply: JSONObject;
  try {
    reply = { type: 'reply', id: req.id, ok: true, result: handle(panel, req) };
  } catch (err) {
    // Every request gets exactly one reply, so the kernel never waits on a failed op.
    const error = err instanceof BridgeError ? err.message : `the front-end failed: ${String(err)}`;
    reply = { type: 'reply', id: req.id, ok: false, error };
  }
  comm.send(reply);
}

function watchNotebook(app: JupyterFrontEnd, panel: NotebookPanel): void {
  const frontend = app.name === 'Jupyter Notebook' ? 'notebook' : 'jupyterlab';
  const register = (kernel: Kernel.IKernelConnection | null | undefined) => {
    // The registry lives on the kernel connection and survives restarts; a new connection
    // (kernel switched) needs its own registration, which kernelChanged gives us.
    kernel?.registerCommTarget(TARGET, comm => {
      comm.onMsg = msg => onRequest(panel, comm, msg);
      comm.send({ type: 'hello', version: VERSION, frontend, path: panel.context.localPath });
    });
  };
  register(panel.sessionContext.session?.kernel);
  panel.sessionContext.kernelChanged.connect((_, change) => register(change.newValue));
}

function watchConsole(kernel: Kernel.IKernelConnection | null | undefined): void {
  // A console on the notebook's kernel in another window handles comms and sees the kernel's
  // comm_open; without a target it would send comm_close and shut the notebook's bridge. (In the
  // notebook's own window a second connection leaves comms to the first.) So: a silent target.
  kernel?.registerCommTarget(TARGET, () => undefined);
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'nbagent-bridge:plugin',
  description: 'Lets the nbagent kernel edit the live notebook it runs in.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [IConsoleTracker],
  activate: (app: JupyterFrontEnd, notebooks: INotebookTracker, consoles: IConsoleTracker | null) => {
    notebooks.forEach(panel => watchNotebook(app, panel));
    notebooks.widgetAdded.connect((_, panel) => watchNotebook(app, panel));
    consoles?.widgetAdded.connect((_, panel) => {
      watchConsole(panel.sessionContext.session?.kernel);
      panel.sessionContext.kernelChanged.connect((__, change) => watchConsole(change.newValue));
    });
  }
};

export default plugin;
