import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { runCommand } from './index.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/sandbox-env.mjs', import.meta.url));

/** What test/fixtures/sandbox-env.mjs reports about the sandbox it made. */
export interface SandboxReport {
  root: string;
  home: string;
  workspace: string;
  tmp: string;
  env: Record<string, string>;
}

/**
 * Make a sandbox in a separate test process whose whole env is `hostEnv`
 * (the built package, so run `npm run build` first). The sandbox is kept, in
 * `parent`: pass a `testDir()`.
 */
export async function sandboxInChild(
  hostEnv: Record<string, string>,
  parent: string,
  options: { git?: boolean } = {},
): Promise<SandboxReport> {
  const args = [FIXTURE, parent, ...(options.git ? ['git'] : [])];
  const exit = await runCommand(process.execPath, args, { env: hostEnv });
  expect(exit.code, exit.stderr.toString()).toBe(0);
  return JSON.parse(exit.stdout.toString()) as SandboxReport;
}
