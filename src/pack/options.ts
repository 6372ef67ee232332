import { resolve } from 'node:path';
import { describeValue, oneOf } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { checkMs, checkOptionKeys, isDir, optionError } from '../internal/options.js';
import { TestSandbox } from '../process/sandbox.js';

/** What a bin run must give; every field given is checked. */
export interface BinExpect {
  /**
   * The exit code.
   * @default 0
   */
  exitCode?: number;
  /** stdout contains this text, or matches this pattern. */
  stdout?: string | RegExp;
  /** stderr contains this text, or matches this pattern. */
  stderr?: string | RegExp;
}

/** One bin of the installed package to run, by its name in `node_modules/.bin`. */
export interface BinRun {
  /** The bin's name, as in the package's `bin` field. */
  bin: string;
  /** @default [] */
  args?: readonly string[];
  /** @default { exitCode: 0 } */
  expect?: BinExpect;
  /** Written to its stdin, which is then closed. */
  input?: string;
  /**
   * Deadline for this run.
   * @default 30000
   */
  timeoutMs?: number;
}

/** Which entry points to load; `'all'` is every one. */
export interface ImportChecks {
  /**
   * `import()` each `exports` subpath in an ES module.
   * @default true
   */
  import?: boolean;
  /**
   * `require()` each in a CommonJS module.
   * @default true
   */
  require?: boolean;
  /**
   * `tsc --noEmit` of a file that imports each, under `moduleResolution`
   * node16 (as ESM and as CommonJS) and bundler, when the package has types
   * and TypeScript is installed in the package dir; and, with or without
   * TypeScript, a `types files` check that every types file package.json
   * declares (`types`, `typings`, `exports` `types` conditions) is packed.
   * @default true
   */
  types?: boolean;
  /**
   * Only these subpaths (`'.'`, `'./vitest'`), not every one in `exports`.
   * @default every subpath
   */
  subpaths?: readonly string[];
  /**
   * Subpaths whose types are checked but which are not loaded: entry points
   * that load only inside the runner they are made for (a vitest plugin
   * imports vitest's runner state). Each gets a skipped line.
   * @default []
   * @example
   * imports: { typesOnly: ['./vitest'] }
   */
  typesOnly?: readonly string[];
  /**
   * Subpaths that are ES modules only by design (a vitest plugin, as vitest
   * is): they are neither `require()`d nor type-checked as CommonJS, and
   * each gets a note, while the rest are still checked under both.
   * @default []
   * @example
   * imports: { esmOnly: ['./vitest'] }
   */
  esmOnly?: readonly string[];
}

/** Options of `verifyPackedInstall()`. */
export interface PackedInstallOptions {
  /**
   * The package to pack: a dir with a `package.json`.
   * @default process.cwd()
   */
  packageDir?: string;
  /**
   * Bins to run after the install, each through `node_modules/.bin`.
   * Every other declared bin is checked without being run (`bin NAME (not
   * run)`: its file is packed, has a working shebang and is executable).
   * @default []
   * @example
   * run: [{ bin: 'semver', args: ['1.2.3', '-r', '^1'], expect: { stdout: '1.2.3' } }]
   */
  run?: readonly BinRun[];
  /**
   * Which entry points to load: `'all'` (every `exports` subpath under
   * `import()` and `require()`, and its types), `'none'`, or a choice.
   * @default 'all'
   * @example
   * imports: { require: false } // an ESM-only package
   */
  imports?: 'all' | 'none' | ImportChecks;
  /**
   * Packages to install beside it in the check project, as a user's project
   * has them: the optional peers some entry points need (`{ vitest: '^4' }`).
   * Offline, their versions come from the package's lockfile.
   * @default {}
   * @example
   * peers: { vitest: '^4.1.0' } // shimkit/vitest imports vitest
   */
  peers?: Readonly<Record<string, string>>;
  /**
   * CommonJS code run (through `node --require`) before the entry points are
   * loaded, in both the `import` and the `require` process: the globals an
   * entry expects from the runner it is made for.
   * @example
   * preload: 'globalThis.expect = { extend() {} }' // shimkit/jest extends jest's expect
   */
  preload?: string;
  /**
   * The sandbox to install in: the project dir, npm's cache and config are
   * made in a fresh dir inside it, and npm and the bins run with its env.
   * Without it, one is made and removed at the end.
   */
  sandbox?: TestSandbox;
  /**
   * Install only from the host's npm cache (`npm install --offline`), with
   * the dependency versions of the package's own `package-lock.json`. The
   * cache is copied into the sandbox (its index copied, its content linked),
   * so the host cache is never written.
   * @default false
   */
  offline?: boolean;
  /**
   * The registry to install dependencies from.
   * @default the registry the host's npm uses (`npm config get registry` in the package dir)
   */
  registry?: string;
  /**
   * More npm config for the install, written to its own user config: a
   * proxy, a CA file, a token for a private registry. The host's `~/.npmrc`
   * is never read.
   * @default {}
   * @example
   * npmConfig: { 'https-proxy': 'http://proxy.internal:3128' }
   */
  npmConfig?: Readonly<Record<string, string>>;
  /**
   * Deadline for each of `npm pack`, `npm install` and `tsc`.
   * @default 300000
   */
  timeoutMs?: number;
}

