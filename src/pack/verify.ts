import { mkdtempSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ShimkitError } from '../internal/errors.js';
import { createSandbox, type TestSandbox } from '../process/sandbox.js';
import { checkDeclaredBins, runBin } from './bins.js';
import { diagnoseInstall, type PackageFacts } from './diagnose.js';
import { entryPoints } from './entries.js';
import { PackedInstallError } from './errors.js';
import { ending } from './exec.js';
import { hermeticEnv } from './guard.js';
import { loadEntries } from './imports.js';
import { hostNpm, install } from './install.js';
import type { Manifest } from './lockfile.js';
import { findNpm, npmHome } from './npm.js';
import { type PackedInstallOptions, resolvePackOptions } from './options.js';
import { pack, refuseReentry } from './pack.js';
import { cleaner, fromRun, type PackCheck, type PackedInstallReport } from './report.js';
import { checkTypes } from './types-check.js';
import { checkTypesFiles } from './types-files.js';

/**
 * Pack the package as `npm publish` would, install the tarball into a fresh
 * project in a sandbox with an npm of its own (HOME, cache, user and global
 * config: nothing of the host's but its registry), then run its bins and
 * load every entry point under `import` and `require`, and type-check them
 * (requirement SP-12). Declared bins that `run` does not name are checked
 * without running them, and declared types files are checked to be in the
 * tarball without tsc. Nothing resolves outside the check project: a bare
 * specifier Node finds only in a `node_modules` above it fails as not
 * installed. A failed check is reported with its cause and fix (paths as
 * `<project>`, `<sandbox>`, `<package>`);
 * only a problem outside the package (bad options, no npm, no package.json
 * or one that is not a JSON object with a name and version, a re-entry from
 * a pack script) throws, and only `ShimkitError`s.
 *
 * @example
 * const report = await verifyPackedInstall({
 *   packageDir: '.',
 *   run: [{ bin: 'my-cli', args: ['--version'], expect: { stdout: /\d+\.\d+/ } }],
 * });
 * expect(report.ok, formatPackedInstallReport(report)).toBe(true);
 */
