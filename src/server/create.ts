import { lstatSync, unlinkSync } from 'node:fs';
import { onProcessExit } from '../internal/exit-cleanup.js';
import { recordSocket } from '../internal/leftovers/registry.js';
import { MockServerListenError, type ServerWorkerError } from './errors.js';
import { ServerLink } from './link.js';
import { Mirror } from './mirror.js';
import { MockServer } from './mock-server.js';
import { type MockServerOptions, resolveServerOptions } from './options.js';
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
  const unmatched = settings.unmatched;
  const workerSettings: WorkerSettings = {
    listen: settings.listen,
    timeoutMs: settings.timeoutMs,
    bodyLimitBytes: settings.bodyLimitBytes,
    logBodyBytes: settings.logBodyBytes,
    unmatched: typeof unmatched === 'function' ? 'function' : unmatched,
  };
  const mirror = new Mirror();
  let ready: (value: Ready) => void = () => {};
  const listening = new Promise<Ready>((resolve) => {
    ready = resolve;
  });
  const link = new ServerLink(workerSettings, (event) => {
    if (event.type === 'listening' || event.type === 'listen-error') ready(event);
    else mirror.apply(event);
  });
  link.onFailure = () => ready({ type: 'failed', error: link.failure as ServerWorkerError });
  const release = link.ref();
  const outcome = await listening.finally(release);
  if (outcome.type !== 'listening') {
    await link.stop();
    if (outcome.type === 'failed') throw outcome.error;
    throw new MockServerListenError(outcome.message, outcome.address, outcome.errno);
  }
  const socketPath = outcome.socketPath;
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
  return new MockServer({
    settings,
    link,
    mirror,
    url: outcome.url,
    socketPath,
    onDispose: cleanup,
  });
}

/** Remove the socket file if it is still there (a worker that was terminated leaves it). */
function unlinkSocket(path: string): void {
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
  } catch {
    // gone already
  }
}
