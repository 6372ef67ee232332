import { existsSync, statSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { targets } from './entries.js';
import type { Manifest } from './lockfile.js';

/**
 * Why a check failed and what to change, read from the error Node or npm
 * printed and the package's own manifest and file list. Each function
 * returns `undefined` when it does not recognise the failure.
 */
export interface Diagnosis {
  cause: string;
  fix: string;
}

export interface PackageFacts {
  name: string;
  /** The packed package.json (as installed). */
  manifest: Manifest & {
    bin?: unknown;
    exports?: unknown;
    type?: unknown;
    devDependencies?: Record<string, string>;
  };
  /** Where it is installed: `node_modules/NAME` of the check project. */
  installedDir: string;
  /** The package dir that was packed. */
  sourceDir: string;
  /** Paths in the tarball, `/`-separated. */
  files: ReadonlySet<string>;
  /** The tarball. */
  tarball: string;
}

/** The package a bare specifier names: `tmp` of `tmp/lib/x`, `@scope/a` of `@scope/a/b`. */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** A path inside the installed package, as a path in the tarball; else undefined. */
function inPackage(path: string, facts: PackageFacts): string | undefined {
  const rel = relative(facts.installedDir, path);
  if (rel === '' || rel.startsWith('..') || rel.includes(`node_modules${sep}`)) return undefined;
  return rel.split(sep).join('/');
}

/** A file of the package that is missing from the install: left out of `files`, or never built. */
export function missingFile(rel: string, facts: PackageFacts, what: string): Diagnosis {
  if (existsSync(join(facts.sourceDir, rel))) {
    return {
      cause: `${rel} (${what}) is in the package dir but not in the tarball`,
      fix: `add it to \`files\` in package.json (or take it out of .npmignore), then check \`npm pack --dry-run\``,
    };
  }
  return {
    cause: `${rel} (${what}) is not in the tarball, and not in the package dir either: it was not built before packing`,
    fix: 'build before packing: a `prepack` script such as "prepack": "npm run build" runs on every npm pack and publish',
  };
}

/** `Cannot find module 'tmp'`, `Cannot find package 'tmp'`, or a missing file of the package itself. */
export function diagnoseMissingModule(text: string, facts: PackageFacts): Diagnosis | undefined {
  const m =
    /Cannot find (?:package|module) '([^']+)'(?: imported from (\S+))?/.exec(text) ??
    /Cannot find (?:package|module) "([^"]+)"/.exec(text);
  if (!m) return undefined;
  const wanted = m[1] as string;
  const from = m[2] ?? /Require stack:\s*\n-\s*(\S+)/.exec(text)?.[1];
  const importer = from ? (inPackage(from, facts) ?? from) : undefined;
  const by = importer ? `, which ${importer} imports,` : '';
  if (/^(?:[A-Za-z]:)?[\\/]/.test(wanted) || wanted.startsWith('file:')) {
    const path = wanted.startsWith('file:') ? new URL(wanted).pathname : wanted;
    const rel = inPackage(path, facts);
    return rel
      ? missingFile(rel, facts, importer ? `imported by ${importer}` : 'an entry point')
      : undefined;
  }
  if (wanted.startsWith('.')) return from ? missingRelative(wanted, from, facts) : undefined;
  const dep = packageOf(wanted);
  if (dep === facts.name) return undefined;
  const m2 = facts.manifest;
  if (m2.peerDependencies?.[dep] !== undefined) {
    return {
      cause: `\`${dep}\`${by} is a peerDependency of ${facts.name} that this install does not have (npm leaves out optional peers)`,
      fix: `a user installs it themselves: give it to the check with peers: { '${dep}': '${m2.peerDependencies[dep]}' } (--peer ${dep}@${m2.peerDependencies[dep]}), or if every user needs it, make it a dependency`,
    };
  }
  if (m2.devDependencies?.[dep] !== undefined) {
    return {
      cause: `\`${dep}\`${by} is a devDependency of ${facts.name}, so installing ${facts.name} does not install it`,
      fix: `move \`${dep}\` from devDependencies to dependencies`,
    };
  }
  if (m2.dependencies?.[dep] !== undefined || m2.optionalDependencies?.[dep] !== undefined) {
    return {
      cause: `\`${dep}\`${by} is declared, but npm did not install it (see the install output)`,
      fix: `check the version range of \`${dep}\` and that it installs on this platform`,
    };
  }
  return {
    cause: `\`${dep}\`${by} is not declared in the dependencies of ${facts.name} (it worked before only because something else installed it)`,
    fix: `add it: \`npm install ${dep}\` in ${facts.name}'s dir`,
  };
}

