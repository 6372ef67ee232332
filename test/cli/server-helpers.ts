import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, onTestFinished, vi } from 'vitest';
import { isAlive } from '../helpers/index.js';
import { shimkit } from './helpers.js';

/**
 * A temp dir for servers: when the test finishes, every `shimkit serve`
 * whose server.json is under it (the test's, or a bats/pytest/Go file's that
 * failed before its `stop`) has its process group killed, then the dir goes.
 * One hook does both, so the kill never finds the files already gone.
 */
export function serverTestDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'shimkit-serve-')));
  onTestFinished(() => {
    for (const pid of serverPidsUnder(dir)) killGroup(pid);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

function serverPidsUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.name !== 'server.json' || !entry.isFile()) continue;
    try {
      pids.push(JSON.parse(readFileSync(join(entry.parentPath, entry.name), 'utf8')).pid);
    } catch {}
  }
  return pids;
}

/** SIGKILL the group of a `shimkit serve` still running (a pid reused since by another program is left alone). */
function killGroup(pid: number): void {
  if (!isAlive(pid)) return;
  try {
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('serve\0--dir')) return;
  } catch {}
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {}
  }
}

/** `export A=b` lines (single-quoted or bare values) as a record. */
export function parseExports(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n').filter(Boolean)) {
    const m = /^export ([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    expect(m, line).not.toBeNull();
    const raw = (m as RegExpExecArray)[2] as string;
    env[(m as RegExpExecArray)[1] as string] = raw.startsWith("'")
      ? raw.slice(1, -1).replaceAll(`'\\''`, "'")
      : raw;
  }
  return env;
}

export interface Served {
  dir: string;
  url: string;
  pid: number;
  env: Record<string, string>;
}

/**
 * `shimkit serve … --detach` and expect exit 0: its stdout. Its stderr may
 * only hold the start notice (HT-13: what it is bound to and what ends it).
 */
export async function serveOk(
  args: readonly string[],
  options: SpawnOptions = {},
): Promise<string> {
  const r = await shimkit(args, options);
  const stderr = r.stderr.toString();
  expect(stderr, `shimkit ${args.join(' ')}`).toMatch(/^shimkit serve: pid \d+ serves [^\n]+\.\n$/);
  expect(r.code, `shimkit ${args.join(' ')}: ${stderr}`).toBe(0);
  return r.stdout.toString();
}

/** `shimkit serve --dir D --detach` (killed with its group when the test ends, if still running). */
export async function serveDetached(dir: string, extra: string[] = []): Promise<Served> {
  const out = await serveOk(['serve', '--dir', dir, '--detach', ...extra]);
  const info = JSON.parse(readFileSync(join(dir, 'server.json'), 'utf8'));
  onTestFinished(() => killGroup(info.pid));
  return { dir, url: info.url, pid: info.pid, env: parseExports(out) };
}

/** Wait (at most `timeout` ms) until process `pid` is gone. */
export async function waitGone(pid: number, timeout = 10_000): Promise<void> {
  await vi.waitFor(() => expect(isAlive(pid), `pid ${pid} still runs`).toBe(false), {
    timeout,
    interval: 20,
  });
}

/** The text of an OpenAI chat-completions stream (its `choices[0].delta.content`s joined). */
export function chatText(body: string): string {
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)).choices[0]?.delta?.content ?? '')
    .join('');
}

/** Resolve with what `child` printed on stdout once `pattern` is in it (rejects if it exits first). */
export function stdoutUntil(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (pattern.test(text)) resolve(text);
    });
    child.on('close', (code) =>
      reject(new Error(`exited (${code}) before printing ${pattern}: ${text}`)),
    );
  });
}
