import type { SpawnOptions } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotBuiltError } from 'shimkit';
import { expect } from 'vitest';
import { type Exit, runCommand, testDir } from '../helpers/index.js';

/** The built `shimkit` command (npm test builds first). */
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
export const REPO = fileURLToPath(new URL('../..', import.meta.url));

export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new NotBuiltError(`${CLI} (the shimkit command)`);
}

/** Run `shimkit ARGS` to completion. */
export function shimkit(
  args: readonly string[],
  options: SpawnOptions & { input?: string | Buffer } = {},
): Promise<Exit> {
  assertBuilt();
  return runCommand(process.execPath, [CLI, ...args], options);
}

/** Run `shimkit ARGS` and expect exit 0; its stdout. */
export async function shimkitOk(
  args: readonly string[],
  options: SpawnOptions & { input?: string | Buffer } = {},
): Promise<string> {
  const r = await shimkit(args, options);
  expect(r.stderr.toString(), `shimkit ${args.join(' ')}`).toBe('');
  expect(r.code, `shimkit ${args.join(' ')}`).toBe(0);
  return r.stdout.toString();
}

/** A dir with `shimkit` in it (a link to the built command), for PATH, as an installed package gives. */
export function shimkitOnPath(): { dir: string; env: NodeJS.ProcessEnv } {
  assertBuilt();
  const dir = join(testDir(), 'bin');
  mkdirSync(dir);
  symlinkSync(CLI, join(dir, 'shimkit'));
  return { dir, env: { ...process.env, PATH: `${dir}${delimiter}${process.env.PATH ?? ''}` } };
}

/** The queue lines of a mock made by `shimkit mock` (the layout of docs: state/<name>.<id>/g1/queue.jsonl). */
export function queueLines(dir: string, name: string): Record<string, unknown>[] {
  const entry = JSON.parse(readFileSync(join(dir, 'mocks', `${name}.json`), 'utf8')) as {
    state: string;
  };
  const stateDir = join(dir, 'state', entry.state);
  const { generation } = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8'));
  return readFileSync(join(stateDir, generation, 'queue.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** CLI-01: `rounds` times, `shimkit mock git` and `shimkit mock docker` at once on one new dir: both kept. */
export async function expectConcurrentMocksBothKept(rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const d = join(testDir(), 'mocks');
    const [a, b] = await Promise.all([
      shimkit(['mock', 'git', '--dir', d]),
      shimkit(['mock', 'docker', '--dir', d]),
    ]);
    expect([a.code, b.code, a.stderr.toString(), b.stderr.toString()]).toEqual([0, 0, '', '']);
    const verify = await shimkitOk(['verify', d]);
    expect(verify).toContain('mock "docker"');
    expect(verify).toContain('mock "git"');
  }
}
