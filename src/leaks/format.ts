import type { LeakedProcess, ProcessLink } from './scan.js';

/** Longest argv text shown per process or parent. */
const MAX_ARGV_CHARS = 80;

/**
 * One readable line per leaked process: itself, then its parents nearest
 * first, e.g. `sleep 600 (pid 4242) ← sh -c (sleep 600 &) & (pid 4240) ← this test process (pid 4100)`,
 * and its cwd.
 */
export function formatLeakedProcess(p: LeakedProcess, self: number = process.pid): string {
  const links = [
    `${argvText(p.argv)} (pid ${p.pid})`,
    ...p.parents.map((link) => linkText(link, self)),
  ];
  return `${links.join(' ← ')}${p.cwd === undefined ? '' : `  [cwd ${p.cwd}]`}`;
}

function linkText(link: ProcessLink, self: number): string {
  if (link.pid === self) return `this test process (pid ${link.pid})`;
  if (link.pid === 1) return `init (pid 1): its parent is gone`;
  const mock = mockOfRunner(link.argv);
  if (mock !== undefined) return `mock \`${mock}\` passthrough (pid ${link.pid})`;
  return `${argvText(link.argv)} (pid ${link.pid})`;
}

/**
 * The mock's name when `argv` is a mock binary's runner (what the shim
 * execs: node [flags] …/runner.cjs [resumed] <state dir>/<name>.<hash> args…),
 * so a chain names the mock instead of Node's command line.
 */
export function mockOfRunner(argv: readonly string[]): string | undefined {
  const at = argv.findIndex((arg) => /[\\/]runner\.c?js$/.test(arg));
  if (at === -1) return undefined;
  for (const arg of argv.slice(at + 1, at + 3)) {
    const match = /[\\/]state[\\/]([^\\/]+)\.[0-9a-f]+$/.exec(arg);
    if (match) return match[1];
  }
  return undefined;
}

function argvText(argv: readonly string[]): string {
  if (argv.length === 0) return '?';
  const text = argv
    .map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : JSON.stringify(arg)))
    .join(' ');
  return text.length > MAX_ARGV_CHARS ? `${text.slice(0, MAX_ARGV_CHARS - 1)}…` : text;
}
