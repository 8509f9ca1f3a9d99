// The hello said again on a rename, with a real Lumino Signal (what DocumentContext.pathChanged is).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Signal } from '@lumino/signaling';
import { sayHello } from './build/hello.js';

function comm() {
  return { isDisposed: false, sent: [], send(data) { this.sent.push(data); } };
}

test('the hello names the notebook, and a rename says it again with the new name', () => {
  const owner = {};
  const pathChanged = new Signal(owner);
  let path = 'sales.ipynb';
  const c = comm();
  sayHello(c, pathChanged, () => path, 2, 'jupyterlab');
  assert.deepEqual(c.sent, [{ type: 'hello', version: 2, frontend: 'jupyterlab', path: 'sales.ipynb' }]);

  path = 'sales-2026.ipynb';
  pathChanged.emit(path);
  assert.equal(c.sent.length, 2);
  assert.equal(c.sent[1].path, 'sales-2026.ipynb');
});

test('a closed comm hears no more of renames, and a disposed one is never sent to', () => {
  const pathChanged = new Signal({});
  const closed = comm();
  const stop = sayHello(closed, pathChanged, () => 'a.ipynb', 2, 'notebook');
  stop();
  pathChanged.emit('b.ipynb');
  assert.equal(closed.sent.length, 1);

  const disposed = comm();
  sayHello(disposed, pathChanged, () => 'a.ipynb', 2, 'notebook');
  disposed.isDisposed = true;
  pathChanged.emit('c.ipynb');
  assert.equal(disposed.sent.length, 1);
});
