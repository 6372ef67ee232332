import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rm,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { tryUnlink } from './atomic.js';
import { errnoCode, stateError } from './errors.js';
import { outPath, queuePath, routedPath } from './layout.js';
import { outputBytes } from './output.js';
import { readState, writeState } from './state.js';
import type { WireConfig, WireResponse } from './types.js';

/**
 * The writer's half of the protocol, used by the test process (and the CLI):
 * set up a state dir, append to the queue, start a new generation on reset.
 * Nothing here takes a lock or waits for a call: appends are single writes to
 * a file opened for appending, so the test process never stalls behind a
 * call, however many run. Every file-system error comes out as a
 * `ShimkitError` that names the file.
 */

/** A queue line longer than this keeps its large parts in `out/` files. */
export const INLINE_LIMIT_BYTES = 16 * 1024;

/**
 * Make the state dir of a new mock instance under `parent`: `<name>.<id>`,
 * a name no other instance ever had (a call still running from an earlier
 * mock of the same name cannot find it), with generation g1 ready.
 */
export function createInstance(parent: string, name: string, config: WireConfig): string {
  return guard(parent, () => {
    mkdirSync(parent, { recursive: true, mode: 0o700 });
    for (;;) {
      const dir = join(parent, `${name}.${randomBytes(6).toString('hex')}`);
      try {
        mkdirSync(dir, { mode: 0o700 });
      } catch (error) {
        if (errnoCode(error) === 'EEXIST') continue;
        throw error;
      }
      buildGeneration(dir, 1);
      writeState(dir, { generation: 'g1', config });
      return dir;
    }
  });
}

/**
 * Forget all responses and calls: switch to a fresh generation and delete the
 * old one in the background. A generation number is never used twice: one
 * left behind by a reset that failed half-way (a full disk) is skipped.
 */
export function resetState(stateDir: string): void {
  guard(stateDir, () => {
    const state = readState(stateDir);
    let next = Number(state.generation.slice(1)) + 1;
    while (!buildGeneration(stateDir, next)) next += 1;
    writeState(stateDir, { ...state, generation: `g${next}` });
    retire(join(stateDir, state.generation));
  });
}

/**
 * Move a dir out of every call's way at once (a call still running there
 * then fails to write instead of writing anywhere else), then delete it in
 * the background, so a reset or dispose never blocks the event loop on a
 * big tree. Whatever a late writer puts there is deleted with its parent.
 */
