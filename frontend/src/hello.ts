/**
 * The bridge's hello, and saying it again when the notebook is renamed: a rename (File > Rename,
 * the file browser, Notebook 7's title) keeps the kernel, which learns the notebook's name only
 * from the hello. Without a new one it kept the old name: `%agent status` named the old file and
 * a session started after the rename recorded its replay index under it.
 */
import type { ISignal } from '@lumino/signaling';

/** What the kernel reads of a hello (docs/bridge-protocol.md). */
export type Hello = { type: 'hello'; version: number; frontend: string; path: string };

/** Where the hello goes: the open comm (`send` throws once it is disposed). */
export type Sender = { readonly isDisposed: boolean; send(data: Hello): unknown };

/** Send the hello now and again each time `pathChanged` fires, with the path `path()` reads then;
 * returns what stops it (called when the kernel closes the comm: a new comm says hello itself). */
export function sayHello(comm: Sender, pathChanged: ISignal<unknown, string>, path: () => string,
                         version: number, frontend: string): () => void {
  const hello = (): void => {
    if (!comm.isDisposed) {
      comm.send({ type: 'hello', version, frontend, path: path() });
    }
  };
  hello();
  pathChanged.connect(hello);
  return () => {
    pathChanged.disconnect(hello);
  };
}
