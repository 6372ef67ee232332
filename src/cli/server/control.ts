import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { basename, dirname } from 'node:path';
import { InvalidOptionError, InvalidResponseError, ShimkitError } from 'shimkit';
import { shQuote } from '../words.js';
import { controlAddress, isAlive, readServerInfo } from './dir.js';

/**
 * The control channel of `shimkit serve` (design §9): a Unix socket
 * `D/control.sock` (0600, in a 0700 dir), a named pipe on Windows. One JSON
 * request per connection, one line each way: the command writes
 * `{"op":…}\n`, the server answers `{"ok":true,…}\n` or
 * `{"ok":false,"error":{name,code,message}}\n` and closes. An answer may
 * stream: after its first line come more JSON lines (one log entry each,
 * `shimkit requests`), written as the socket drains, so neither side holds
 * them all.
 */

/** The key of an answer's items, each sent as one more JSON line after the first (not in that line). */
export const LINES: unique symbol = Symbol('lines');

export type ControlRequest =
  | {
      op: 'expect';
      match: Record<string, unknown>;
      response: unknown;
      options: Record<string, unknown>;
    }
  | { op: 'enqueue'; responses: unknown[] }
  | {
      op: 'expect-many';
      expectations: Array<{
        match: Record<string, unknown>;
        response: unknown;
        options: Record<string, unknown>;
      }>;
    }
  /** A playbook in its JSON form (PB-07). */
  | { op: 'playbook'; playbook: unknown }
  | { op: 'playbooks' }
  /** The log from after seq `since`, at most `limit` entries, streamed (LINES). */
  | { op: 'requests'; since?: number; limit?: number }
  | { op: 'reset' }
  | { op: 'wait-requests'; n: number; timeoutMs?: number }
  | { op: 'hold'; match?: Record<string, unknown>; options: Record<string, unknown> }
  | {
      op: 'release';
      hold?: string;
      response?: unknown;
      wait?: 'received' | 'blocked';
      timeoutMs?: number;
    }
  | { op: 'verify' }
  | { op: 'stop' };

export type ControlAnswer = { ok: true; [key: string]: unknown } | { ok: false; error: WireError };

/** What a handler answers: the first line's fields, and maybe LINES to stream after it. */
export type ControlReply = Record<string, unknown> & { [LINES]?: Iterable<unknown> };

export interface WireError {
  name: string;
  code?: string;
  message: string;
}

/** How long a command waits for the server's answer. */
const ANSWER_MS = 10_000;
/** How long closing the control socket waits for answered commands to hang up. */
const CLOSE_GRACE_MS = 1000;
/** sockaddr_un.sun_path holds 108 bytes on Linux, 104 on macOS and the BSDs (the NUL included). */
const SUN_PATH_MAX = process.platform === 'linux' ? 107 : 103;

/**
 * Run `use` with a name for the socket at `path` that fits sun_path: the
 * path itself, or (when it is too long) its base name with the process's
 * cwd in its dir for the synchronous bind or connect `use` makes. The
 * server `stay`s there: libuv unlinks a socket by its bound name on close.
 */
function withFittingPath<T>(path: string, use: (path: string) => T, stay = false): T {
  if (path.startsWith('\\\\') || Buffer.byteLength(path) <= SUN_PATH_MAX) return use(path);
  const cwd = process.cwd();
  process.chdir(dirname(path));
  try {
    return use(`./${basename(path)}`);
  } finally {
    if (!stay) process.chdir(cwd);
  }
}

/** Send one request to the server of `dir` and resolve with its answer (`ok: true`); its error is thrown. */
export function ask(dir: string, request: ControlRequest): Promise<Record<string, unknown>> {
  return askLines(dir, request, undefined);
}

/**
 * `ask`, for an answer that streams: each line after the first goes to
 * `onLine` as JSON text, in order; a promise it returns (stdout is full)
 * pauses the socket until it settles. Resolves with the first line's answer
 * once the server closed.
 */
