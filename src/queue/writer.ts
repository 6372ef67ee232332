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
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { tryUnlink, writeBytes } from './atomic.js';
import { errnoCode, stateError } from './errors.js';
import { outPath, queuePath } from './layout.js';
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

/** Forget all responses and calls: switch to a fresh generation and delete the old one in the background. */
export function resetState(stateDir: string): void {
  guard(stateDir, () => {
    const state = readState(stateDir);
    const next = Number(state.generation.slice(1)) + 1;
    buildGeneration(stateDir, next);
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

/** A generation is built under a temp name and renamed into place, so it appears complete. */
function buildGeneration(stateDir: string, n: number): void {
  const temp = join(stateDir, `.g${n}.${process.pid}.build`);
  mkdirSync(join(temp, 'claims'), { recursive: true, mode: 0o700 });
  mkdirSync(join(temp, 'calls'), { mode: 0o700 });
  mkdirSync(join(temp, 'out'), { mode: 0o700 });
  writeFileSync(join(temp, 'queue.jsonl'), '', { mode: 0o600 });
  renameSync(temp, join(stateDir, `g${n}`));
}

/** Append responses to the queue of `genDir`, all or none. */
export function appendToQueue(genDir: string, responses: readonly WireResponse[]): void {
  const written: string[] = [];
  guard(genDir, () => {
    try {
      const lines = responses.map((r) => `${JSON.stringify(externalise(genDir, r, written))}\n`);
      appendLines(queuePath(genDir), lines.join(''));
    } catch (error) {
      for (const file of written) tryUnlink(file);
      throw error;
    }
  });
}

/**
 * One write to the end of the queue. If a line before it lacks its newline
 * (a hand edit), the newline is added first, so the new lines never merge
 * into it. On failure (a full disk) the file is cut back to where it was.
 */
function appendLines(file: string, text: string): void {
  const fd = openSync(file, 'a+', 0o600);
  try {
    const size = fstatSync(fd).size;
    let data = text;
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) data = `\n${text}`;
    }
    try {
      writeBytes(fd, Buffer.from(data));
    } catch (error) {
      ftruncateSync(fd, size);
      throw error;
    }
  } finally {
    closeSync(fd);
  }
}

let outCounter = 0;

/**
 * The queue line of a response: the response itself, unless it is long; then
 * its stdout bytes, stderr bytes and file map go to `out/` files, so the
 * queue stays small and a call reads only its own response.
 */
function externalise(genDir: string, response: WireResponse, written: string[]): WireResponse {
  if (JSON.stringify(response).length <= INLINE_LIMIT_BYTES) return response;
  const { stdout, stdoutBase64, jsonl, stderr, stderrBase64, writeFiles, ...rest } = response;
  const wire: WireResponse = rest;
  const save = (data: Buffer | string): string => {
    outCounter += 1;
    const name = `${process.pid}-${outCounter}-${randomBytes(3).toString('hex')}`;
    const file = outPath(genDir, name);
    written.push(file);
    writeFileSync(file, data, { mode: 0o600, flag: 'wx' });
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
