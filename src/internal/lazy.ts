import { createRequire } from 'node:module';

/**
 * Modules loaded on first use rather than at import. Most processes that load
 * part of the core never spawn or make a temp dir (each `shimkit enqueue`,
 * `calls` and `verify` is one), and loading `node:child_process` or `tmp`
 * costs several milliseconds of every such command's start
 * (bench: cli.enqueueMs).
 */
const require = createRequire(import.meta.url);

export const childProcess = (): typeof import('node:child_process') =>
  require('node:child_process');

export const tmpPackage = (): typeof import('tmp') => require('tmp');