/** What CommonJS tries for `require('./x')`: the path, then with each extension, then its index. */
const CJS_TRIES = ['', '.js', '.json', '.node', '/index.js', '/index.json', '/index.node'];

/**
 * `require('./lib/helper')` by a file of the package, of a file that is not
 * in the tarball: the file CommonJS would have found, left out of `files`
 * or never built.
 */
function missingRelative(wanted: string, from: string, facts: PackageFacts): Diagnosis | undefined {
  const importer = inPackage(from, facts);
  if (importer === undefined) return undefined;
  const base = posix.normalize(posix.join(posix.dirname(importer), wanted.replace(/\\/g, '/')));
  if (base.startsWith('..')) return undefined;
  const tries = CJS_TRIES.map((ext) => `${base}${ext}`.replace(/\/$/, ''));
  if (tries.some((rel) => facts.files.has(rel))) return undefined;
  const rel =
    tries.find(
      (t) => existsSync(join(facts.sourceDir, t)) && statSync(join(facts.sourceDir, t)).isFile(),
    ) ?? (/\.[cm]?js$|\.json$|\.node$/.test(base) ? base : `${base}.js`);
  return missingFile(rel, facts, `required by ${importer} as '${wanted}'`);
}

const NODE_CONDITIONS = {
  import: ['node', 'import', 'default', 'module-sync'],
  require: ['node', 'require', 'default', 'module-sync'],
};

/** The `exports` entry of a subpath (exact keys only). */
function exportsEntry(facts: PackageFacts, subpath: string): unknown {
  const exports = facts.manifest.exports;
  if (typeof exports !== 'object' || exports === null || Array.isArray(exports)) {
    return subpath === '.' ? exports : undefined;
  }
  const keys = Object.keys(exports);
  if (!keys.some((k) => k.startsWith('.'))) return subpath === '.' ? exports : undefined;
  return (exports as Record<string, unknown>)[subpath];
}

/** The conditions at the top of an exports entry (`import`, `types` …), if it is a conditions object. */
function conditionsOf(entry: unknown): string[] {
  return typeof entry === 'object' && entry !== null && !Array.isArray(entry)
    ? Object.keys(entry)
    : [];
}