export function retire(dir: string): void {
  const trash = join(dir, '..', `.retired-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    renameSync(dir, trash);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return;
    throw stateError(error, dir, 'test');
  }
  rm(trash, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 }, () => {});
}

/**
 * A generation is built under a temp name and renamed into place, so it
 * appears complete; false if `g<n>` exists already. Nothing is left behind
 * when building fails.
 */
function buildGeneration(stateDir: string, n: number): boolean {
  const temp = join(stateDir, `.g${n}.${process.pid}.${randomBytes(4).toString('hex')}.build`);
  try {
    mkdirSync(temp, { mode: 0o700 });
    mkdirSync(join(temp, 'claims'), { mode: 0o700 });
    mkdirSync(join(temp, 'calls'), { mode: 0o700 });
    mkdirSync(join(temp, 'out'), { mode: 0o700 });
    writeFileSync(join(temp, 'queue.jsonl'), '', { mode: 0o600 });
    renameSync(temp, join(stateDir, `g${n}`));
    return true;
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    // rename(2) onto an existing non-empty dir fails with ENOTEMPTY or EEXIST.
    if (errnoCode(error) === 'ENOTEMPTY' || errnoCode(error) === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Append responses to the queue of `genDir` in one write. If the disk fills
 * part-way, the responses whose lines were written whole stay enqueued (a
 * call may have claimed one already, so they cannot be taken back), the rest
 * is cut off with its out files, and the error says how many made it.
 */
export function appendToQueue(genDir: string, responses: readonly WireResponse[]): void {
  const outFiles: string[][] = [];
  try {
    const lines = responses.map((response) => {
      const files: string[] = [];
      outFiles.push(files);
      return Buffer.from(`${JSON.stringify(externalise(genDir, response, files))}\n`);
    });
    if (responses.some((r) => r.match !== undefined || r.times !== undefined)) markRouted(genDir);
    appendLines(queuePath(genDir), lines);
  } catch (error) {
    const kept = error instanceof PartialAppend ? error.whole : 0;
    const cause = error instanceof PartialAppend ? error.cause : error;
    for (const files of outFiles.slice(kept)) for (const file of files) tryUnlink(file);
    const path = (cause as { path?: unknown } | undefined)?.path;
    const failure = stateError(cause, typeof path === 'string' ? path : genDir, 'test');
    if (kept > 0) {
      failure.message += ` (${kept} of ${responses.length} responses were enqueued before it failed)`;
    }
    throw failure;
  }
}

/**
 * Mark the generation routed before its first routed line is appended: a
 * call that reads that line then finds the marker (see route-claim.ts).
 */
function markRouted(genDir: string): void {
  try {
    writeFileSync(routedPath(genDir), '', { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
  }
}

/** A write to the queue failed after `whole` of its lines were written whole. */
class PartialAppend extends Error {
  constructor(
    override readonly cause: unknown,
    readonly whole: number,
  ) {
    super('partial append');
  }
}

/**
 * One write to the end of the queue. If the line before lacks its newline (a
 * hand edit), the newline goes first, so the new lines never merge into it.
 * If the write fails part-way, the lines written whole stay and the rest is
 * cut off, so no reader ever meets a line without its newline for long.
 */
function appendLines(file: string, lines: readonly Buffer[]): void {
  const fd = openSync(file, 'a+', 0o600);
  try {
    const start = fstatSync(fd).size;
    const lead = Buffer.from(start > 0 && lastByte(fd, start) !== 0x0a ? '\n' : '');
    const data = Buffer.concat([lead, ...lines]);
    let written = 0;
    try {
      while (written < data.length) written += writeSync(fd, data, written, data.length - written);
    } catch (error) {
      let end = lead.length;
      let whole = 0;
      for (const line of lines) {
        if (end + line.length > written) break;
        end += line.length;
        whole += 1;
      }
      ftruncateSync(fd, start + (written >= lead.length ? end : 0));
      throw new PartialAppend(error, whole);
    }
  } finally {
    closeSync(fd);
  }
}

function lastByte(fd: number, size: number): number | undefined {
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0];
}

let outCounter = 0;

/**
 * The queue line of a response: the response itself, unless it is long; then
 * its stdout bytes, stderr bytes and file map go to `out/` files, so the
 * queue stays small and a call reads only its own response.
 */
function externalise(genDir: string, response: WireResponse, written: string[]): WireResponse {
  if (Buffer.byteLength(JSON.stringify(response)) <= INLINE_LIMIT_BYTES) return response;
  const { stdout, stdoutBase64, jsonl, stderr, stderrBase64, writeFiles, ...rest } = response;
  const wire: WireResponse = rest;
  const save = (data: Buffer | string): string => {
    outCounter += 1;
    const name = `${process.pid}-${outCounter}-${randomBytes(6).toString('hex')}`;
    const file = outPath(genDir, name);
    try {
      writeFileSync(file, data, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') tryUnlink(file); // a part written before the disk filled
      throw error;
    }
    written.push(file);
    return name;
  };
  if (stdout !== undefined || stdoutBase64 !== undefined || jsonl !== undefined) {
    wire.stdoutFile = save(outputBytes(stdout, stdoutBase64, jsonl));
  }
  if (stderr !== undefined || stderrBase64 !== undefined) {
    wire.stderrFile = save(outputBytes(stderr, stderrBase64));
  }
  if (writeFiles !== undefined) wire.writeFilesFile = save(JSON.stringify(writeFiles));
  return wire;
}

/** Run `fn`, turning any file-system error into a `ShimkitError` naming the file. */
function guard<T>(near: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    const path = (error as { path?: unknown })?.path;
    throw stateError(error, typeof path === 'string' ? path : near, 'test');
  }
}
