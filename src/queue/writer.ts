import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rm,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { tryUnlink, writeFileAtomic } from './atomic.js';
import { errnoCode, stateError } from './errors.js';
import {
  exactEnvPath,
  extraFragmentPath,
  fragmentPath,
  generationPath,
  outPath,
  queuePath,
  routedPath,
  shStatePath,
} from './layout.js';
import { countLines } from './lines.js';
import { outputBytes } from './output.js';
import { isAlive } from './process-alive.js';
import { firstFree } from './search.js';
import { ShFiles } from './sh-files.js';
import { renderFragment, shStateText } from './sh-fragment.js';
import { readState, writeState } from './state.js';
import type { WireConfig, WireResponse, WireState } from './types.js';
import { makeWriterDir, withWriterLock, writerStop } from './writer-lock.js';

/**
 * The writer's half of the protocol, used by the test process (and the CLI):
 * set up a state dir, append to the queue, start a new generation on reset.
 * Nothing here waits for a call: appends are single writes to a file opened
 * for appending, so the test process never stalls behind a call, however
 * many run. Writers take turns (writer-lock.ts), which only another writer
 * (a `shimkit enqueue` in another process) can hold up. Every file-system
 * error comes out as a `ShimkitError` that names the file.
 */

/** A queue line longer than this keeps its large parts in `out/` files. */
export const INLINE_LIMIT_BYTES = 16 * 1024;

/**
 * Make the state dir of a new mock instance under `parent`: `<name>.<id>`
 * (`id` random unless given), a name no other instance ever had (a call still running from an earlier
 * mock of the same name cannot find it), with generation g1 ready.
 */
export function createInstance(
  parent: string,
  name: string,
  config: WireConfig,
  id?: string,
): string {
  return guard(parent, () => {
    mkdirSync(parent, { recursive: true, mode: 0o700 });
    for (;;) {
      const dir = join(parent, `${name}.${id ?? instanceId()}`);
      try {
        mkdirSync(dir, { mode: 0o700 });
      } catch (error) {
        if (errnoCode(error) === 'EEXIST' && id === undefined) continue; // a given id is the caller's to keep unique
        throw error;
      }
      makeWriterDir(dir);
      buildGeneration(dir, 1);
      if (config.sh) {
        const { sh } = config;
        const fallback = typeof config.onExhausted === 'object' ? config.onExhausted.response : {};
        writeFileAtomic(
          extraFragmentPath(dir, 'default'),
          renderFragment(config.default ?? {}, config, sh),
        );
        writeFileAtomic(extraFragmentPath(dir, 'fallback'), renderFragment(fallback, config, sh));
      }
      const { recordEnv } = config;
      const fallback = typeof config.onExhausted === 'object' ? config.onExhausted.response : {};
      if (
        config.spy ||
        recordEnv === true ||
        (Array.isArray(recordEnv) && recordEnv.length > 0) ||
        [config.default ?? {}, fallback].some(passesThrough)
      ) {
        markExactEnv(dir);
      }
      publishState(dir, { generation: 'g1', config });
      return dir;
    }
  });
}

/** The random part of a state dir's name, `<name>.<id>`. */
export function instanceId(): string {
  return randomBytes(6).toString('hex');
}

/**
 * Forget all responses and calls: switch to a fresh generation and delete the
 * old one in the background. A generation number is never used twice: one
 * left behind by a reset that failed half-way (a full disk) is skipped.
 */
export function resetState(stateDir: string): void {
  guard(stateDir, () =>
    withWriterLock(stateDir, () => {
      const state = readState(stateDir);
      let next = Number(state.generation.slice(1)) + 1;
      while (!buildGeneration(stateDir, next)) next += 1;
      publishState(stateDir, { ...state, generation: `g${next}` });
      retire(join(stateDir, state.generation));
      dropStaleEnvCopies(stateDir);
    }),
  );
}

/**
 * The env copies (`.env.<pid>`, see exact-env in layout.ts) of calls killed
 * before their runner read them: each holds a caller's whole env, so they
 * go with a reset (and with the state dir, at dispose).
 */