export async function askLines(
  dir: string,
  request: ControlRequest,
  onLine: ((json: string) => Promise<void> | undefined) | undefined,
  answerMs = ANSWER_MS,
): Promise<Record<string, unknown>> {
  const info = readServerInfo(dir);
  const address = controlAddress(dir);
  const text = await new Promise<string>((resolve, reject) => {
    let socket: Socket;
    try {
      socket = withFittingPath(address, (path) => connect(path));
    } catch (error) {
      reject(error);
      return;
    }
    let head: string | undefined;
    let buffer = '';
    let busy = false;
    let ended = false;
    let timer: NodeJS.Timeout | undefined;
    const quiet = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        socket.destroy();
        reject(
          new ShimkitError(
            'ERR_SHIMKIT_SERVER_CONTROL',
            `the mock server of ${dir} (pid ${info.pid}) sent nothing for ${answerMs} ms on ${address} (is it busy, or stopped?).`,
          ),
        );
      }, answerMs);
    };
    const finish = () => {
      clearTimeout(timer);
      resolve(head ?? buffer);
    };
    const pump = () => {
      let from = 0;
      for (;;) {
        const end = buffer.indexOf('\n', from);
        if (end === -1) break;
        const line = buffer.slice(from, end);
        from = end + 1;
        if (head === undefined) {
          head = line;
          continue;
        }
        let wait: Promise<void> | undefined;
        try {
          wait = onLine?.(line);
        } catch (error) {
          clearTimeout(timer);
          socket.destroy();
          reject(error);
          return;
        }
        if (wait) {
          buffer = buffer.slice(from);
          busy = true;
          socket.pause();
          clearTimeout(timer);
          wait.then(() => {
            busy = false;
            quiet();
            socket.resume();
            pump();
          }, reject);
          return;
        }
      }
      buffer = buffer.slice(from);
      if (ended) finish();
    };
    quiet();
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      quiet();
      buffer += chunk;
      if (!busy) pump();
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('end', () => {
      ended = true;
      if (!busy) pump();
    });
    socket.write(`${JSON.stringify(request)}\n`);
  }).catch((error: NodeJS.ErrnoException) => {
    if (error instanceof ShimkitError) throw error;
    if (!isAlive(info.pid)) {
      throw new ShimkitError(
        'ERR_SHIMKIT_NO_SERVER',
        `the mock server of ${dir} is gone: its pid ${info.pid} no longer runs (it ended without removing ${dir}/server.json: killed, or the machine restarted). Start a new one with: eval "$(shimkit serve --dir ${shQuote(dir)} --detach)"`,
      );
    }
    throw new ShimkitError(
      'ERR_SHIMKIT_SERVER_CONTROL',
      `cannot reach the mock server of ${dir} (pid ${info.pid}) on ${address}: ${error.code ?? error.message}.`,
    );
  });
  let answer: ControlAnswer;
  try {
    answer = JSON.parse(text) as ControlAnswer;
  } catch {
    throw new ShimkitError(
      'ERR_SHIMKIT_SERVER_CONTROL',
      `the mock server of ${dir} (pid ${info.pid}) closed the connection without an answer${text ? `: ${JSON.stringify(text.slice(0, 80))}` : ''} (is it stopping?).`,
    );
  }
  if (!answer.ok) throw fromWire(answer.error);
  return answer;
}

/** The server's error as the class it was (so `report` gives its exit code). */
function fromWire(error: WireError): Error {
  if (error.name === 'InvalidResponseError') return new InvalidResponseError(error.message);
  if (error.name === 'InvalidOptionError') return new InvalidOptionError(error.message);
  return new ShimkitError(error.code ?? 'ERR_SHIMKIT_SERVER_CONTROL', error.message);
}

export function toWire(error: unknown): WireError {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return {
      name: error.name,
      ...(typeof code === 'string' ? { code } : {}),
      message: error instanceof ShimkitError ? error.message : (error.stack ?? error.message),
    };
  }
  return { name: 'Error', message: String(error) };
}

/**
 * Listen for control requests for `dir`: each line is handed to `handle`,
 * whose answer (or error) goes back before the connection closes. A stale
 * socket file (a server that was killed) is replaced.
 */
export async function listenControl(
  dir: string,
  handle: (request: ControlRequest) => Promise<ControlReply>,
): Promise<{ address: string; close(): Promise<void> }> {
  const address = controlAddress(dir);
  removeSocket(address);
  // Connections that have not sent their request yet: ended at close (one never sending would hold it up).
  const waiting = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => {
    let got = '';
    waiting.add(socket);
    socket.setEncoding('utf8');
    socket.setTimeout(ANSWER_MS, () => socket.destroy());
    socket.on('error', () => {}); // a command that went away: nothing to answer
    socket.on('close', () => waiting.delete(socket));
    socket.on('data', (chunk: string) => {
      got += chunk;
      const end = got.indexOf('\n');
      if (end === -1) return;
      waiting.delete(socket);
      socket.pause();
      socket.setTimeout(0); // a wait (wait-requests, release --wait) has its own deadline
      answer(got.slice(0, end)).then((reply) => {
        socket.setTimeout(ANSWER_MS, () => socket.destroy());
        return send(socket, reply);
      });
    });
    socket.on('end', () => {
      if (waiting.has(socket)) socket.destroy(); // closed before a whole request
    });
  });
  const answer = async (line: string): Promise<ControlAnswer & { [LINES]?: Iterable<unknown> }> => {
    try {
      return { ok: true, ...(await handle(JSON.parse(line) as ControlRequest)) };
    } catch (error) {
      return { ok: false, error: toWire(error) };
    }
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    withFittingPath(address, (path) => server.listen(path, () => resolve()), true);
  });
  if (!address.startsWith('\\\\')) chmodSync(address, 0o600);
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        removeSocket(address);
        for (const socket of waiting) socket.destroy();
        // Answered connections close as their commands read the answer; none holds this up for long.
        const timer = setTimeout(resolve, CLOSE_GRACE_MS);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}

/** Write `reply` (and its LINES, each once the socket drained) and end the connection. */
async function send(
  socket: Socket,
  reply: ControlAnswer & { [LINES]?: Iterable<unknown> },
): Promise<void> {
  const lines = reply[LINES];
  if (lines === undefined) {
    socket.end(`${JSON.stringify(reply)}\n`);
    return;
  }
  socket.write(`${JSON.stringify(reply)}\n`);
  try {
    for (const item of lines) {
      if (socket.destroyed) return;
      if (!socket.write(`${JSON.stringify(item)}\n`)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            socket.off('drain', done);
            socket.off('close', done);
            resolve();
          };
          socket.on('drain', done);
          socket.on('close', done);
        });
      }
    }
  } catch (error) {
    socket.destroy(error as Error); // the command sees the connection cut, not a short log
    return;
  }
  socket.end();
}

function removeSocket(address: string): void {
  if (address.startsWith('\\\\')) return;
  try {
    if (lstatSync(address).isSocket()) unlinkSync(address);
  } catch {
    // not there
  }
}
