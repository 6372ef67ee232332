import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { RunResult } from '../process/run.js';
import type { TestSandbox } from '../process/sandbox.js';
import { seedCache } from './cache.js';
import { exec } from './exec.js';
import { checkProjectLock, type Manifest, pinTarballs } from './lockfile.js';
import { type NpmHome, type NpmLocation, npmFlags, npmrcText } from './npm.js';

/** The name of the project the package is installed into. */
export const PROJECT_NAME = 'shimkit-packed-install-check';

/**
 * The host npm settings an install keeps: where the registry is and how to
 * reach it (its CA file, TLS strictness and proxies), and nothing that
 * changes what gets installed or how.
 */
export const NETWORK_KEYS = ['cafile', 'strict-ssl', 'proxy', 'https-proxy', 'noproxy'] as const;

/** The host env vars an install keeps, for the same reason: trust and proxies. */
export const NETWORK_ENV = [
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
] as const;

export interface HostNpm {
  registry: string | undefined;
  cache: string | undefined;
  /** The host's `cafile`, `strict-ssl` and proxy settings that are set. */
  network: Record<string, string>;
}

/**
 * What the host's npm is set to use, asked in the package dir with the
 * host's env: its registry and how it reaches it (kept, so dependencies
 * install where they do for the developer) and, for an offline install,
 * its cache.
 */
export async function hostNpm(
  npm: NpmLocation,
  packageDir: string,
  scratch: string,
  offline: boolean,
  timeoutMs: number,
): Promise<HostNpm> {
  // No log file and no update check. npm makes its cache dir when it starts:
  // unless its path is wanted (offline), point it into the sandbox.
  const quiet = ['--logs-max=0', '--logs-dir', join(scratch, 'logs'), '--no-update-notifier'];
  if (!offline) quiet.push('--cache', join(scratch, 'cache'));
  const keys = ['registry', ...(offline ? ['cache'] : []), ...NETWORK_KEYS];
  const r = await exec(npm.node, [npm.cli, 'config', 'get', ...keys, ...quiet], {
    cwd: packageDir,
    timeoutMs,
  });
  const value = (key: string) => {
    const v = new RegExp(`^${key}=(.*)$`, 'm').exec(r.stdout)?.[1]?.trim();
    return v === undefined || v === '' || v === 'null' || v === 'undefined' ? undefined : v;
  };
  const network: Record<string, string> = {};
  for (const key of NETWORK_KEYS) {
    const v = value(key);
    if (v !== undefined) network[key] = v;
  }
  return { registry: value('registry'), cache: offline ? value('cache') : undefined, network };
}

/** The host's values of `NETWORK_ENV`. */
export function networkEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of NETWORK_ENV) {
    const v = env[key];
    if (v) out[key] = v;
  }
  return out;
}

export interface InstallInput {
  npm: NpmLocation;
  home: NpmHome;
  sandbox: TestSandbox;
  projectDir: string;
  tarball: string;
  /** The package.json of the package dir, with the name and version npm pack printed. */
  manifest: Manifest;
  packageDir: string;
  offline: boolean;
  registry: string | undefined;
  hostCache: string | undefined;
  /** Host settings for reaching the registry (`NETWORK_KEYS`), under `npmConfig`. */
  network: Record<string, string>;
  npmConfig: Record<string, string>;
  /** Installed beside it (the `peers` option). */
  peers: Record<string, string>;
  timeoutMs: number;
}

export interface Installed {
  result: RunResult;
  /** Whether the package's own lockfile pinned the dependencies (offline only). */
  locked: boolean;
  /** Content files linked from the host cache (offline only). */
  seeded: number;
  /** Tarballs the lock pins by digest (offline only): 0 for a package without dependencies. */
  pinned: number | undefined;
}

/**
 * `npm install` of the tarball into a fresh project in the sandbox, with
 * the sandbox's HOME and env, npm's own cache and config files, and no
 * audit, fund or update check.
 */
export async function install(input: InstallInput): Promise<Installed> {
  const { home, projectDir } = input;
  mkdirSync(projectDir, { recursive: true });
  mkdirSync(join(home.globalconfig, '..'), { recursive: true });
  writeFileSync(home.globalconfig, '');
  writeFileSync(
    home.userconfig,
    npmrcText(input.registry, { ...input.network, ...input.npmConfig }),
  );
  const spec = `file:../tarball/${basename(input.tarball)}`;
  const name = input.manifest.name as string;
  writeFileSync(
    join(projectDir, 'package.json'),
    `${JSON.stringify({ name: PROJECT_NAME, version: '0.0.0', private: true, dependencies: { ...input.peers, [name]: spec } }, null, 2)}\n`,
  );
  let seeded = 0;
  let locked = false;
  let pinned: number | undefined;
  if (input.offline) {
    // No lockfile is an empty one: a package without dependencies needs none.
    const lock = readLock(input.packageDir) ?? { packages: {} };
    const projectLock = checkProjectLock(lock, input.manifest, PROJECT_NAME, spec, input.peers);
    const digests =
      projectLock && input.registry ? pinTarballs(projectLock, input.registry) : undefined;
    if (projectLock) {
      writeFileSync(
        join(projectDir, 'package-lock.json'),
        `${JSON.stringify(projectLock, null, 2)}\n`,
      );
      locked = true;
    }
    pinned = digests?.length;
    if (input.hostCache) {
      seeded = seedCache(input.hostCache, home.cache, digests);
    }
  }
  const result = await exec(
    input.npm.node,
    [input.npm.cli, 'install', ...npmFlags(home), ...(input.offline ? ['--offline'] : [])],
    { cwd: projectDir, sandbox: input.sandbox, env: networkEnv(), timeoutMs: input.timeoutMs },
  );
  return { result, locked, seeded, pinned };
}

function readLock(packageDir: string): unknown {
  for (const file of ['npm-shrinkwrap.json', 'package-lock.json']) {
    try {
      return JSON.parse(readFileSync(join(packageDir, file), 'utf8'));
    } catch {
      // next
    }
  }
  return undefined;
}