export interface ResolvedBinRun {
  bin: string;
  args: string[];
  expect: { exitCode: number; stdout?: string | RegExp; stderr?: string | RegExp };
  input: string | undefined;
  timeoutMs: number;
}

export interface ResolvedPackOptions {
  packageDir: string;
  run: ResolvedBinRun[];
  imports: {
    import: boolean;
    require: boolean;
    types: boolean;
    subpaths: string[] | undefined;
    typesOnly: string[];
    esmOnly: string[];
  };
  peers: Record<string, string>;
  preload: string | undefined;
  sandbox: TestSandbox | undefined;
  offline: boolean;
  registry: string | undefined;
  npmConfig: Record<string, string>;
  timeoutMs: number;
}

const WHERE = 'verifyPackedInstall()';
const KEYS = [
  'packageDir',
  'run',
  'imports',
  'peers',
  'preload',
  'sandbox',
  'offline',
  'registry',
  'npmConfig',
  'timeoutMs',
];
const RUN_KEYS = ['bin', 'args', 'expect', 'input', 'timeoutMs'];
const EXPECT_KEYS = ['exitCode', 'stdout', 'stderr'];
const IMPORT_KEYS = ['import', 'require', 'types', 'subpaths', 'typesOnly', 'esmOnly'];

/** Check the options at once (not when first used), and fill in the defaults. */
export function resolvePackOptions(
  options: PackedInstallOptions | undefined,
  cwd = process.cwd(),
): ResolvedPackOptions {
  const o = checkOptionKeys(options, KEYS, WHERE);
  if (o.packageDir !== undefined && (typeof o.packageDir !== 'string' || o.packageDir === '')) {
    throw optionError(WHERE, 'packageDir', 'a dir path', o.packageDir);
  }
  const packageDir = resolve(cwd, o.packageDir ?? '.');
  if (!isDir(packageDir)) {
    throw new InvalidOptionError(
      `The \`packageDir\` of ${WHERE}, ${JSON.stringify(packageDir)}, is not a dir. Pass the dir that holds the package.json to pack.`,
    );
  }
  if (o.sandbox !== undefined && !(o.sandbox instanceof TestSandbox)) {
    throw optionError(WHERE, 'sandbox', 'a TestSandbox (createSandbox())', o.sandbox);
  }
  for (const key of ['offline'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'boolean') {
      throw optionError(WHERE, key, 'true or false', o[key]);
    }
  }
  if (o.registry !== undefined && !isRegistryUrl(o.registry)) {
    throw optionError(WHERE, 'registry', 'an http(s) URL', o.registry);
  }
  if (o.preload !== undefined && (typeof o.preload !== 'string' || o.preload.includes('\0'))) {
    throw optionError(WHERE, 'preload', 'a string of CommonJS code', o.preload);
  }
  return {
    packageDir,
    run: resolveRuns(o.run),
    imports: resolveImports(o.imports),
    peers: resolvePeers(o.peers),
    preload: o.preload,
    sandbox: o.sandbox,
    offline: o.offline ?? false,
    registry: o.registry,
    npmConfig: resolveNpmConfig(o.npmConfig),
    timeoutMs: checkMs(WHERE, 'timeoutMs', o.timeoutMs, 300_000, 1),
  };
}

function isRegistryUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