/** Why `import()` or `require()` of one of the package's own subpaths failed. */
export function diagnoseLoad(
  text: string,
  code: string | undefined,
  subpath: string,
  mode: 'import' | 'require',
  facts: PackageFacts,
): Diagnosis | undefined {
  const key = `exports[${JSON.stringify(subpath)}]`;
  if (code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') {
    const entry = exportsEntry(facts, subpath);
    const conditions = conditionsOf(entry);
    if (entry === undefined) {
      return {
        cause: `package.json \`exports\` has no ${JSON.stringify(subpath)} subpath`,
        fix: `add ${key} to package.json, or leave the subpath out of the check (imports: { subpaths })`,
      };
    }
    if (conditions.length > 0 && !conditions.some((c) => NODE_CONDITIONS[mode].includes(c))) {
      const other = mode === 'require' ? 'import' : 'require';
      return {
        cause: `${key} has the conditions ${conditions.join(', ')} but none Node uses for ${mode} (${NODE_CONDITIONS[mode].join(', ')})${conditions.includes(other) ? `: it is ${other === 'import' ? 'ESM' : 'CommonJS'} only` : ''}`,
        fix:
          mode === 'require'
            ? `add a \`require\` (or \`default\`) condition that points at a CommonJS build, or check without require (imports: { require: false }) if ESM only is meant`
            : `add an \`import\` (or \`default\`) condition`,
      };
    }
  }
  if (code === 'ERR_REQUIRE_ESM' || /require\(\) of ES Module/.test(text)) {
    return {
      cause: `under require, ${key} leads to an ES module, which Node ${process.versions.node.split('.')[0]} cannot require()`,
      fix: 'point the `require` condition at a CommonJS build (a .cjs file), or check without require (imports: { require: false }) if ESM only is meant',
    };
  }
  if (
    code === 'ERR_REQUIRE_ASYNC_MODULE' ||
    /require\(\) cannot be used on an ESM graph with top-level await/.test(text)
  ) {
    return {
      cause: `under require, ${key} leads to an ES module that uses top-level await (it or a module it imports): require() loads ES modules (Node 20.19+, 22.12+) only without top-level await, so it throws ERR_REQUIRE_ASYNC_MODULE`,
      fix: 'move the top-level await into an exported async function (or a promise the module exports), or point the `require` condition at a CommonJS build; check without require (imports: { require: false }) if ESM only is meant. node --experimental-print-required-tla names the await',
    };
  }
  if (/Cannot use import statement outside a module|Unexpected token 'export'/.test(text)) {
    const file = /^(\/\S+?):\d+/m.exec(text)?.[1];
    const rel = file ? inPackage(file, facts) : undefined;
    return {
      cause: `${rel ?? 'a file of the package'} is written as an ES module, but Node loads it as CommonJS (it is .js and the package has no "type": "module")`,
      fix: 'name it .mjs, or set "type": "module" in package.json (and name the CommonJS files .cjs)',
    };
  }
  if (code === 'ERR_UNKNOWN_FILE_EXTENSION') {
    return {
      cause: `${key} points at a file Node cannot load (${/"(\.[^"]+)"/.exec(text)?.[1] ?? 'its extension'})`,
      fix: 'point it at the built JavaScript, not the source',
    };
  }
  return diagnoseMissingModule(text, facts) ?? missingTarget(subpath, mode, facts);
}

