import type { RunResult } from '../process/run.js';
import type { Diagnosis } from './diagnose.js';
import { TAIL_BYTES } from './exec.js';

/** The kinds of check, in the order they run. */
export type PackCheckKind = 'pack' | 'install' | 'bin' | 'import' | 'require' | 'types';

/** One check of `verifyPackedInstall()`. */
export interface PackCheck {
  kind: PackCheckKind;
  /** `bin shimkit --version`, `import shimkit/vitest`, `types node16 (require) shimkit`. */
  name: string;
  ok: boolean;
  /** Set when the check was not run, with why (`ok` is then true). */
  skipped?: string;
  /** What failed, in one line (absent when `ok`), paths cleaned as in `command`. */
  problem?: string;
  /**
   * Set on a check that passed here but fails on a Node its package claims:
   * a `require()` that loaded an ES module (Node 20.19+, 22.12+) while
   * `engines.node` admits an older Node. Not a failure: `ok` stays true.
   */
  warning?: string;
  /** Why, when it could be told, and what to change, paths cleaned as in `command`. */
  cause?: string;
  fix?: string;
  /** The command that ran, paths cleaned (`<project>`, `<sandbox>`, `<package>`). */
  command?: string;
  exitCode?: number | null;
  /** The last bytes of its output (about 8 KiB each), paths and timings cleaned. */
  stdout?: string;
  stderr?: string;
  /** How long it took. */
  ms: number;
}

/** What `verifyPackedInstall()` found. Plain data: `JSON.stringify` it as it is. */
export interface PackedInstallReport {
  /** Every check passed (or was skipped). */
  ok: boolean;
  /** From the packed package.json. */
  name: string;
  version: string;
  /** The tarball's file name, as `npm pack --json` printed it. */
  tarball: string;
  /** Its path (inside the sandbox; gone when a sandbox made for the check is removed). */
  tarballPath: string;
  /** Paths in the tarball, `/`-separated, sorted. */
  files: string[];
  /** Where it was installed: the check project dir (`node_modules/NAME` in it). */
  projectDir: string;
  packMs: number;
  installMs: number;
  offline: boolean;
  /** Every check in the order run: pack, install, each bin, each entry point, types. */
  results: PackCheck[];
  /** The checks that failed. */
  failures: PackCheck[];
  /** What was left out and why: subpaths not loaded, types not checked. */
  notes: string[];
}

/** Replaces the dirs of a run in text shown in a report, so it reads the same every run. */
export type Cleaner = (text: string) => string;

/**
 * Paths become `<project>` (the check project), `<check>` (the run's dir, with
 * the tarball and npm's home), `<sandbox>`, `<package>`, `<home>` (longest
 * first); npm's timings `<time>`.
 */
export function cleaner(paths: Record<string, string | undefined>): Cleaner {
  const pairs = Object.entries(paths)
    .filter((p): p is [string, string] => typeof p[1] === 'string' && p[1].length > 1)
    .sort((a, b) => b[1].length - a[1].length);
  return (text) => {
    let out = text;
    for (const [name, path] of pairs) out = out.split(path).join(`<${name}>`);
    return out
      .replace(/\b(in|took) \d+(?:\.\d+)?(?:ms|s|m)\b/g, '$1 <time>')
      .replace(/\d{4}-\d\d-\d\dT\d\d_\d\d_\d\d_\d+Z/g, '<date>');
  };
}

/** The last `TAIL_BYTES` of a text, cut at a line start. */
export function tail(text: string): string {
  if (Buffer.byteLength(text) <= TAIL_BYTES) return text;
  const cut = Buffer.from(text).subarray(-TAIL_BYTES).toString();
  const nl = cut.indexOf('\n');
  return `…${nl >= 0 && nl < 200 ? cut.slice(nl) : cut}`;
}

/** A check from a finished command: its command line, exit and output, cleaned. */
export function fromRun(
  kind: PackCheckKind,
  name: string,
  r: RunResult,
  clean: Cleaner,
  failure?: { problem: string } & Partial<Diagnosis>,
): PackCheck {
  return {
    kind,
    name,
    ok: failure === undefined,
    ...(failure ? withDiagnosis(failure) : {}),
    command: clean(r.command),
    exitCode: r.exitCode,
    stdout: tail(clean(r.stdout)),
    stderr: tail(clean(r.stderr)),
    ms: Math.round(r.durationMs),
  };
}

function withDiagnosis(f: { problem: string } & Partial<Diagnosis>): Partial<PackCheck> {
  return {
    problem: f.problem,
    ...(f.cause ? { cause: f.cause } : {}),
    ...(f.fix ? { fix: f.fix } : {}),
  };
}

/** A check that did not run, with why. */
export function skipped(kind: PackCheckKind, name: string, why: string): PackCheck {
  return { kind, name, ok: true, skipped: why, ms: 0 };
}

/**
 * The report as text: a line per check, then for each failure its problem,
 * cause, fix and output tail. No timings unless asked, and no absolute
 * paths, so it can be a snapshot.
 *
 * @example
 * const report = await verifyPackedInstall({ run: [{ bin: 'my-cli', args: ['--help'] }] });
 * expect(report.ok, formatPackedInstallReport(report)).toBe(true);
 */
export function formatPackedInstallReport(
  report: PackedInstallReport,
  options: { timings?: boolean } = {},
): string {
  const lines = [
    `${report.name}@${report.version} (${report.tarball}, ${report.files.length} files${report.offline ? ', offline' : ''})`,
  ];
  for (const check of report.results) {
    const mark = check.skipped !== undefined ? 'skip' : check.ok ? 'ok  ' : 'FAIL';
    const time = options.timings && check.skipped === undefined ? ` (${check.ms} ms)` : '';
    lines.push(
      `  ${mark}  ${check.name}${time}${check.skipped !== undefined ? `: ${check.skipped}` : ''}`,
    );
    if (check.warning) lines.push(`        warning: ${check.warning}`);
    if (check.ok) continue;
    lines.push(`        ${check.problem}`);
    if (check.cause) lines.push(`        cause: ${check.cause}`);
    if (check.fix) lines.push(`        fix: ${check.fix}`);
    const output = (check.stderr?.trim() || check.stdout?.trim() || '').split('\n').slice(-12);
    if (output.length > 0 && output[0] !== '') {
      lines.push(`        ${check.command ? `$ ${check.command}` : 'output'}:`);
      for (const line of output) lines.push(`          ${line}`);
    }
  }
  for (const note of report.notes) lines.push(`  note: ${note}`);
  const failed = report.failures.length;
  const warned = report.results.filter((c) => c.warning).length;
  lines.push(
    (failed === 0
      ? `${plural(report.results.filter((c) => c.skipped === undefined).length, 'check')} passed`
      : `${failed} of ${plural(report.results.length, 'check')} failed`) +
      (warned > 0 ? `, ${plural(warned, 'warning')}` : ''),
  );
  return lines.join('\n');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
