/**
 * Which cells nbagent may remove, decided in the front-end at the moment of removal.
 *
 * nbagent marks the cells it makes with `metadata.nbagent` = {origin, session, turn, kind, ...}:
 * `origin` is a random token of the kernel process that made the cell, so a received notebook,
 * or one from before a restart, carries marks that are never "ours". At insert this front-end adds
 * `made` = {cell_id, source_sha256, execution_count}: the cell as nbagent made it. A cell with
 * another id is a copy the user made (copy and paste, Duplicate keep the metadata, not the id); one
 * whose source no longer hashes the same was edited by the user; one with another execution count
 * was run again by the user: all are the user's now.
 */
import type { ISharedCell, ISharedCodeCell } from '@jupyter/ydoc';
import { sha256 } from '@noble/hashes/sha256';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';

/** The cell-metadata key nbagent owns. */
export const MARK = 'nbagent';

/** An error whose message is sent back to the kernel as the reply's `error`. */
export class BridgeError extends Error {}

/** What the kernel expects of each cell it asks to remove; every given field must match. */
export type Expect = {
  origin: string;
  session?: string;
  agent_cell?: string;
  turns?: number[];
  after_turn?: number;
  kinds: string[];
};

/** A cell that stayed, and the reason (a short code the kernel words for the user). */
export type Kept = { id: string; reason: string };

type Made = { cell_id?: string; source_sha256?: string; execution_count?: number | null };

/** sha256 of the source's UTF-8 bytes, hex: the same as Python's hashlib. */
export function sourceHash(source: string): string {
  return bytesToHex(sha256(utf8ToBytes(source)));
}

export function parseExpect(raw: unknown): Expect {
  if (!raw || typeof raw !== 'object' || typeof (raw as any).origin !== 'string' || !(raw as any).origin) {
    throw new BridgeError('delete needs expect.origin (bridge protocol 2): update nbagent in the kernel\'s environment');
  }
  const r = raw as { [key: string]: unknown };
  const expect: Expect = { origin: r.origin as string, kinds: ['code'] };
  if (typeof r.session === 'string') {
    expect.session = r.session;
  }
  if (typeof r.agent_cell === 'string') {
    expect.agent_cell = r.agent_cell;
  }
  if (Array.isArray(r.turns)) {
    expect.turns = r.turns.filter((t): t is number => typeof t === 'number');
  }
  if (typeof r.after_turn === 'number') {
    expect.after_turn = r.after_turn;
  }
  if (Array.isArray(r.kinds)) {
    expect.kinds = r.kinds.filter((k): k is string => typeof k === 'string');
  }
  return expect;
}

function isObject(value: unknown): value is { [key: string]: any } {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Why `cell` must stay (a reason code), or null when it is nbagent's to remove now. */
export function whyKept(cell: ISharedCell, expect: Expect, protect: Set<string>): string | null {
  if (protect.has(cell.id)) {
    return 'protected';
  }
  if (cell.cell_type !== 'code') {
    return 'not-code';
  }
  const code = cell as ISharedCodeCell;
  if (code.executionState === 'running') {
    return 'running'; // running now, or queued: JupyterLab marks both [*]
  }
  const mark: unknown = cell.getMetadata(MARK);
  if (!isObject(mark)) {
    return 'not-nbagent';
  }
  if (mark.origin !== expect.origin) {
    return 'other-origin';
  }
  if (expect.session !== undefined && mark.session !== expect.session) {
    return 'other-session';
  }
  if (expect.agent_cell !== undefined && mark.agent_cell !== expect.agent_cell) {
    return 'other-agent-cell';
  }
  if (!expect.kinds.includes(mark.kind)) {
    return 'other-kind';
  }
  if (expect.turns !== undefined && !expect.turns.includes(mark.turn)) {
    return 'other-turn';
  }
  if (expect.after_turn !== undefined && !(typeof mark.turn === 'number' && mark.turn > expect.after_turn)) {
    return 'other-turn';
  }
  const made: unknown = mark.made;
  if (!isObject(made)) {
    return 'edited'; // no stamp: nbagent never made this cell whole
  }
  if (made.cell_id !== cell.id) {
    return 'copied'; // pasted or duplicated by the user (or stamped before stamps carried the id)
  }
  if (typeof made.source_sha256 !== 'string' || made.source_sha256 !== sourceHash(cell.getSource())) {
    return 'edited';
  }
  const count = code.execution_count ?? null;
  if (count !== null && count !== (made.execution_count ?? null)) {
    return 're-run';
  }
  return null;
}

/** Stamp a cell about to be inserted (nbformat JSON, with the id it will have): `made` is computed
 * here, never taken from the request. Cells without an nbagent mark are left alone. */
export function stampNew(cell: { [key: string]: any }): void {
  const mark = cell.metadata?.[MARK];
  if (!isObject(mark)) {
    return;
  }
  const made: Made = { cell_id: String(cell.id), source_sha256: sourceHash(String(cell.source ?? '')) };
  if (cell.cell_type === 'code') {
    made.execution_count = cell.execution_count ?? null;
  }
  cell.metadata = { ...cell.metadata, [MARK]: { ...mark, made } };
}

/** After a replace: `made` keeps what this front-end stamped before (`before`), updated for what
 * the replace itself wrote; a `made` the request put in the metadata is discarded. */
export function restamp(cell: ISharedCell, before: unknown, wrote: { source: boolean; count: boolean }): void {
  const mark: unknown = cell.getMetadata(MARK);
  if (!isObject(mark)) {
    return;
  }
  const made: Made = isObject(before) ? { ...(before as Made) } : {};
  if (wrote.source) {
    made.source_sha256 = sourceHash(cell.getSource());
  }
  if (wrote.count && cell.cell_type === 'code') {
    made.execution_count = (cell as ISharedCodeCell).execution_count ?? null;
  }
  const { made: _old, ...rest } = mark;
  const next = Object.keys(made).length ? { ...rest, made } : rest;
  if (JSON.stringify(next) !== JSON.stringify(mark)) {
    cell.setMetadata(MARK, next);
  }
}

/** The stamps a cell carries now (read before a replace changes its metadata). */
export function madeOf(cell: ISharedCell): unknown {
  const mark: unknown = cell.getMetadata(MARK);
  return isObject(mark) ? mark.made : undefined;
}
