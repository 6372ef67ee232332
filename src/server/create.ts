import { randomBytes } from 'node:crypto';
import { lstatSync, type Stats, statSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, resolve } from 'node:path';
import { callerFrame } from '../internal/caller.js';
import { onProcessExit } from '../internal/exit-cleanup.js';
import { recordSocket } from '../internal/leftovers/registry.js';
import { sweepLeftovers } from '../internal/leftovers/sweep-leftovers.js';
import { CassetteRecording, wireCassette } from './cassette.js';
import { MockServerListenError, type ServerWorkerError } from './errors.js';
import { warnIfExposed } from './exposure.js';
import { ServerLink } from './link.js';
import { Mirror } from './mirror.js';
import { MockServer } from './mock-server.js';
import { type MockServerOptions, resolveServerOptions, type ServerSettings } from './options.js';
import type { ServerEvent, WorkerSettings } from './protocol.js';

type Ready =
  | Extract<ServerEvent, { type: 'listening' | 'listen-error' }>
  | { type: 'failed'; error: ServerWorkerError };

/**
 * Start a scripted HTTP/SSE server (SPEC HT) in a worker thread and resolve
 * once it listens. Any process can reach it — the program under test, curl,
 * python — through `url` (or `socketPath`) and `env()`; it answers while the
 * test's thread is blocked in `execFileSync`.
 *
 * @example
 * await using api = await createMockServer({ strict: true });
 * api.expect({ method: 'POST', path: '/v1/chat/completions' }, sse.chat('Hello'));
 * execFileSync('my-agent', ['hi'], { env: api.env() });
 * expect(api.requests()[0].json).toMatchObject({ stream: true });
 */
export async function createMockServer(options?: MockServerOptions): Promise<MockServer> {
  const settings = resolveServerOptions(options);
  // Where a strict server was made, for the warning if it is forgotten (forgotten.ts).
  const createdAt = settings.strict ? callerFrame(createMockServer) : undefined;
  const listen = settings.listen;
  if (listen.kind === 'tcp') return start(settings, createdAt);
  assertSocketDir(listen.path);
  try {
    return await start(settings, createdAt);
  } catch (error) {
    if (!(error instanceof MockServerListenError) || error.errno !== 'EADDRINUSE') throw error;
    const stale = await staleSocket(listen.path);
    if (stale === 'live') throw error;
    // A socket file nothing listens on: a leftover of a shimkit process that is gone is removed by the sweep.
    if (stale === 'refused' && sweepLeftovers().sockets.includes(resolve(listen.path))) {
      return start(settings, createdAt);
    }
    throw new MockServerListenError(staleAdvice(listen.path, stale), listen.path, 'EADDRINUSE');
  }
}

async function start(settings: ServerSettings, createdAt?: string): Promise<MockServer> {
  const unmatched = settings.unmatched;
  const workerSettings: WorkerSettings = {
    listen: settings.listen,
    timeoutMs: settings.timeoutMs,
    bodyLimitBytes: settings.bodyLimitBytes,
    logBodyBytes: settings.logBodyBytes,
    fifoMethods: settings.fifoMethods,
    unmatched: typeof unmatched === 'function' ? 'function' : unmatched,
  };
  const token = settings.requireToken
    ? `shimkit-${randomBytes(24).toString('base64url')}`
    : undefined;
  if (token !== undefined) workerSettings.token = token;
  if (settings.unmatchedAdvice !== undefined)
    workerSettings.unmatchedAdvice = settings.unmatchedAdvice;
  const cassette = settings.cassette;
  if (cassette) workerSettings.cassette = wireCassette(cassette);
  const recording =
    cassette && cassette.mode !== 'replay' ? new CassetteRecording(cassette) : undefined;
  const mirror = new Mirror(settings.logBodyBudgetBytes);
  let ready: (value: Ready) => void = () => {};
  const listening = new Promise<Ready>((resolve) => {
    ready = resolve;
  });
  const link = new ServerLink(workerSettings, (event) => {
    if (event.type === 'listening' || event.type === 'listen-error') ready(event);
    else if (event.type === 'recorded') recording?.add(event.n, event.interaction);
    else mirror.apply(event);
  });
  mirror.sync = () => link.sync();
  link.onFailure = () => ready({ type: 'failed', error: link.failure as ServerWorkerError });
  const release = link.ref();
  const outcome = await listening.finally(release);
  if (outcome.type !== 'listening') {
    await link.stop();
    if (outcome.type === 'failed') throw outcome.error;
    throw new MockServerListenError(outcome.message, outcome.address, outcome.errno);
  }
  const socketPath = outcome.socketPath;
  if (settings.listen.kind === 'tcp') warnIfExposed(settings.listen.host, outcome.url);
  let cleanup = () => {};
  if (socketPath !== undefined) {
    const unrecord = recordSocket(socketPath);
    const forgetExit = onProcessExit(() => unlinkSocket(socketPath));
    cleanup = () => {
      unlinkSocket(socketPath);
      unrecord();
      forgetExit();
    };
  }
  const onDispose = () => {
    try {
      cleanup();
    } finally {
      recording?.write();
    }
  };
  const replay = cassette?.replay;
  return new MockServer({
    settings,
    link,
    mirror,
    url: outcome.url,
    socketPath,
    token,
    onDispose,
    replay,
    createdAt,
  });
}

/** Refuse a socket path whose dir is missing or not a dir (Node 20 reports EACCES for it, misleadingly). */
function assertSocketDir(path: string): void {
  const dir = dirname(path);
  let stat: Stats;
  try {
    stat = statSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') return; // listen() says what it is
    throw new MockServerListenError(
      `createMockServer() cannot listen on ${path}: its dir ${dir} does not exist. Create it first (mkdirSync(dir, { recursive: true })), or use a path in a dir made with mkdtemp.`,
      path,
      'ENOENT',
    );
  }
  if (!stat.isDirectory()) {
    throw new MockServerListenError(
      `createMockServer() cannot listen on ${path}: ${dir} is not a dir. Use a path in a dir made with mkdtemp.`,
      path,
      'ENOTDIR',
    );
  }
}

/** What is at a socket path that was in use: a live socket, one nothing listens on, or a file that is no socket. */
function staleSocket(path: string): Promise<'live' | 'refused' | 'not-socket'> {
  try {
    if (!lstatSync(path).isSocket()) return Promise.resolve('not-socket');
  } catch {
    return Promise.resolve('live'); // gone meanwhile: the listen error stands as it was
  }
  return new Promise((done) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      done('live');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.destroy();
      done(error.code === 'ECONNREFUSED' ? 'refused' : 'live');
    });
  });
}

function staleAdvice(path: string, stale: 'refused' | 'not-socket'): string {
  if (stale === 'not-socket') {
    return `createMockServer() cannot listen on ${path}: a file that is not a socket is there. Remove it, or use a path of this test's own (in a dir made with mkdtemp).`;
  }
  return `createMockServer() cannot listen on ${path}: a stale socket file is there (nothing listens on it: connecting is refused), left by a process that was killed before it could remove it, and not one the leftover registry knows as shimkit's. Remove the file (rm ${path}) and try again, or use a path of this test's own (in a dir made with mkdtemp); \`shimkit clean\` removes the sockets shimkit's own killed processes left.`;
}

/** Remove the socket file if it is still there (a worker that was terminated leaves it). */
function unlinkSocket(path: string): void {
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
  } catch {
    // gone already
  }
}