function resolveRuns(runs: unknown): ResolvedBinRun[] {
  if (runs === undefined) return [];
  if (!Array.isArray(runs)) throw optionError(WHERE, 'run', 'an array of { bin, args }', runs);
  return runs.map((entry, i) => {
    const where = `${WHERE} (run[${i}])`;
    const r = checkOptionKeys(entry as BinRun, RUN_KEYS, where);
    if (typeof r.bin !== 'string' || !/^[^\s/\\]+$/.test(r.bin)) {
      throw optionError(where, 'bin', 'a bin name (no spaces or slashes)', r.bin);
    }
    if (
      r.args !== undefined &&
      (!Array.isArray(r.args) || !r.args.every((a) => typeof a === 'string' && !a.includes('\0')))
    ) {
      throw optionError(where, 'args', 'an array of strings', r.args);
    }
    if (r.input !== undefined && typeof r.input !== 'string') {
      throw optionError(where, 'input', 'a string', r.input);
    }
    const e = checkOptionKeys(r.expect, EXPECT_KEYS, `${where}.expect`);
    if (e.exitCode !== undefined && !(Number.isInteger(e.exitCode) && e.exitCode >= 0)) {
      throw optionError(`${where}.expect`, 'exitCode', 'an integer from 0', e.exitCode);
    }
    for (const key of ['stdout', 'stderr'] as const) {
      const value = e[key];
      if (value !== undefined && typeof value !== 'string' && !(value instanceof RegExp)) {
        throw optionError(`${where}.expect`, key, 'a string or a RegExp', value);
      }
    }
    return {
      bin: r.bin,
      args: [...(r.args ?? [])],
      expect: { exitCode: e.exitCode ?? 0, stdout: e.stdout, stderr: e.stderr },
      input: r.input,
      timeoutMs: checkMs(where, 'timeoutMs', r.timeoutMs, 30_000, 1),
    };
  });
}

function resolveImports(imports: unknown): ResolvedPackOptions['imports'] {
  if (imports === undefined || imports === 'all') {
    return {
      import: true,
      require: true,
      types: true,
      subpaths: undefined,
      typesOnly: [],
      esmOnly: [],
    };
  }
  if (imports === 'none')
    return {
      import: false,
      require: false,
      types: false,
      subpaths: [],
      typesOnly: [],
      esmOnly: [],
    };
  if (typeof imports !== 'object' || imports === null || Array.isArray(imports)) {
    throw optionError(
      WHERE,
      'imports',
      `${oneOf(['all', 'none'])} or { import, require, types, subpaths, typesOnly, esmOnly }`,
      imports,
    );
  }
  const i = checkOptionKeys(imports as ImportChecks, IMPORT_KEYS, `${WHERE} (imports)`);
  for (const key of ['import', 'require', 'types'] as const) {
    if (i[key] !== undefined && typeof i[key] !== 'boolean') {
      throw optionError(`${WHERE} (imports)`, key, 'true or false', i[key]);
    }
  }
  for (const key of ['subpaths', 'typesOnly', 'esmOnly'] as const) {
    const list = i[key];
    if (
      list !== undefined &&
      (!Array.isArray(list) ||
        !list.every((s) => typeof s === 'string' && (s === '.' || s.startsWith('./'))))
    ) {
      throw optionError(
        `${WHERE} (imports)`,
        key,
        'an array of subpaths such as "." or "./vitest"',
        list,
      );
    }
  }
  return {
    import: i.import ?? true,
    require: i.require ?? true,
    types: i.types ?? true,
    subpaths: i.subpaths ? [...i.subpaths] : undefined,
    typesOnly: [...(i.typesOnly ?? [])],
    esmOnly: [...(i.esmOnly ?? [])],
  };
}

/** An option that maps names to strings, each entry checked by `valid`. */
function stringRecord(
  option: string,
  expected: string,
  value: unknown,
  valid: (key: string, entry: unknown) => boolean,
  each: string,
): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw optionError(WHERE, option, expected, value);
  }
  const out: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (!valid(key, entry)) {
      throw new InvalidOptionError(
        `Expected each entry of the \`${option}\` option of ${WHERE} to be ${each}, got ${JSON.stringify(key)}: ${describeValue(entry)}.`,
      );
    }
    out[key] = entry as string;
  }
  return out;
}

function resolveNpmConfig(config: unknown): Record<string, string> {
  return stringRecord(
    'npmConfig',
    'an object of npm config keys and string values',
    config,
    (key, value) =>
      /^[^\s=\n\r]+$/.test(key) && typeof value === 'string' && !/[\n\r\0]/.test(value),
    'a key without spaces or "=" and a one-line string',
  );
}

function resolvePeers(peers: unknown): Record<string, string> {
  return stringRecord(
    'peers',
    'an object of package names and version ranges',
    peers,
    (name, range) =>
      /^(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(name) &&
      typeof range === 'string' &&
      range !== '',
    'a package name and a version range',
  );
}