/** An exports target that is not in the tarball. */
function missingTarget(
  subpath: string,
  mode: 'import' | 'require',
  facts: PackageFacts,
): Diagnosis | undefined {
  const entry = exportsEntry(facts, subpath) ?? (subpath === '.' ? facts.manifest.main : undefined);
  const conditions = (e: unknown): unknown =>
    typeof e === 'object' && e !== null && !Array.isArray(e)
      ? conditions(
          Object.entries(e).find(([k]) => NODE_CONDITIONS[mode].includes(k))?.[1] ??
            (e as Record<string, unknown>).default,
        )
      : e;
  for (const { target } of targets(conditions(entry)).filter((t) => !t.types)) {
    const rel = target.replace(/^\.\//, '');
    if (!facts.files.has(rel))
      return missingFile(rel, facts, `the ${mode} target of ${JSON.stringify(subpath)}`);
  }
  return undefined;
}

/** The bin's file as package.json names it, `/`-separated from the package root. */
export function binTarget(
  manifest: PackageFacts['manifest'],
  bin: string,
  name: string,
): string | undefined {
  const bins = manifest.bin;
  if (typeof bins === 'string') return bin === unscopedName(name) ? normalise(bins) : undefined;
  if (typeof bins === 'object' && bins !== null) {
    const target = (bins as Record<string, unknown>)[bin];
    return typeof target === 'string' ? normalise(target) : undefined;
  }
  return undefined;
}

function normalise(path: string): string {
  return path.replace(/\\/g, '/').replace(/^(?:\.\/)+/, '');
}

/** The name a string `bin` field links: the package's, without its scope. */
function unscopedName(name: string): string {
  return name.startsWith('@') ? (name.split('/')[1] ?? name) : name;
}

/** The bin names package.json declares. */
export function binNames(manifest: PackageFacts['manifest'], name: string): string[] {
  const bins = manifest.bin;
  if (typeof bins === 'string') return [unscopedName(name)];
  return typeof bins === 'object' && bins !== null ? Object.keys(bins) : [];
}

/** `node_modules/.bin/NAME` is not there: the bin is not declared, or its file is not packed. */
export function diagnoseMissingBin(bin: string, facts: PackageFacts): Diagnosis {
  const target = binTarget(facts.manifest, bin, facts.name);
  if (target === undefined) {
    const names = binNames(facts.manifest, facts.name);
    return {
      cause: `${facts.name} declares no bin named \`${bin}\` (${names.length ? `its bins: ${names.join(', ')}` : 'its package.json has no `bin` field'})`,
      fix: `add "bin": { "${bin}": "path/to/cli.js" } to package.json${names.length ? `, or run one of ${names.join(', ')}` : ''}`,
    };
  }
  if (!facts.files.has(target)) return missingFile(target, facts, `the file of bin \`${bin}\``);
  return {
    cause: `npm did not link bin \`${bin}\` (${target}) into node_modules/.bin`,
    fix: 'see the install output for why',
  };
}

/**
 * A shebang that cannot start the bin on a POSIX system: none, or one
 * ending in CR. `head` is the start of the file as packed.
 */
export function diagnoseShebang(
  bin: string,
  head: Buffer | undefined,
  rel: string,
): Diagnosis | undefined {
  if (head === undefined) return undefined;
  const text = head.subarray(0, 256).toString('latin1');
  if (!text.startsWith('#!')) {
    return {
      cause: `${rel}, the file of bin \`${bin}\`, has no shebang line, so the system runs it as a shell script`,
      fix: 'make its first line `#!/usr/bin/env node`',
    };
  }
  const line = text.split('\n')[0] ?? '';
  if (line.endsWith('\r')) {
    return {
      cause: `the shebang line of ${rel}, the file of bin \`${bin}\`, ends in CRLF: the system looks for \`node\\r\` (env: 'node\\r': No such file or directory) wherever the file runs as packed (npm's own install rewrites the line, other installers and direct runs do not)`,
      fix: 'save it with LF line endings (a .gitattributes line `*.js text eol=lf` keeps git from converting it)',
    };
  }
  return undefined;
}

/** Why `npm install` failed, from npm's `npm error` lines. */
export function diagnoseInstall(text: string, offline: boolean): Diagnosis | undefined {
  const code = /npm (?:error|ERR!) code (\S+)/.exec(text)?.[1];
  if (code === 'ENOTCACHED') {
    const what = /request to (\S+) failed/.exec(text)?.[1];
    return {
      cause: `${offline ? 'offline, and ' : ''}the npm cache lacks ${what ? `\`${what.replace(/^.*\//, '')}\`` : 'a dependency'}`,
      fix: 'install once online (npm install in the package dir fills the cache), keep package-lock.json up to date with package.json, or drop `offline`',
    };
  }
  if (code === 'E404') {
    const what =
      /404\s+'([^']+)' is not in this registry/.exec(text)?.[1] ??
      /404 Not Found - GET (\S+)/.exec(text)?.[1];
    return {
      cause: `a dependency is not in the registry${what ? ` (${what})` : ''}`,
      fix: 'check its name in dependencies; a private one needs its registry and token in the `npmConfig` option',
    };
  }
  if (code === 'ETARGET') {
    return {
      cause: `no version of a dependency matches its range (${/No matching version found for (\S+)/.exec(text)?.[1] ?? 'see the output'})`,
      fix: 'fix the range in dependencies',
    };
  }
  if (code === 'ELIFECYCLE' || /npm (?:error|ERR!) command failed/.test(text)) {
    return {
      cause:
        'an install script (preinstall, install or postinstall) of the package or a dependency failed',
      fix: 'see its output above; an install script runs with only the runtime dependencies present',
    };
  }
  return undefined;
}
