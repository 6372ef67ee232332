import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { MAX_TIMER_MS } from '../internal/limits.js';
import { killTree } from '../process/tree.js';
import { FrameProxy } from '../proxy/proxy.js';
import { passthroughSettings } from '../proxy/settings.js';
import { StreamPair } from '../proxy/stream-pair.js';
import type { Claim } from '../queue/claim.js';
import type { PassthroughFaults } from '../queue/types.js';
import { label } from './diagnostics.js';
import { KILL_GRACE_MS, locateReal, type RealEnd, realSpawn } from './passthrough.js';

/**
 * `passthrough: { framing, faults }` (requirement PX-14): the real command
 * runs with its stdin and stdout piped through a frame proxy, the call's own
 * stdin and stdout on the other side; stderr is the call's. With
 * `captureBytes`, the record keeps that much of the call's stdin as the
 * caller wrote it (before any fault). Loaded on demand (runner-proxy.cjs):
 * the proxy is not in the hot path of other calls.
 */
export async function runFaulted(
  claim: Claim,
  deadline: number,
  spec: PassthroughFaults,
  captureBytes?: number,
): Promise<RealEnd> {
  const real = locateReal(claim);
  if (typeof real !== 'string') return real;
  const where = `the \`passthrough\` of ${label(claim)}`;
  let settings: ReturnType<typeof passthroughSettings>;
  try {
    settings = passthroughSettings(spec, where);
  } catch (error) {
    return { kind: 'missing', message: (error as Error).message };
  }
  const how = realSpawn(real, claim.record.argv);
  let child: ChildProcess | undefined;
  let started: Error | undefined;
  try {
    child = spawn(how.file, how.args, {
      stdio: ['pipe', 'pipe', 'inherit'],
      windowsHide: true,
      windowsVerbatimArguments: how.windowsVerbatimArguments,
    });
  } catch (error) {
    started = error as Error; // spawn throws some errors (EINVAL, a bad argument) at once
  }
  started ??= await new Promise<Error | undefined>((resolve) => {
    child?.once('spawn', () => resolve(undefined));
    child?.once('error', resolve);
  });
  if (started || !child) {
    return {
      kind: 'missing',
      message: `${label(claim)} could not start the real ${claim.config.name} at ${real}: ${started?.message}.`,
    };
  }
  const address = { kind: 'stdio' as const, path: `stdio:${real}` };
  const proxy = FrameProxy.create<string>({
    server: undefined,
    listen: address,
    upstream: address,
    ...settings,
  });
  const captured = captureBytes === undefined ? undefined : tapStdin(captureBytes);
  const callerSide = StreamPair.of(process.stdin, process.stdout);
  const commandSide = StreamPair.of(child.stdout as Readable, child.stdin as Writable);
  // A side that goes away mid-write (EPIPE) ends the exchange; the exit code says how.
  callerSide.on('error', () => {});
  commandSide.on('error', () => {});
  const connection = proxy.attach(callerSide, commandSide);
  // At the deadline its whole tree goes (a grandchild may hold the call's
  // stderr), and one it cannot kill does not hold the call for good.
  let timedOut = false;
  const ended = await new Promise<[number | null, NodeJS.Signals | null] | 'timeout'>((resolve) => {
    const timer = setTimeout(
      () => {
        timedOut = true;
        const { pid } = child;
        if (pid === undefined) return resolve('timeout');
        void killTree(pid).then(() => setTimeout(() => resolve('timeout'), KILL_GRACE_MS));
      },
      Math.min(Math.max(1, deadline - Date.now()), MAX_TIMER_MS),
    );
    child.once('close', (c, s) => {
      clearTimeout(timer);
      resolve(timedOut ? 'timeout' : [c, s]);
    });
  });
  // What the command wrote last may still be on its way to the caller.
  await new Promise<void>((resolve) => {
    if (ended === 'timeout' || process.stdout.writableLength === 0) resolve();
    else process.stdout.once('drain', () => resolve());
  });
  const { c2s, s2c, faults } = connection.stats();
  claim.record.proxy = { c2s, s2c, faults };
  if (captured) {
    const data = Buffer.concat(captured.parts, captured.kept);
    claim.record.stdinBase64 = data.toString('base64');
    if (captured.truncated) claim.record.stdinTruncated = true;
    if (!process.stdin.readableEnded) claim.record.stdinOpen = true;
  }
  if (ended === 'timeout') return { kind: 'timeout' };
  const [code, signal] = ended;
  if (signal) return { kind: 'signal', signal };
  return { kind: 'exit', code: code ?? 0 };
}

/** The first `limit` bytes of the call's stdin as they pass to the proxy (a second reader of the same chunks). */
function tapStdin(limit: number): { parts: Buffer[]; kept: number; truncated: boolean } {
  const tap = { parts: [] as Buffer[], kept: 0, truncated: false };
  process.stdin.on('data', (chunk: Buffer) => {
    const room = limit - tap.kept;
    if (chunk.length > room) tap.truncated = true;
    if (room <= 0) return;
    const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
    tap.parts.push(piece);
    tap.kept += piece.length;
  });
  return tap;
}