function dropStaleEnvCopies(stateDir: string): void {
  let names: string[];
  try {
    names = readdirSync(stateDir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^\.env\.([1-9][0-9]*)$/.exec(name)?.[1];
    if (pid !== undefined && !isAlive(Number(pid))) tryUnlink(join(stateDir, name));
  }
}

/**
 * Replace the state: `state.json` for the runner, then `state.sh` for the
 * sh shim (when it serves calls itself), so both name the same generation.
 */
export function publishState(stateDir: string, state: WireState): void {
  writeState(stateDir, state);
  if (!state.config.sh) return;
  const genDir = generationPath(stateDir, state.generation);
  const total = firstFree((n) => existsSync(fragmentPath(genDir, n))) - 1;
  writeFileAtomic(shStatePath(stateDir), shStateText(state, total));
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
    mkdirSync(join(temp, 'sh'), { mode: 0o700 });
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
 * Append responses to the live queue of `stateDir` in one write. If the disk fills
 * part-way, the responses whose lines were written whole stay enqueued (a
 * call may have claimed one already, so they cannot be taken back), the rest
 * is cut off with its out files, and the error says how many made it.
 *
 * Where the shim serves static responses, each new line gets its `sh/<n>`
 * (see sh-fragment.ts), and in a routed generation its route line
 * (sh-route.ts, sh-files.ts), *before* the append, and `state.sh`
 * its new count after: a shell that finds `sh/<count + 1>` knows lines may be
 * coming that it does not know yet, and leaves the call to the runner, so no
 * call answers "repeat" once a later response was served.
 *
 * One writer at a time per state dir (the writer lock, writer-lock.ts): the
 * line numbers of `sh/<n>` come from counting the queue before the append,
 * which two processes appending at once would both get wrong.
 */
export function appendToQueue(stateDir: string, responses: readonly WireResponse[]): void {
  guard(join(stateDir, 'writers'), () =>
    withWriterLock(stateDir, () => {
      writerStop('locked');
      appendLocked(stateDir, responses);
      writerStop('settled');
    }),
  );
}

function appendLocked(stateDir: string, responses: readonly WireResponse[]): void {
  const state = readState(stateDir);
  const genDir = generationPath(stateDir, state.generation);
  const outFiles: string[][] = [];
  const sh = new ShFiles(stateDir, state);
  try {
    const lines = responses.map((response) => {
      const files: string[] = [];
      outFiles.push(files);
      return Buffer.from(`${JSON.stringify(externalise(genDir, response, files))}\n`);
    });
    if (responses.some((r) => r.match !== undefined || r.times !== undefined)) markRouted(genDir);
    if (responses.some((r) => r.match?.env !== undefined || passesThrough(r)))
      markExactEnv(stateDir);
    appendLines(queuePath(genDir), lines, (first) => {
      sh.write(first, responses);
      writerStop('fragments');
    });
    writerStop('appended');
  } catch (error) {
    const kept = error instanceof PartialAppend ? error.whole : 0;
    const cause = error instanceof PartialAppend ? error.cause : error;
    for (const files of outFiles.slice(kept)) for (const file of files) tryUnlink(file);
    sh.settle(kept);
    const path = (cause as { path?: unknown } | undefined)?.path;
    const failure = stateError(cause, typeof path === 'string' ? path : genDir, 'test');
    if (kept > 0) {
      failure.message += ` (${kept} of ${responses.length} responses were enqueued before it failed)`;
    }
    throw failure;
  }
  sh.settle(responses.length);
}

/**
 * Mark the generation routed before its first routed line is appended: a
 * call that reads that line then finds the marker (see route-claim.ts).
 */
function markRouted(genDir: string): void {
  markOnce(routedPath(genDir));
}

/** Whether a response runs the real command (which gets the caller's env). */
const passesThrough = (r: WireResponse) => (r.passthrough ?? false) !== false;

/** From now on a call's env matters: the shim hands the runner the caller's exact env (see layout.ts). */
export function markExactEnv(stateDir: string): void {
  markOnce(exactEnvPath(stateDir));
}

function markOnce(file: string): void {
  if (existsSync(file)) return;
  try {
    writeFileSync(file, '', { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
  }
}

/** A write to the queue failed after `whole` of its lines were written whole. */
class PartialAppend extends Error {
  constructor(
    override readonly cause: unknown,
    readonly whole: number,
    /** The line number of the first of them. */
    readonly first: number,
  ) {
    super('partial append');
  }
}

/**
 * One write to the end of the queue, after `before(first)`; returns the line number of the first
 * new line. If the line before lacks its newline (a
 * hand edit), the newline goes first, so the new lines never merge into it.
 * If the write fails part-way, the lines written whole stay and the rest is
 * cut off, so no reader ever meets a line without its newline for long.
 */
function appendLines(
  file: string,
  lines: readonly Buffer[],
  before: (first: number) => void,
): number {
  const fd = openSync(file, 'a+', 0o600);
  try {
    const start = Number(fstatSync(fd).size);
    const lead = Buffer.from(start > 0 && lastByte(fd, start) !== 0x0a ? '\n' : '');
    const first = linesUpTo(file, fd, start) + lead.length + 1;
    before(first);
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
      lineCounts.delete(file);
      throw new PartialAppend(error, whole, first);
    }
    lineCounts.delete(file); // re-inserted last: the oldest entry is the first to go
    lineCounts.set(file, { ...fileVersion(fd), lines: first - 1 + lines.length });
    if (lineCounts.size > 512) lineCounts.delete(lineCounts.keys().next().value as string);
    return first;
  } finally {
    closeSync(fd);
  }
}

/**
 * Complete lines of queue files this process appended to, as it left them.
 * An entry counts only while the file is that very file (inode), at that
 * size and modification time: another process's append (a `shimkit enqueue`),
 * a cut-back after a failed write, or a hand edit changes one of them.
 */
const lineCounts = new Map<string, FileVersion & { lines: number }>();

interface FileVersion {
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
}

function fileVersion(fd: number): FileVersion {
  const stat = fstatSync(fd, { bigint: true });
  return { ino: stat.ino, size: stat.size, mtimeNs: stat.mtimeNs };
}

/** How many complete lines the first `size` bytes of the queue hold (read only when this process has not counted them). */
function linesUpTo(file: string, fd: number, size: number): number {
  const known = lineCounts.get(file);
  if (known) {
    const now = fileVersion(fd);
    if (
      known.ino === now.ino &&
      known.size === now.size &&
      known.mtimeNs === now.mtimeNs &&
      now.size === BigInt(size)
    ) {
      return known.lines;
    }
  }
  const bytes = Buffer.alloc(size);
  let read = 0;
  while (read < size) {
    const n = readSync(fd, bytes, read, size - read, read);
    if (n === 0) break;
    read += n;
  }
  return countLines(bytes.subarray(0, read).toString('latin1'));
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
