import type { LeakOrigin, LeakReport } from './sanitize.js';
import type { LeakedProcess, ProcessLink } from './scan.js';

/** Longest argv text shown per process or parent. */
const MAX_ARGV_CHARS = 80;

/**
 * One readable line per leaked process: itself, then its parents nearest
 * first, e.g. `sleep 600 (pid 4242) ← sh -c (sleep 600 &) & (pid 4240) ← this test process (pid 4100)`,
 * and its cwd. `self` (this process) is named `selfName` in the chain.
 */
export function formatLeakedProcess(
  p: LeakedProcess,
  self: number = process.pid,
  selfName = 'this test process',
): string {
  const links = [
    `${argvText(p.argv)} (pid ${p.pid})`,
    ...p.parents.map((link) => linkText(link, self, selfName)),
  ];
  return `${links.join(' ← ')}${p.cwd === undefined ? '' : `  [cwd ${p.cwd}]`}`;
}

function linkText(link: ProcessLink, self: number, selfName: string): string {
  if (link.pid === self) return `${selfName} (pid ${link.pid})`;
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

/** How many lines of a creation stack a block shows. */
const STACK_LINES = 4;
/** How many processes, objects, descriptors and files a block shows of each (the JSON report has all). */
export const SHOWN_PER_KIND = 20;

/** The first `SHOWN_PER_KIND` of `all`, and a line for the rest. */
function shownOf<T>(all: readonly T[], kind: string): { shown: readonly T[]; more: string[] } {
  if (all.length <= SHOWN_PER_KIND) return { shown: all, more: [] };
  const rest = all.length - SHOWN_PER_KIND;
  return {
    shown: all.slice(0, SHOWN_PER_KIND),
    more: [`  … and ${rest} more ${kind}, not shown (SHIMKIT_LEAKS_JSON=path writes every one)`],
  };
}

/**
 * One readable block for a report (LK-07): a line per thing left behind,
 * with who started it and where the test made it; '' when nothing was.
 */
export function formatReport(report: LeakReport, self: number = process.pid): string {
  const shown = [...report.processes, ...report.objects, ...report.fds, ...report.files];
  if (shown.length === 0) return '';
  const blamed = shown.filter((t) => t.allowed === undefined).length;
  const what = report.scope === 'file' ? 'the file scope (beforeAll, file fixtures)' : 'test';
  const verdict =
    report.failed.length > 0 ? 'failed' : report.warned.length > 0 ? 'warning' : 'allowed';
  const lines = [
    `shimkit leak sanitizer (${verdict}): ${what} ${JSON.stringify(report.label)} left ${count(blamed, 'thing')} behind${blamed < shown.length ? ` (and ${shown.length - blamed} allowed)` : ''}:`,
  ];
  const processes = shownOf(report.processes, 'processes');
  for (const p of processes.shown) {
    lines.push(`  process  ${formatLeakedProcess(p, self)}`);
    const notes: string[] = [];
    if (p.startedBy) notes.push(`started by ${originText(p.startedBy)}`);
    for (const hold of p.holds ?? []) notes.push(`holds: ${hold}`);
    if (p.killedNotAwaited)
      notes.push(`killed but not awaited: it outlived the ${report.settleMs} ms settle`);
    if (p.allowed) notes.push(`allowed: ${p.allowed}`);
    for (const note of notes) lines.push(`           ${note}`);
  }
  lines.push(...processes.more);
  const objects = shownOf(report.objects, 'objects');
  for (const o of objects.shown) {
    lines.push(
      `  ${o.kind === 'process' || o.kind === 'PTY session' ? 'process ' : 'object  '} ${originText(o)}${o.killedNotAwaited ? ' (disposed but not awaited)' : ''}`,
    );
    for (const hold of o.holds) lines.push(`           holds: ${hold}`);
    if (o.madeAt === undefined) {
      const stack = (o.stack ?? '').split('\n').slice(1, 1 + STACK_LINES);
      for (const frame of stack) lines.push(`           ${frame.trim()}`);
    }
    if (o.allowed) lines.push(`           allowed: ${o.allowed}`);
  }
  lines.push(...objects.more);
  const fds = shownOf(report.fds, 'descriptors');
  for (const fd of fds.shown) {
    lines.push(`  fd       ${fd.description}${fd.allowed ? `  (allowed: ${fd.allowed})` : ''}`);
  }
  lines.push(...fds.more);
  const files = shownOf(report.files, 'files');
  for (const f of files.shown) {
    const size = f.bytes === undefined ? '' : ` (${f.bytes} B)`;
    const inside = f.inside === undefined ? '' : ` (${count(f.inside, 'entry', 'entries')} inside)`;
    lines.push(
      `  file     ${f.kind} $TMPDIR/${f.path}${size}${inside}${f.allowed ? `  (allowed: ${f.allowed})` : ''}`,
    );
  }
  lines.push(...files.more);
  const done: string[] = [];
  if (report.killed.length > 0)
    done.push(`killed ${count(report.killed.length, 'process', 'processes')}`);
  if (report.objects.length > 0) done.push(`disposed ${count(report.objects.length, 'object')}`);
  if (report.files.length > 0) done.push("removed the test's TMPDIR");
  if (report.fds.length > 0)
    done.push('descriptors left open: not closed (the code that holds them may still use them)');
  if (report.remaining.length > 0) {
    done.push(
      `still running after SIGKILL: ${report.remaining.map((pid) => `pid ${pid}`).join(', ')}`,
    );
  }
  if (report.settledMs >= 1)
    done.push(`waited ${Math.round(report.settledMs)} ms for what was ending`);
  if (done.length > 0) lines.push(`  (${done.join('; ')})`);
  return lines.join('\n');
}

function originText(o: LeakOrigin): string {
  const name = o.kind === 'mock binary' ? `\`${o.name}\`` : o.name;
  return `${o.kind} ${name}${o.madeAt ? ` made at ${o.madeAt}` : ''}`;
}

function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