export async function verifyPackedInstall(
  options?: PackedInstallOptions,
): Promise<PackedInstallReport> {
  const o = resolvePackOptions(options);
  refuseReentry(o.packageDir);
  checkManifest(o.packageDir);
  const npm = findNpm({
    execPath: process.execPath,
    platform: o.sandbox?.platform ?? process.platform,
    env: process.env,
  });
  const own = o.sandbox ? undefined : createSandbox();
  const sandbox = (o.sandbox ?? own) as TestSandbox;
  try {
    return await verifyIn(sandbox, o, npm);
  } catch (error) {
    if (error instanceof ShimkitError) throw error;
    throw new PackedInstallError(
      `verifyPackedInstall() of ${o.packageDir} failed outside the package's checks: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  } finally {
    await own?.dispose();
  }
}

async function verifyIn(
  sandbox: TestSandbox,
  o: ReturnType<typeof resolvePackOptions>,
  npm: ReturnType<typeof findNpm>,
): Promise<PackedInstallReport> {
  const runDir = mkdtempSync(join(sandbox.root, 'packed-'));
  const home = npmHome(runDir);
  const projectDir = join(runDir, 'project');
  const clean = cleaner({
    project: projectDir,
    check: runDir,
    sandbox: sandbox.root,
    package: o.packageDir,
    home: homedir(),
    node: process.execPath,
  });
  const results: PackCheck[] = [];
  const notes: string[] = [];
  const sourceManifest = readManifest(join(o.packageDir, 'package.json'));
  const report = (extra: Partial<PackedInstallReport>): PackedInstallReport => {
    // Every text of a check is cleaned, causes too: "imported by <project>/…", not a sandbox path.
    for (const c of results) {
      for (const key of ['problem', 'cause', 'fix', 'skipped'] as const) {
        const text = c[key];
        if (text !== undefined) c[key] = clean(text);
      }
    }
    const failures = results.filter((c) => !c.ok);
    return {
      ok: failures.length === 0,
      name: String(sourceManifest?.name ?? ''),
      version: String(sourceManifest?.version ?? ''),
      tarball: '',
      tarballPath: '',
      files: [],
      projectDir,
      packMs: 0,
      installMs: 0,
      offline: o.offline,
      results,
      failures,
      notes,
      ...extra,
    };
  };

  const [host, packed] = await Promise.all([
    hostNpm(npm, o.packageDir, join(runDir, 'host-npm'), o.offline, o.timeoutMs),
    pack(npm, home, o.packageDir, join(runDir, 'tarball'), o.timeoutMs),
  ]);
  const packMs = Math.round(packed.result.durationMs);
  if (!packed.json || !packed.tarball) {
    results.push(
      fromRun('pack', 'pack', packed.result, clean, {
        problem:
          packed.result.exitCode === 0 && !packed.result.timedOut
            ? 'npm pack printed no JSON naming the tarball'
            : `npm pack ${ending(packed.result, o.timeoutMs)}`,
        ...(sourceManifest
          ? {}
          : {
              cause: 'the package dir has no readable package.json',
              fix: 'run it on a dir with a package.json',
            }),
      }),
    );
    return report({ packMs });
  }
  const files = packed.json.files.map((f) => f.path.replace(/\\/g, '/')).sort();
  results.push(fromRun('pack', 'pack', packed.result, clean));
  const base = {
    tarball: packed.json.filename,
    tarballPath: packed.tarball,
    files,
    packMs,
    name: packed.json.name,
    version: packed.json.version,
  };

  const installed = await install({
    npm,
    home,
    sandbox,
    projectDir,
    tarball: packed.tarball,
    manifest: { ...(sourceManifest ?? {}), name: packed.json.name, version: packed.json.version },
    packageDir: o.packageDir,
    offline: o.offline,
    registry: o.registry ?? host.registry,
    hostCache: host.cache,
    network: host.network,
    npmConfig: o.npmConfig,
    peers: o.peers,
    timeoutMs: o.timeoutMs,
  });
  const installMs = Math.round(installed.result.durationMs);
  if (o.offline) {
    notes.push(
      installed.pinned === 0
        ? 'offline: no dependencies to install from the cache'
        : installed.locked
          ? `offline: dependencies pinned by the package's lockfile; ${cachedFiles(installed.seeded)} linked from the host's npm cache`
          : `offline: no usable package-lock.json, so npm resolved the ranges from ${cachedFiles(installed.seeded)} linked from the host's npm cache`,
    );
  }
  const r = installed.result;
  if (r.exitCode !== 0 || r.timedOut) {
    results.push(
      fromRun('install', 'install', r, clean, {
        problem: `npm install ${ending(r, o.timeoutMs)}`,
        ...diagnoseInstall(r.stderr + r.stdout, o.offline),
      }),
    );
    return report({ ...base, installMs });
  }
  results.push(fromRun('install', 'install', r, clean));

  const installedDir = join(projectDir, 'node_modules', ...packed.json.name.split('/'));
  const manifest = readManifest(join(installedDir, 'package.json')) ?? sourceManifest ?? {};
  const facts: PackageFacts = {
    name: packed.json.name,
    manifest,
    installedDir,
    sourceDir: o.packageDir,
    files: new Set(files),
    tarball: packed.tarball,
  };

  const nodeEnv = hermeticEnv(runDir, projectDir, sandbox);
  for (const run of o.run) {
    results.push(await runBin({ run, projectDir, sandbox, facts, clean, env: nodeEnv }));
  }
  // The bins run does not name are checked without running them.
  results.push(
    ...checkDeclaredBins({
      ran: new Set(o.run.map((r) => r.bin)),
      projectDir,
      platform: sandbox.platform,
      facts,
    }),
  );

  const { import: doImport, require: doRequire, types } = o.imports;
  if (doImport || doRequire || types) {
    const found = entryPoints(facts.name, manifest.exports, manifest.main, files);
    notes.push(...found.notes.map((n) => `entry points: ${n}`));
    const entries = o.imports.subpaths
      ? o.imports.subpaths.map(
          (subpath) =>
            found.entries.find((e) => e.subpath === subpath) ?? {
              subpath,
              specifier: subpath === '.' ? facts.name : `${facts.name}${subpath.slice(1)}`,
              kind: 'js' as const,
            },
        )
      : found.entries;
    const common = {
      entries,
      projectDir,
      sandbox,
      facts,
      clean,
      timeoutMs: o.timeoutMs,
      preload: o.preload,
      env: nodeEnv,
    };
    const typesOnly = new Set(o.imports.typesOnly);
    const loaded = { ...common, entries: entries.filter((e) => !typesOnly.has(e.subpath)) };
    for (const e of entries.filter((e) => typesOnly.has(e.subpath))) {
      notes.push(`${e.specifier}: types checked, not loaded (typesOnly)`);
    }
    const esmOnly = new Set(o.imports.esmOnly);
    const requirable = loaded.entries.filter((e) => !esmOnly.has(e.subpath));
    if (doRequire) {
      for (const e of entries.filter((e) => esmOnly.has(e.subpath))) {
        notes.push(
          `${e.specifier}: an ES module only, not required or type-checked as CommonJS (esmOnly)`,
        );
      }
    }
    // Three processes at once: the loads are quick, tsc is most of the wait.
    const [imported, required, typed] = await Promise.all([
      doImport ? loadEntries({ ...loaded, mode: 'import' }) : [],
      doRequire ? loadEntries({ ...loaded, entries: requirable, mode: 'require' }) : [],
      types
        ? checkTypes({ ...common, esmOnly, modes: { import: doImport, require: doRequire } })
        : [],
    ]);
    results.push(...imported, ...required, ...(types ? checkTypesFiles(facts) : []), ...typed);
  }
  return report({ ...base, installMs });
}

/**
 * The package.json to pack is there and names the package: without it
 * there is no package to check, so it is thrown (the CLI exits 3), not
 * reported as a failed check.
 */
function checkManifest(packageDir: string): void {
  const path = join(packageDir, 'package.json');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new PackedInstallError(
      code === 'ENOENT'
        ? `${path} does not exist: verifyPackedInstall() checks a package dir, the one with the package.json to pack`
        : `${path} cannot be read (${code ?? (error as Error).message})`,
      { cause: error },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new PackedInstallError(
      `${path} is not valid JSON (${(error as Error).message}): npm cannot pack it`,
      { cause: error },
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new PackedInstallError(`${path} is not a JSON object: npm cannot pack it`);
  }
  const json = parsed as Record<string, unknown>;
  for (const field of ['name', 'version'] as const) {
    if (typeof json[field] !== 'string' || json[field] === '') {
      throw new PackedInstallError(
        `${path} has no \`${field}\` (a non-empty string): npm cannot pack it`,
      );
    }
  }
}

const cachedFiles = (n: number) => `${n} cached file${n === 1 ? '' : 's'}`;

function readManifest(path: string): (Manifest & Record<string, unknown>) | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Manifest) : undefined;
  } catch {
    return undefined;
  }
}
