// Property: whatever the user and the agent do, in any order, every user cell survives byte-identical.
//
// Random sequences of user actions (insert, edit, move, run, Run All's queue, copy and paste) and the kernel's
// (agent turns, re-runs of an agent cell, rollbacks, retries), against a real YNotebook. The kernel
// side here is deliberately careless: it asks to delete EVERY cell id, with only its expectations
// (origin, session, turn, agent cell) to go by, so the front-end's guard alone must keep the user's cells.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { opDelete } from './build/ops.js';
import { ORIGIN, SESSION, agentInsert, byId, bytes, notebook, user } from './helpers.mjs';

const userAction = fc.oneof(
  fc.record({ type: fc.constant('insert'), at: fc.nat(), text: fc.string({ maxLength: 8 }), markdown: fc.boolean() }),
  fc.record({ type: fc.constant('edit'), pick: fc.nat(), text: fc.string({ minLength: 1, maxLength: 8 }) }),
  fc.record({ type: fc.constant('move'), pick: fc.nat(), to: fc.nat() }),
  fc.record({ type: fc.constant('run'), pick: fc.nat() }),
  fc.record({ type: fc.constant('queue'), pick: fc.nat() }),
  fc.record({ type: fc.constant('copy'), pick: fc.nat(), at: fc.nat() })
);
const kernelAction = fc.oneof(
  fc.record({ type: fc.constant('turn'), agent: fc.nat(1), cells: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ type: fc.constant('rerun'), agent: fc.nat(1), cells: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ type: fc.constant('rollback'), to: fc.nat(6) }),
  fc.record({ type: fc.constant('retry'), agent: fc.nat(1) })
);

/** The world: the notebook, which cells are the user's (id -> bytes), and the kernel's memory. */
class World {
  constructor() {
    // A received notebook's agent cells (another kernel's origin) and two %%agent cells of the user.
    this.nb = notebook([
      user('%%agent\nfirst question'),
      { cell_type: 'code', source: 'received()', metadata: { nbagent: { origin: 'other-kernel', session: SESSION, turn: 1, kind: 'code' } }, outputs: [], execution_count: null },
      user('%%agent\nsecond question')
    ]);
    this.agents = [this.nb.cells[0].id, this.nb.cells[2].id];
    this.users = new Map(this.nb.cells.map(c => [c.id, bytes(c)]));
    this.turn = 0;
    this.turnOf = new Map(); // agent cell -> its latest turn
    this.count = 100;
    this.queued = new Set();
  }

  pick(n) {
    return this.nb.cells.length ? this.nb.cells[n % this.nb.cells.length] : null;
  }

  own(cell) {
    // A cell the user touched is the user's from now on (an agent cell edited or run again too).
    this.users.set(cell.id, bytes(cell));
  }

  user(action) {
    const nb = this.nb;
    const cell = this.pick(action.pick ?? 0);
    if (action.type === 'insert') {
      const json = action.markdown ? { cell_type: 'markdown', source: action.text, metadata: {} } : user(action.text);
      const made = nb.insertCell(action.at % (nb.cells.length + 1), json);
      this.own(made);
    } else if (cell && action.type === 'edit') {
      cell.setSource(cell.getSource() + action.text);
      this.own(cell);
    } else if (cell && action.type === 'move') {
      nb.moveCell(nb.cells.indexOf(cell), action.to % nb.cells.length);
    } else if (cell && action.type === 'run' && cell.cell_type === 'code') {
      cell.execution_count = this.count++;
      this.own(cell);
    } else if (cell && action.type === 'copy') {
      // Copy and paste (and Duplicate): JupyterLab inserts the cell's JSON, metadata and all, under a new id.
      const { id: _id, ...json } = cell.toJSON();
      this.own(nb.insertCell(action.at % (nb.cells.length + 1), json));
    } else if (cell && action.type === 'queue' && cell.cell_type === 'code') {
      cell.executionState = 'running'; // Run All queued it: it must survive the next request
      this.queued.add(cell);
    }
  }

  /** Ask for every id to go, with the kernel's expectations; check the reply's count is honest. */
  remove(expect, protect = []) {
    const before = new Set(this.nb.cells.map(c => c.id));
    const result = opDelete(this.nb, { ids: [...before], expect: { origin: ORIGIN, session: SESSION, ...expect }, protect });
    const after = new Set(this.nb.cells.map(c => c.id));
    assert.equal(result.deleted, before.size - after.size);
    assert.deepEqual(result.removed.filter(id => after.has(id)), []);
    return result;
  }

  agentTurn(agentIndex, cells) {
    const agent = this.agents[agentIndex];
    if (!byId(this.nb, agent)) {
      return;
    }
    this.turn += 1;
    this.turnOf.set(agent, this.turn);
    let after = agent;
    for (let i = 0; i < cells; i++) {
      after = agentInsert(this.nb, `print(${this.turn}, ${i})`, this.turn, { after, agent_cell: agent });
    }
  }

  kernel(action) {
    const agent = this.agents[action.agent ?? 0];
    if (action.type === 'turn') {
      this.agentTurn(action.agent, action.cells);
    } else if (action.type === 'rerun') {
      const last = this.turnOf.get(agent);
      if (last !== undefined) {
        this.remove({ agent_cell: agent, turns: [last], kinds: ['code'] }, [agent]);
        this.checkGone(agent, last);
      }
      this.agentTurn(action.agent, action.cells);
    } else if (action.type === 'rollback') {
      const to = Math.min(action.to, this.turn);
      this.remove({ after_turn: to, kinds: ['code', 'new'] });
      this.turn = to;
    } else if (action.type === 'retry' && this.turn > 0) {
      this.remove({ after_turn: this.turn - 1, kinds: ['code', 'new'] });
      this.turn -= 1;
      this.agentTurn(action.agent, 1);
    }
    for (const cell of this.queued) {
      cell.executionState = 'idle'; // the queue ran
    }
    this.queued.clear();
  }

  /** After a re-run's removal no cell of that turn remains that was the agent's to remove. */
  checkGone(agent, turn) {
    for (const cell of this.nb.cells) {
      const mark = cell.getMetadata('nbagent');
      const stays = this.users.has(cell.id) || this.queued.has(cell);
      if (mark && mark.origin === ORIGIN && mark.agent_cell === agent && mark.turn === turn && !stays) {
        assert.fail(`an unedited cell of the re-run turn stayed: ${cell.getSource()}`);
      }
    }
  }

  check() {
    for (const [id, json] of this.users) {
      const cell = byId(this.nb, id);
      assert.ok(cell, `the user's cell ${id} was deleted`);
      assert.equal(bytes(cell), json, `the user's cell ${id} changed`);
    }
  }
}

test('every user cell survives byte-identical through random edits, turns, re-runs, rollbacks and retries', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(userAction, kernelAction), { minLength: 1, maxLength: 40 }), actions => {
      const world = new World();
      try {
        for (const action of actions) {
          if (['turn', 'rerun', 'rollback', 'retry'].includes(action.type)) {
            world.kernel(action);
          } else {
            world.user(action);
          }
          world.check();
        }
      } finally {
        world.nb.dispose();
      }
    }),
    { numRuns: 300 }
  );
});
