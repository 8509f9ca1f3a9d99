/**
 * nbagent bridge: lets the nbagent kernel change the live notebook it is running in.
 *
 * The kernel opens a comm on target "nbagent.bridge"; this plugin answers with a hello and then
 * applies read/insert/replace/delete/move requests to the notebook's shared model. The protocol is
 * docs/bridge-protocol.md. Edits go through the shared model (not the .ipynb on disk) so they are
 * undoable, rendered by JupyterLab's own output renderers, and saved with the notebook.
 */
import type { ISharedNotebook } from '@jupyter/ydoc';
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IConsoleTracker } from '@jupyterlab/console';
import { INotebookTracker, type NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import type { JSONObject, JSONValue } from '@lumino/coreutils';
import { guardAllowButtons } from './arming.js';
import { sayHello } from './hello.js';
import { keepIdsUnique } from './ids.js';
import { BridgeError, VERSION, addressedHere, handleOp, type Args } from './ops.js';
import { kernelGone, retireAll } from './prompts.js';

const TARGET = 'nbagent.bridge';

type Request = { id: number; op: string; [key: string]: JSONValue };

/** The notebook's document model, through the panel's context rather than its view: JupyterLab's
 * "New View for Notebook" shares one context (and one kernel connection, whose comm target the view
 * opened last holds) among views, so the bridge may be bound to a view the user has since closed,
 * whose own model is gone while the document is still open in another. */
function notebookOf(panel: NotebookPanel): ISharedNotebook {
  const model = panel.context.isDisposed ? null : panel.context.model;
  if (!model) {
    throw new BridgeError('the notebook is not loaded yet; try again once it is open');
  }
  return model.sharedModel;
}

/** Outputs written by the bridge never render trusted: a cell the user ran is trusted by JupyterLab
 * (its HTML unsanitised, its scripts run), so it is untrusted before the new outputs arrive. */
function untrust(panel: NotebookPanel, cellId: unknown): void {
  const cells = panel.context.isDisposed ? undefined : panel.context.model.cells;
  for (let i = 0; cells && i < cells.length; i++) {
    const model = cells.get(i);
    if (model.id === cellId) {
      model.trusted = false;
    }
  }
}

function handle(panel: NotebookPanel, req: Request): JSONObject {
  const nb = notebookOf(panel);
  const nested = req.args !== null && typeof req.args === 'object' && !Array.isArray(req.args);
  const args = nested ? (req.args as Args) : (req as Args);
  // Beside the request's own "id", the target cell is "cell_id"; nested args may call it "id".
  const cellId = args.cell_id ?? (nested ? args.id : undefined);
  if (req.op === 'replace' && args.outputs !== undefined) {
    untrust(panel, cellId);
  }
  return handleOp(nb, req.op, args, cellId, panel.context.localPath) as JSONObject;
}

function onRequest(panel: NotebookPanel, comm: Kernel.IComm, msg: KernelMessage.ICommMsgMsg, clientId: string): void {
  const req = msg.content.data as Request;
  if (!req || req.type !== 'request' || !addressedHere(req.client, clientId)) {
    return; // not ours to answer: only requests get replies, from the page they are for
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
  const shared = panel.content.model?.sharedModel;
  if (shared) {
    // Before any kernel runs a cell: the bridge finds a running cell by its id.
    panel.disposed.connect(keepIdsUnique(shared));
  }
  const register = (kernel: Kernel.IKernelConnection | null | undefined) => {
    // The registry lives on the kernel connection and survives restarts; a new connection
    // (kernel switched) needs its own registration, which kernelChanged gives us.
    kernel?.registerCommTarget(TARGET, comm => {
      comm.onMsg = msg => onRequest(panel, comm, msg, kernel.clientId);
      // Said again on a rename, which keeps the kernel: it names the notebook by what the hello said.
      const stop = sayHello(comm, panel.context.pathChanged, () => panel.context.localPath, VERSION, frontend);
      comm.onClose = () => stop();
    });
  };
  register(panel.sessionContext.session?.kernel);
  panel.sessionContext.kernelChanged.connect((_, change) => {
    if (change.oldValue) {
      // Another kernel (or none) instead of one this page held: that one's questions and runs are
      // gone. Not on the page's first connection: a reloaded page shows a live kernel's run again.
      retireAll(panel.content.node);
    }
    register(change.newValue);
  });
  panel.sessionContext.statusChanged.connect((_, status) => {
    if (kernelGone(status)) {
      retireAll(panel.content.node);
    }
  });
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
    guardAllowButtons(document); // a card that appears under the cursor takes no stray click on Allow
    notebooks.forEach(panel => watchNotebook(app, panel));
    notebooks.widgetAdded.connect((_, panel) => watchNotebook(app, panel));
    consoles?.widgetAdded.connect((_, panel) => {
      watchConsole(panel.sessionContext.session?.kernel);
      panel.sessionContext.kernelChanged.connect((__, change) => watchConsole(change.newValue));
    });
  }
};

export default plugin;
