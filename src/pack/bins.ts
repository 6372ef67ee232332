import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Env, envWithPathEntry, pathKey } from '../internal/path-env.js';
import type { TestSandbox } from '../process/sandbox.js';
import {
  binNames,
  binTarget,
  diagnoseMissingBin,
  diagnoseMissingModule,
  diagnoseShebang,
  type PackageFacts,
} from './diagnose.js';
import { ending, exec } from './exec.js';
import type { ResolvedBinRun } from './options.js';
import { type Cleaner, fromRun, type PackCheck } from './report.js';
import { readPacked } from './tarball.js';

export interface BinInput {
  run: ResolvedBinRun;
  projectDir: string;
  sandbox: TestSandbox;
  facts: PackageFacts;
  clean: Cleaner;
  /** On top of the sandbox's env: the hermetic preload (see guard.ts). */
  env?: Env;
}

/** `node_modules/.bin/NAME` (`NAME.cmd` on Windows) of the check project. */
export function binPath(projectDir: string, bin: string, platform: NodeJS.Platform): string {
  return join(projectDir, 'node_modules', '.bin', platform === 'win32' ? `${bin}.cmd` : bin);
}

const matches = (text: string, want: string | RegExp) =>
  typeof want === 'string'
    ? text.includes(want)
    : new RegExp(want.source, want.flags.replace('g', '')).test(text);

/**
 * Run one bin as a user's shell would after `npm install`: by its link in
 * `node_modules/.bin`, with that dir first on the sandbox PATH, in the check
 * project; then check its exit and output.
 */
export async function runBin(input: BinInput): Promise<PackCheck> {
  const { run, projectDir, sandbox, facts, clean } = input;
  const name = `bin ${[run.bin, ...run.args].join(' ')}`;
  const file = binPath(projectDir, run.bin, sandbox.platform);
  if (!existsSync(file)) {
    return {
      kind: 'bin',
      name,
      ok: false,
      problem: `node_modules/.bin/${run.bin} is not there after the install`,
      ...diagnoseMissingBin(run.bin, facts),
      ms: 0,
    };
  }
  const env = sandbox.env();
  const key = pathKey(env, sandbox.platform);
  const withBin = envWithPathEntry(env, join(projectDir, 'node_modules', '.bin'), sandbox.platform);
  const r = await exec(file, run.args, {
    cwd: projectDir,
    sandbox,
    env: { ...input.env, [key]: withBin[key] },
    timeoutMs: run.timeoutMs,
    input: run.input,
  });
  const want = run.expect;
  const target = binTarget(facts.manifest, run.bin, facts.name);
  const shebang =
    sandbox.platform === 'win32' || target === undefined
      ? undefined
      : diagnoseShebang(run.bin, readPacked(facts.tarball, target), target);
  const problems: string[] = [];
  if (r.timedOut || r.exitCode !== want.exitCode)
    problems.push(`${ending(r, run.timeoutMs)}, expected exit ${want.exitCode}`);
  if (want.stdout !== undefined && !matches(r.stdout, want.stdout))
    problems.push(
      `stdout does not ${typeof want.stdout === 'string' ? `contain ${JSON.stringify(want.stdout)}` : `match ${want.stdout}`}`,
    );
  if (want.stderr !== undefined && !matches(r.stderr, want.stderr))
    problems.push(
      `stderr does not ${typeof want.stderr === 'string' ? `contain ${JSON.stringify(want.stderr)}` : `match ${want.stderr}`}`,
    );
  if (problems.length === 0 && !shebang) return fromRun('bin', name, r, clean);
  const diagnosis = shebang ?? diagnoseMissingModule(r.stderr, facts);
  return fromRun('bin', name, r, clean, {
    problem:
      problems.length > 0
        ? `${run.bin} ${problems.join('; ')}`
        : `${run.bin} ran, but will not on every system`,
    ...diagnosis,
  });
}

/**
 * Check the declared bins that `run` does not name, without running them:
 * each one's file is in the tarball, starts with a shebang that works on
 * every system, and is linked into `node_modules/.bin` executable.
 */
export function checkDeclaredBins(input: {
  ran: ReadonlySet<string>;
  projectDir: string;
  platform: NodeJS.Platform;
  facts: PackageFacts;
}): PackCheck[] {
  const { facts, projectDir, platform } = input;
  return binNames(facts.manifest, facts.name)
    .filter((bin) => !input.ran.has(bin))
    .map((bin): PackCheck => {
      const name = `bin ${bin} (not run)`;
      const target = binTarget(facts.manifest, bin, facts.name);
      const file = binPath(projectDir, bin, platform);
      if (target === undefined || !facts.files.has(target) || !existsSync(file)) {
        return {
          kind: 'bin',
          name,
          ok: false,
          problem: `node_modules/.bin/${bin} is not there after the install`,
          ...diagnoseMissingBin(bin, facts),
          ms: 0,
        };
      }
      if (platform !== 'win32') {
        const shebang = diagnoseShebang(bin, readPacked(facts.tarball, target), target);
        if (shebang) {
          return {
            kind: 'bin',
            name,
            ok: false,
            problem: `${bin} will not run on every system`,
            ...shebang,
            ms: 0,
          };
        }
        if ((statSync(file).mode & 0o111) === 0) {
          return {
            kind: 'bin',
            name,
            ok: false,
            problem: `node_modules/.bin/${bin} is not executable after the install`,
            cause: `${target}, the file of bin \`${bin}\`, has no execute permission as installed`,
            fix: 'see the install output for why npm did not make it executable',
            ms: 0,
          };
        }
      }
      return { kind: 'bin', name, ok: true, ms: 0 };
    });
}
