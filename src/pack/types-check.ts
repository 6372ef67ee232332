import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import type { TestSandbox } from '../process/sandbox.js';
import { diagnoseMissingModule, type PackageFacts } from './diagnose.js';
import type { EntryPoint } from './entries.js';
import { ending, exec } from './exec.js';
import { type Cleaner, type PackCheck, skipped, tail } from './report.js';

/**
 * `tsc --noEmit` of files that import each entry point, as a user's
 * TypeScript would: under `moduleResolution` node16 from an ES module
 * (`.mts`, the `import` condition) and from a CommonJS one (`.cts`,
 * `import x = require()`, the `require` condition), and under bundler. The
 * TypeScript is the package's own (resolved from its dir), so the check
 * needs nothing the package does not already have.
 */

type Mode = 'node16 (import)' | 'node16 (require)' | 'bundler';

const FILES: Record<Mode, string> = {
  'node16 (import)': 'shimkit-types.mts',
  'node16 (require)': 'shimkit-types.cts',
  bundler: 'shimkit-types.ts',
};

/** Whether the package ships types: a `types`/`typings` field or condition, or a .d.ts file. */
export function hasTypes(facts: PackageFacts): boolean {
  const m = facts.manifest as Record<string, unknown>;
  if (typeof m.types === 'string' || typeof m.typings === 'string') return true;
  if (/"(?:types|typings)"\s*:/.test(JSON.stringify(m.exports ?? null))) return true;
  return [...facts.files].some((f) => /\.d\.[cm]?ts$/.test(f));
}

/** The `tsc` of the TypeScript installed for the package dir, or undefined. */
export function findTsc(packageDir: string): { tsc: string; version: string } | undefined {
  try {
    const manifest = createRequire(join(packageDir, 'package.json')).resolve(
      'typescript/package.json',
    );
    const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
    return { tsc: join(dirname(manifest), 'bin', 'tsc'), version };
  } catch {
    return undefined;
  }
}

export interface TypesInput {
  entries: readonly EntryPoint[];
  modes: { import: boolean; require: boolean };
  /** Subpaths not checked as CommonJS (ES modules only by design). */
  esmOnly?: ReadonlySet<string>;
  projectDir: string;
  sandbox: TestSandbox;
  facts: PackageFacts;
  clean: Cleaner;
  timeoutMs: number;
}

const line = (mode: Mode, e: EntryPoint, i: number) =>
  mode === 'node16 (require)'
    ? `import m${i} = require(${JSON.stringify(e.specifier)}); export type T${i} = typeof m${i};`
    : `import * as m${i} from ${JSON.stringify(e.specifier)}; export type T${i} = typeof m${i};`;

export async function checkTypes(input: TypesInput): Promise<PackCheck[]> {
  const { facts, projectDir, clean } = input;
  const entries = input.entries.filter((e) => e.kind === 'js');
  if (entries.length === 0) return [];
  if (!hasTypes(facts)) {
    return [
      skipped(
        'types',
        'types',
        'the package has no types (no `types` field or condition, no .d.ts file)',
      ),
    ];
  }
  const ts = findTsc(facts.sourceDir);
  if (!ts) {
    return [
      skipped(
        'types',
        'types',
        `TypeScript is not installed in ${clean(facts.sourceDir)}, so types were not checked (npm install -D typescript there to check them)`,
      ),
    ];
  }
  const esmOnly = input.esmOnly ?? new Set<string>();
  const entriesOf = (mode: Mode) =>
    mode === 'node16 (require)' ? entries.filter((e) => !esmOnly.has(e.subpath)) : entries;
  const runs: Array<{ config: string; modes: Mode[]; options: object }> = [];
  const node16: Mode[] = [];
  if (input.modes.import) node16.push('node16 (import)');
  if (input.modes.require && entriesOf('node16 (require)').length > 0) {
    node16.push('node16 (require)');
  }
  if (node16.length > 0) {
    runs.push({
      config: 'shimkit-tsconfig-node16.json',
      modes: node16,
      options: { module: 'node16', moduleResolution: 'node16' },
    });
  }
  if (input.modes.import) {
    runs.push({
      config: 'shimkit-tsconfig-bundler.json',
      modes: ['bundler'],
      options: { module: 'esnext', moduleResolution: 'bundler' },
    });
  }
  // The tsc runs at once: each is about a second of one core, the loads beside them are quick.
  const checked = await Promise.all(
    runs.map(async (run) => {
      const results: PackCheck[] = [];
      for (const mode of run.modes) {
        writeFileSync(
          join(projectDir, FILES[mode]),
          `${entriesOf(mode)
            .map((e, i) => line(mode, e, i))
            .join('\n')}\n`,
        );
      }
      writeFileSync(
        join(projectDir, run.config),
        JSON.stringify({
          compilerOptions: {
            ...run.options,
            noEmit: true,
            strict: true,
            skipLibCheck: true,
            types: [],
          },
          files: run.modes.map((m) => FILES[m]),
        }),
      );
      const listed = await exec(
        process.execPath,
        [ts.tsc, '-p', run.config, '--pretty', 'false', '--listFiles'],
        {
          cwd: projectDir,
          sandbox: input.sandbox,
          timeoutMs: input.timeoutMs,
          // Every file of the program is listed: keep them all to prove none is outside.
          tailBytes: 64 * 1024 * 1024,
        },
      );
      const files = listed.stdout.split('\n').filter(isListed);
      const r = {
        ...listed,
        stdout: tail(
          listed.stdout
            .split('\n')
            .filter((l) => !isListed(l))
            .join('\n'),
        ),
      };
      const outside = outsideFiles(files, projectDir, ts.tsc);
      if (outside.length > 0) results.push(outsideCheck(outside, run.modes, facts, clean, r));
      const output = r.stdout + r.stderr;
      const errors = [
        ...output.matchAll(/^(shimkit-types\.[cm]?ts)\((\d+),\d+\): error (TS\d+): (.*)$/gm),
      ];
      const command = clean(`${r.command}`);
      for (const mode of run.modes) {
        entriesOf(mode).forEach((entry, i) => {
          const mine = errors.filter((e) => e[1] === FILES[mode] && Number(e[2]) === i + 1);
          const name = `types ${mode} ${entry.specifier}`;
          if (mine.length === 0 && (r.exitCode === 0 || errors.length > 0)) {
            results.push({ kind: 'types', name, ok: true, command, ms: Math.round(r.durationMs) });
            return;
          }
          const first = mine[0];
          results.push({
            kind: 'types',
            name,
            ok: false,
            problem: first
              ? `tsc ${ts.version}: ${first[3]} ${first[4]}`
              : `tsc ${ts.version} ${ending(r, input.timeoutMs)} without naming this file`,
            ...(first ? typesDiagnosis(first[3] as string, mode, entry) : {}),
            command,
            exitCode: r.exitCode,
            stdout: tail(clean(r.stdout)),
            stderr: tail(clean(r.stderr)),
            ms: Math.round(r.durationMs),
          });
        });
      }
      return results;
    }),
  );
  return checked.flat();
}

