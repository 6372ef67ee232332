import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Env } from '../internal/path-env.js';
import type { TestSandbox } from '../process/sandbox.js';
import { diagnoseLoad, type PackageFacts } from './diagnose.js';
import { requireEsmWarning } from './engines.js';
import type { EntryPoint } from './entries.js';
import { ending, exec } from './exec.js';
import { type Cleaner, type PackCheck, tail } from './report.js';

/**
 * Load every entry point the way a user's code does: `import()` in an ES
 * module (`.mjs`), `require()` in a CommonJS one (`.cjs`), in the check
 * project, with the sandbox's env. One Node process per mode loads them in
 * turn and writes a line before and after each, so an entry that hangs or
 * exits the process is named.
 */

const SCRIPT = {
  import: `import { appendFileSync, readFileSync } from 'node:fs';
const [list, out] = process.argv.slice(2);
for (const specifier of JSON.parse(readFileSync(list, 'utf8'))) {
  appendFileSync(out, JSON.stringify({ specifier, started: true }) + '\\n');
  const started = performance.now();
  try {
    const m = await import(specifier);
    appendFileSync(out, JSON.stringify({ specifier, ok: true, exports: Object.keys(m).length, ms: performance.now() - started }) + '\\n');
  } catch (error) {
    appendFileSync(out, JSON.stringify({ specifier, ok: false, code: error?.code, message: String(error?.stack ?? error), ms: performance.now() - started }) + '\\n');
  }
}
process.exit(0);
`,
  require: `'use strict';
const { appendFileSync, readFileSync } = require('node:fs');
const [list, out] = process.argv.slice(2);
for (const specifier of JSON.parse(readFileSync(list, 'utf8'))) {
  appendFileSync(out, JSON.stringify({ specifier, started: true }) + '\\n');
  const started = performance.now();
  try {
    const m = require(specifier);
    appendFileSync(out, JSON.stringify({ specifier, ok: true, exports: m == null ? 0 : Object.keys(m).length, esm: Object.prototype.toString.call(m) === '[object Module]', ms: performance.now() - started }) + '\\n');
  } catch (error) {
    appendFileSync(out, JSON.stringify({ specifier, ok: false, code: error && error.code, message: String((error && error.stack) || error), ms: performance.now() - started }) + '\\n');
  }
}
process.exit(0);
`,
};

interface Line {
  specifier: string;
  started?: boolean;
  ok?: boolean;
  code?: string;
  message?: string;
  /** require() gave a module namespace: it loaded an ES module. */
  esm?: boolean;
  ms?: number;
}

export interface LoadInput {
  mode: 'import' | 'require';
  entries: readonly EntryPoint[];
  projectDir: string;
  sandbox: TestSandbox;
  facts: PackageFacts;
  clean: Cleaner;
  timeoutMs: number;
  /** CommonJS code run first (`node --require`). */
  preload?: string | undefined;
  /** On top of the sandbox's env: the hermetic preload (see guard.ts). */
  env?: Env;
}

export async function loadEntries(input: LoadInput): Promise<PackCheck[]> {
  const { mode, projectDir, clean } = input;
  // JSON is required (an import of it needs an import attribute no user writes by default).
  const entries = input.entries.filter((e) => mode === 'require' || e.kind === 'js');
  if (entries.length === 0) return [];
  const ext = mode === 'import' ? 'mjs' : 'cjs';
  const script = join(projectDir, `shimkit-check-${mode}.${ext}`);
  const list = join(projectDir, `shimkit-check-${mode}.json`);
  const out = join(projectDir, `shimkit-check-${mode}.jsonl`);
  writeFileSync(script, SCRIPT[mode]);
  writeFileSync(list, JSON.stringify(entries.map((e) => e.specifier)));
  writeFileSync(out, '');
  const preload = join(projectDir, 'shimkit-check-preload.cjs');
  if (input.preload !== undefined) writeFileSync(preload, input.preload);
  const args =
    input.preload === undefined ? [script, list, out] : ['--require', preload, script, list, out];
  const r = await exec(process.execPath, args, {
    cwd: projectDir,
    sandbox: input.sandbox,
    env: input.env,
    timeoutMs: input.timeoutMs,
  });
  const lines = readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
  return entries.map((entry) => {
    const name = `${mode} ${entry.specifier}`;
    const done = lines.find((l) => l.specifier === entry.specifier && l.ok !== undefined);
    const base = {
      kind: mode,
      name,
      command: clean(
        `node ${mode === 'import' ? `-e "await import('${entry.specifier}')"` : `-e "require('${entry.specifier}')"`}`,
      ),
    } as const;
    if (done?.ok) {
      const warning = done.esm
        ? requireEsmWarning(
            entry.specifier,
            (input.facts.manifest as { engines?: { node?: unknown } }).engines?.node,
          )
        : undefined;
      return { ...base, ok: true, ...(warning ? { warning } : {}), ms: Math.round(done.ms ?? 0) };
    }
    if (done) {
      const diagnosis = diagnoseLoad(
        done.message ?? '',
        done.code,
        entry.subpath,
        mode,
        input.facts,
      );
      const first = (done.message ?? '').split('\n')[0] ?? '';
      return {
        ...base,
        ok: false,
        problem: `${mode === 'import' ? `import('${entry.specifier}')` : `require('${entry.specifier}')`} threw ${done.code ? `${done.code}: ` : ''}${clean(first.replace(/^\w*Error(?: \[\w+\])?: /, ''))}`,
        ...diagnosis,
        stderr: tail(clean(done.message ?? '')),
        ms: Math.round(done.ms ?? 0),
      };
    }
    const started = lines.some((l) => l.specifier === entry.specifier && l.started);
    return {
      ...base,
      ok: false,
      problem: started
        ? `the process loading it ${ending(r, input.timeoutMs)} before ${mode === 'import' ? 'import()' : 'require()'} returned`
        : `not loaded: the process ${ending(r, input.timeoutMs)} on an earlier entry point`,
      exitCode: r.exitCode,
      stdout: tail(clean(r.stdout)),
      stderr: tail(clean(r.stderr)),
      ms: Math.round(r.durationMs),
    };
  });
}
