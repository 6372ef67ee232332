// What a mock binary needs from the bin dir that holds it (MockHost), and the
// one on-disk step of making a mock: its state dir, its first responses and
// its shim (makeInstance), plus enqueue's validation into the wire form.
import { join } from 'node:path';
import type { Env } from '../internal/path-env.js';
import { writeFileAtomic } from '../queue/atomic.js';
import { stateError } from '../queue/errors.js';
import { appendToQueue, createInstance, retire } from '../queue/writer.js';
import type { ResolvedOptions } from './options.js';
import { toWireResponse } from './options.js';
import { shTools } from './sh-tools.js';
import { renderShim, type ShimTarget, shimFileName } from './shim.js';
import type { MockResponse } from './types.js';

/** What a mock needs from the bin dir that holds it (see MockBinDir). */
export interface MockHost {
  /** The shim dir. */
  readonly dir: string;
  /** The temp dir holding the shim dir and every mock's state. */
  readonly root: string;
  /** The Node and runner the shim runs. */
  shimFiles(nodePath: string): { nodePath: string; runnerPath: string };
  env(base?: Env): Env;
  install(): unknown;
  uninstall(): unknown;
  dispose(): Promise<void>;
  /** The leak sanitizer names the mock that owns it (LK-02). */
  leakAs(kind: 'mock binary', name: string): void;
}

/** What a MockBinary is made from, once its state dir exists. */
export interface MockInit {
  readonly stateDir: string;
  readonly strict: boolean;
  readonly platform: NodeJS.Platform;
  /** Where record mode writes the cassette on dispose. */
  readonly recordTo: string | undefined;
}

/** The shim's fast path, when the mock's config has one (see sh-tools.ts). */
function fastPathOf(config: ResolvedOptions['config']): ShimTarget['fast'] {
  return config.sh ? { config, tools: shTools() } : undefined;
}

/**
 * Make mock `name` on disk in `bin` and return its state dir: a state dir of
 * its own that no earlier mock of this name had (MB-18), with its responses
 * (already validated); the shim appears last and whole, so it is never run
 * half-made or ahead of its state. On failure the state dir is retired and a
 * state error names the shim path.
 */
export function makeInstance(
  bin: MockHost,
  name: string,
  options: ResolvedOptions,
  instance?: string,
): string {
  const path = join(bin.dir, shimFileName(name, options.platform));
  const stateDir = createInstance(join(bin.root, 'state'), name, options.config, instance);
  try {
    if (options.responses.length > 0) {
      appendToQueue(stateDir, options.responses);
    }
    const shim = renderShim(
      {
        name,
        ...bin.shimFiles(options.nodePath),
        nodeFlags: options.nodeFlags,
        stateDir,
        shimDir: bin.dir,
        root: bin.root,
        fast: fastPathOf(options.config),
      },
      options.platform,
    );
    writeFileAtomic(path, shim, 0o700); // an exclusive, randomly named temp file renamed into place
  } catch (error) {
    retire(stateDir);
    throw stateError(error, path, 'test');
  }
  return stateDir;
}

/**
 * Validate `responses` (one or a list) as `enqueue()` on mock `name` got them
 * and append them to the queue in `stateDir`; on an invalid one nothing is
 * enqueued.
 */
export function enqueueResponses(
  stateDir: string,
  name: string,
  responses: MockResponse | readonly MockResponse[],
): void {
  const list = Array.isArray(responses) ? responses : [responses];
  const wire = list.map((response, i) =>
    toWireResponse(
      response,
      Array.isArray(responses)
        ? `response [${i}] passed to enqueue() on mock "${name}"`
        : `the response passed to enqueue() on mock "${name}"`,
    ),
  );
  if (wire.length > 0) appendToQueue(stateDir, wire);
}