function typesDiagnosis(
  code: string,
  mode: Mode,
  entry: EntryPoint,
): { cause: string; fix: string } | undefined {
  const condition = mode === 'node16 (require)' ? 'require' : 'import';
  if (code === 'TS7016' || code === 'TS2307') {
    return {
      cause: `TypeScript finds no types for ${entry.specifier} under moduleResolution ${mode}`,
      fix: `add a \`types\` condition (first) to the \`${condition}\` branch of exports[${JSON.stringify(entry.subpath)}], pointing at a .d.${condition === 'require' ? 'cts' : 'mts'} or .d.ts that is in \`files\``,
    };
  }
  if (code === 'TS1479' || code === 'TS1471') {
    return {
      cause: `under ${mode}, the types of ${entry.specifier} are an ES module, so a CommonJS file cannot require them (the types say ESM, the require condition says CommonJS)`,
      fix: `give the \`require\` condition its own .d.cts types`,
    };
  }
  return undefined;
}

/** A line of `--listFiles`: an absolute path, not a diagnostic (`/x.d.ts(1,2): error …`). */
const isListed = (line: string) =>
  /^(?:[A-Za-z]:)?[\\/]\S/.test(line) && !/\(\d+,\d+\): /.test(line);

/** Files tsc read that are neither in the check project nor TypeScript's own lib files. */
function outsideFiles(files: readonly string[], projectDir: string, tsc: string): string[] {
  const lib = resolve(dirname(tsc), '..', 'lib');
  const roots = [projectDir, realpathSync(projectDir), lib, realpathSync(lib)].map((d) =>
    d.split(sep).join('/'),
  );
  return files.filter((f) => !roots.some((root) => f.replace(/\\/g, '/').startsWith(`${root}/`)));
}

/**
 * tsc found types outside the check project: its lookup walked up into a
 * `node_modules` above it, so a user's install, which lacks them, fails.
 */
function outsideCheck(
  outside: readonly string[],
  modes: readonly Mode[],
  facts: PackageFacts,
  clean: Cleaner,
  r: { command: string; exitCode: number | null; stderr: string; durationMs: number },
): PackCheck {
  const first = outside[0] as string;
  const after = first.split('/node_modules/').at(-1) ?? '';
  const parts = after.split('/');
  const name = parts[0]?.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
  const dep = name.startsWith('@types/') ? name.slice('@types/'.length).replace('__', '/') : name;
  const diagnosis =
    dep && dep !== facts.name
      ? diagnoseMissingModule(`Cannot find package '${dep}'`, facts)
      : undefined;
  return {
    kind: 'types',
    name: `types ${modes.join(', ')}: nothing outside the project`,
    ok: false,
    problem: `tsc read ${outside.length} file${outside.length === 1 ? '' : 's'} outside the check project (first: ${first}), found only in a node_modules above it`,
    ...(diagnosis ?? {
      cause: 'the types import a module the install did not put in the check project',
      fix: 'declare it in dependencies (or peerDependencies)',
    }),
    command: clean(r.command),
    exitCode: r.exitCode,
    stderr: tail(clean(r.stderr)),
    ms: Math.round(r.durationMs),
  };
}
