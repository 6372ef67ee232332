// The leak sanitizer's setup entries (`shimkit/vitest/sanitize`,
// `shimkit/jest/sanitize`) through the real runners: each fixture project is
// written to a temp dir of its own (node_modules: `shimkit` → this repo, whose
// package.json exports the built dist/; the runner → this repo's), run once in
// a child process with SHIMKIT_LEAKS_JSON, and its tests are judged from the
// exit code, the printed blocks and the JSON lines. The runs are independent:
// they all start in beforeAll, side by side, and each test awaits its own.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../helpers/index.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..', '..');
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const JEST = join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
/** A runner that hangs is stopped here; a run takes 2–5 s. */
const RUN_DEADLINE_MS = 45_000;
const linux = process.platform === 'linux';

/** One JSON line of SHIMKIT_LEAKS_JSON (the fields these tests read). */
interface ScopeLine {
  type: 'scope';
  pid: number;
  label: string;
  scope: 'test' | 'file';
  processes: {
    pid: number;
    argv: string[];
    killedNotAwaited: boolean;
    allowed?: string;
    startedBy?: { kind: string; name: string; madeAt?: string };
  }[];
  objects: { kind: string; name: string; madeAt?: string; holds: string[] }[];
  fds: { kind: string; description: string }[];
  fdsChecked: boolean;
  files: { path: string; kind: string; bytes?: number }[];
  tmpDir?: string;
  killed: number[];
  remaining: number[];
  failed: string[];
  warned: string[];
}

/** A finished run of a fixture project. */
interface Run {
  dir: string;
  code: number | null;
  /** stdout and stderr, without colours. */
  output: string;
  /** The JSON lines the sanitizer wrote. */
  lines: ScopeLine[];
  /** Pids the fixture's tests wrote down (each leak it made on purpose). */
  pids: number[];
  /** The runner's own JSON report. */
  report: {
    testResults: {
      name: string;
      message?: string;
      failureMessage?: string;
      assertionResults: {
        title: string;
        fullName: string;
        status: string;
        failureMessages: string[];
      }[];
    }[];
  };
  ms: number;
}

const made: string[] = [];
const children = new Set<ChildProcess>();
const allPids = new Set<number>();

/** A fixture project: its files, node_modules symlinks to `shimkit` (this repo) and the runners. */
function project(files: Record<string, string>, runners: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'shimkit-runners-'));
  made.push(dir);
  mkdirSync(join(dir, 'node_modules'));
  mkdirSync(join(dir, 'tmp'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'shimkit'));
  for (const name of runners) {
    symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name));
  }
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/** Run a runner in `dir` with `env` over a clean env, to its end (or the deadline). */
function runIn(dir: string, args: string[], env: Record<string, string>): Promise<Run> {
  const base: Record<string, string | undefined> = { ...process.env };
  for (const name of Object.keys(base)) {
    if (name.startsWith('SHIMKIT_') || name === 'CI' || name.startsWith('VITEST'))
      delete base[name];
  }
  const began = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: {
      ...base,
      NO_COLOR: '1',
      FORCE_COLOR: '0',
      TMPDIR: join(dir, 'tmp'),
      SHIMKIT_LEAKS_JSON: join(dir, 'leaks.jsonl'),
      FIXTURE_PIDS: join(dir, 'pids.txt'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const chunks: Buffer[] = [];
  child.stdout?.on('data', (c: Buffer) => chunks.push(c));
  child.stderr?.on('data', (c: Buffer) => chunks.push(c));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_DEADLINE_MS);
  return new Promise((done, fail) => {
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      const read = (name: string) =>
        existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : '';
      const lines = read('leaks.jsonl')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as ScopeLine);
      const pids = read('pids.txt').split('\n').filter(Boolean).map(Number);
      for (const pid of [...pids, ...lines.flatMap((l) => l.processes.map((p) => p.pid))]) {
        allPids.add(pid);
      }
      const output = Buffer.concat(chunks)
        .toString()
        // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes
        .replace(/\x1b\[[0-9;]*m/g, '');
      let parsed: Run['report'] = { testResults: [] };
      try {
        parsed = JSON.parse(read('report.json'));
      } catch {
        // no report: the assertions show the output
      }
      done({ dir, code, output, lines, pids, report: parsed, ms: performance.now() - began });
    });
  });
}

function vitest(dir: string, env: Record<string, string>): Promise<Run> {
  const report = join(dir, 'report.json');
  return runIn(
    dir,
    [VITEST, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`],
    env,
  );
}

function jest(dir: string, env: Record<string, string>): Promise<Run> {
  return runIn(dir, [JEST, '--ci', '--json', `--outputFile=${join(dir, 'report.json')}`], env);
}

/** The 1-based line of `marker` in `text`. */
function lineOf(text: string, marker: string): number {
  const at = text.split('\n').findIndex((l) => l.includes(marker));
  if (at === -1) throw new Error(`no ${marker} in the fixture`);
  return at + 1;
}

/** A test's result in the runner's report, by its title. */
function result(run: Run, title: string) {
  const found = run.report.testResults
    .flatMap((f) => f.assertionResults)
    .find((a) => a.title === title);
  expect(found, `${title} in ${run.output}`).toBeDefined();
  return found as NonNullable<typeof found>;
}

/** The JSON line of the scope whose label ends with `title`. */
function lineFor(run: Run, title: string, scope: 'test' | 'file' = 'test'): ScopeLine {
  const found = run.lines.filter((l) => l.scope === scope && l.label.endsWith(title));
  expect(found, `one ${scope} line for ${title}: ${JSON.stringify(run.lines)}`).toHaveLength(1);
  return found[0] as ScopeLine;
}

const argvOf = (line: ScopeLine) => line.processes.map((p) => p.argv.join(' '));

// ---------------------------------------------------------------------------
// Fixture sources.

/** Shared by the vitest fixtures (ESM): sh leaves `sleep <arg>` behind, its own session. */
const ESCAPE = readFileSync(join(ROOT, 'test', 'fixtures', 'leak-escape.mjs'), 'utf8');
/** The jest fixtures' copy (CJS). */
const ESCAPE_CJS = readFileSync(join(ROOT, 'test', 'fixtures', 'leak-escape.cjs'), 'utf8');

const VITEST_CONFIG = (extra = '') => `import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { setupFiles: ['shimkit/vitest/sanitize'], testTimeout: 30000, hookTimeout: 30000${extra} } });
`;

/** LK-01, LK-03, LK-04, LK-06 in one file: one test per case. */
const MAIN_TEST = `import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sanitize, spawnProcess } from 'shimkit';
import { expect, test } from 'vitest';
import { detach, escaped } from './escape.js';

test('leaves sleep 600', async () => {
  const p = spawnProcess('sh', ['-c', detach(600)]); // MADE-HERE
  await escaped(p);
});

test('leaves sleep 600 on purpose', { meta: { shimkit: { leaks: 'warn' } } }, async () => {
  await escaped(spawnProcess('sh', ['-c', detach(600)]));
});

test('allows one', async () => {
  sanitize.policy({ allow: [{ argv: 'sleep 600', count: 1, reason: 'one daemon, on purpose' }] });
  await escaped(spawnProcess('sh', ['-c', detach(600)]));
});

test('allows one, not two', async () => {
  sanitize.policy({ allow: [{ argv: 'sleep 600', count: 1, reason: 'one daemon, on purpose' }] });
  await escaped(spawnProcess('sh', ['-c', detach(600)]));
  await escaped(spawnProcess('sh', ['-c', detach(600)]));
});

test('leaves a file in its TMPDIR', () => {
  writeFileSync(join(tmpdir(), 'left.txt'), 'abc');
  writeFileSync(join(process.cwd(), 'tmpdir-of-test.txt'), tmpdir());
});

test('leaves a unix socket server listening', async () => {
  const server = createServer();
  await new Promise((r) => server.listen(join(process.cwd(), 'srv.sock'), r));
});

test('closes without awaiting', async () => {
  const p = spawnProcess('sleep', ['600']);
  writeFileSync(join(process.cwd(), 'closed-pid.txt'), String(p.pid));
  p.close();
});

test('kills one that ignores SIGTERM without awaiting', async () => {
  const p = spawnProcess('sh', ['-c', 'trap "" TERM; echo ready; sleep 600; echo done']);
  await p.waitForOutput('ready');
  p.kill('SIGTERM');
});
`;

// ---------------------------------------------------------------------------
// The runs, all started at once in beforeAll.

const mainProject = () =>
  project(
    {
      'package.json': '{"type":"module"}\n',
      'vitest.config.mjs': VITEST_CONFIG(),
      'escape.js': ESCAPE,
      'main.test.js': MAIN_TEST,
    },
    ['vitest'],
  );

const SERVER_OK = `import { createMockServer, reply } from 'shimkit';
import { afterAll, beforeAll, expect, test } from 'vitest';

let api;
beforeAll(async () => {
  api = await createMockServer();
  api.expect({ method: 'GET', path: '/ping' }, reply.json({ ok: true }), { times: 'always' });
});
afterAll(async () => {
  await api.dispose();
});

for (const n of [1, 2, 3]) {
  test('fetches ' + n, async () => {
    const r = await fetch(api.url + '/ping');
    expect(await r.json()).toEqual({ ok: true });
  });
}
`;

const SERVER_FORGOTTEN = SERVER_OK.replace(
  'api = await createMockServer();',
  'api = await createMockServer(); // MADE-HERE',
).replace(/afterAll\(async \(\) => \{\n {2}await api\.dispose\(\);\n\}\);\n/, '');

const CONCURRENT = `import { spawnProcess } from 'shimkit';
import { test } from 'vitest';
import { barrier, detach, escaped } from './escape.js';

const all = [601, 602, 603, 604, 605, 606, 607, 608];
for (const n of all) {
  test.concurrent('leaves sleep ' + n, async () => {
    await escaped(spawnProcess('sh', ['-c', detach(n)]));
    // All eight scopes open, their sleeps alive, before any is checked.
    await barrier(process.cwd(), 'leaked-' + n, all.map((m) => 'leaked-' + m));
  });
}
`;

const ALLOWED = `import { spawnProcess } from 'shimkit';
import { test } from 'vitest';
import { detach, escaped } from './escape.js';

test('configured: one allowed', async () => {
  await escaped(spawnProcess('sh', ['-c', detach(600)]));
});

test('configured: one allowed, not two', async () => {
  await escaped(spawnProcess('sh', ['-c', detach(600)]));
  await escaped(spawnProcess('sh', ['-c', detach(600)]));
});
`;

const scopesProject = () =>
  project(
    {
      'package.json': '{"type":"module"}\n',
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { setupFiles: ['./configure.js', 'shimkit/vitest/sanitize'], testTimeout: 30000, maxConcurrency: 8 } });
`,
      'configure.js': `import { sanitize } from 'shimkit';
sanitize.configure({ mode: 'fail', allow: [{ argv: 'sleep 600', count: 1, reason: 'configured: one on purpose' }] });
`,
      'escape.js': ESCAPE,
      'server-ok.test.js': SERVER_OK,
      'server-forgotten.test.js': SERVER_FORGOTTEN,
      'concurrent.test.js': CONCURRENT,
      'allowed.test.js': ALLOWED,
    },
    ['vitest'],
  );

const THREAD_FILE = (
  me: string,
  other: string,
  arg: number,
) => `import { spawnProcess } from 'shimkit';
import { test } from 'vitest';
import { barrier, detach, escaped } from './escape.js';

test('thread ${me} leaves sleep ${arg}', async () => {
  await barrier(process.cwd(), '${me}.ready', ['${other}.ready']);
  await escaped(spawnProcess('sh', ['-c', detach(${arg})]));
  await barrier(process.cwd(), '${me}.leaked', ['${other}.leaked']);
});
`;

const threadsProject = () =>
  project(
    {
      'package.json': '{"type":"module"}\n',
      'vitest.config.mjs': VITEST_CONFIG(", pool: 'threads', maxWorkers: 2, fileParallelism: true"),
      'escape.js': ESCAPE,
      'a.test.js': THREAD_FILE('a', 'b', 611),
      'b.test.js': THREAD_FILE('b', 'a', 612),
    },
    ['vitest'],
  );

const JEST_FILE = (
  me: string,
  arg: number,
) => `const { appendFileSync, readFileSync } = require('node:fs');
const { createMockBinary, createSandbox, sanitize, spawnProcess } = require('shimkit');
const { detach, escaped } = require('./escape.cjs');

let git;
let sb;
afterEach(async () => {
  await git?.dispose();
  await sb?.dispose();
  git = undefined;
  sb = undefined;
});

test('${me} leaves sleep ${arg}', async () => {
  git = createMockBinary('git');
  sb = createSandbox();
  await escaped(spawnProcess('sh', ['-c', detach(${arg})])); // MADE-HERE
});

test('${me} leaves sleep ${arg + 10} under policy warn', async () => {
  sanitize.policy('warn');
  git = createMockBinary('git');
  await escaped(spawnProcess('sh', ['-c', detach(${arg + 10})]));
});

test('${me} disposes in afterEach', async () => {
  git = createMockBinary('git');
  sb = createSandbox();
});
`;

const jestProject = () =>
  project(
    {
      'package.json': '{"name":"jest-fixture","private":true}\n',
      'jest.config.js': `module.exports = {
  rootDir: __dirname,
  testMatch: ['**/*.test.js'],
  testEnvironment: 'node',
  transform: {},
  maxWorkers: 2,
  setupFilesAfterEnv: ['shimkit/jest/sanitize'],
};
`,
      'escape.cjs': ESCAPE_CJS,
      'a.test.js': JEST_FILE('a', 621),
      'b.test.js': JEST_FILE('b', 622),
    },
    ['jest'],
  );

let runs: {
  ci: Promise<Run>;
  local: Promise<Run>;
  scopes: Promise<Run>;
  threads: Promise<Run>;
  jest: Promise<Run>;
};

beforeAll(() => {
  if (!linux) return;
  runs = {
    ci: vitest(mainProject(), { CI: 'true' }),
    local: vitest(mainProject(), {}),
    scopes: vitest(scopesProject(), { CI: 'true' }),
    threads: vitest(threadsProject(), { CI: 'true' }),
    jest: jest(jestProject(), { CI: 'true' }),
  };
  for (const run of Object.values(runs)) run.catch(() => {});
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  // What a run stopped early wrote down, besides what the finished runs read.
  for (const dir of made) {
    const file = join(dir, 'pids.txt');
    if (existsSync(file))
      for (const pid of readFileSync(file, 'utf8').split('\n').filter(Boolean))
        allPids.add(Number(pid));
  }
  for (const pid of allPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
  // SHIMKIT_KEEP_FIXTURES=1 keeps the projects, to run one by hand (`node …/vitest.mjs run` in it).
  if (!process.env.SHIMKIT_KEEP_FIXTURES)
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe.runIf(linux)('the leak sanitizer through the real runners', () => {
  it('LK-01 LK-06 LK-07 vitest under CI=true: a test that leaves sleep 600 by a double fork fails with a block naming it, its pid, who started it and the test line; it is killed', async () => {
    const run = await runs.ci;
    const line = lineFor(run, 'leaves sleep 600');
    expect(line.processes).toHaveLength(1);
    const leaked = line.processes[0] as ScopeLine['processes'][number];
    expect(leaked.argv).toEqual(['sleep', '600']);
    expect(line.failed).toEqual(['processes']);
    expect(line.killed).toEqual([leaked.pid]);
    expect(run.pids).toContain(leaked.pid);
    const at = `main.test.js:${lineOf(MAIN_TEST, 'MADE-HERE')}`;
    expect(leaked.startedBy).toMatchObject({ kind: 'process', madeAt: at });

    const failure = result(run, 'leaves sleep 600');
    expect(failure.status).toBe('failed');
    const message = failure.failureMessages.join('\n');
    expect(message).toContain(
      'shimkit leak sanitizer (failed): test "main.test.js > leaves sleep 600" left 1 thing behind:',
    );
    expect(message).toMatch(
      new RegExp(`^ {2}process {2}sleep 600 \\(pid ${leaked.pid}\\) ← `, 'm'),
    );
    expect(message).toMatch(/started by process sh -c .* made at main\.test\.js:\d+$/m);
    expect(message).toContain(`made at ${at}`);
    expect(run.output).toContain(`sleep 600 (pid ${leaked.pid})`);
    expect(run.code).toBe(1);
    for (const pid of run.pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  });

  it('LK-06 vitest without CI: the same leak passes and warns with the block; every pid is gone after the run', async () => {
    const run = await runs.local;
    expect(run.code, run.output).toBe(0);
    const line = lineFor(run, 'leaves sleep 600');
    expect(line.failed).toEqual([]);
    expect(line.warned).toEqual(['processes']);
    const pid = line.processes[0]?.pid;
    expect(run.output).toContain(
      'shimkit leak sanitizer (warning): test "main.test.js > leaves sleep 600" left 1 thing behind:',
    );
    expect(run.output).toContain(`sleep 600 (pid ${pid})`);
    for (const r of run.report.testResults.flatMap((f) => f.assertionResults)) {
      expect(r.status, r.title).toBe('passed');
    }
    expect(run.pids.length).toBeGreaterThanOrEqual(5);
    for (const p of run.pids) expect(isAlive(p), `pid ${p}`).toBe(false);
  });

  it("LK-06 a test's meta { shimkit: { leaks: 'warn' } } passes under CI=true and prints the block", async () => {
    const run = await runs.ci;
    expect(result(run, 'leaves sleep 600 on purpose').status).toBe('passed');
    const line = lineFor(run, 'leaves sleep 600 on purpose');
    expect(line).toMatchObject({ failed: [], warned: ['processes'] });
    expect(argvOf(line)).toEqual(['sleep 600']);
    expect(run.output).toContain(
      'shimkit leak sanitizer (warning): test "main.test.js > leaves sleep 600 on purpose" left 1 thing behind:',
    );
  });

  it('LK-06 sanitize.policy({ allow }) in the test lets one sleep 600 through and not two', async () => {
    const run = await runs.ci;
    expect(result(run, 'allows one').status).toBe('passed');
    const one = lineFor(run, 'allows one');
    expect(one.processes.map((p) => p.allowed)).toEqual(['one daemon, on purpose']);
    expect(one).toMatchObject({ failed: [], warned: [] });
    expect(one.killed).toHaveLength(1); // allowed, and still cleaned

    const failure = result(run, 'allows one, not two');
    expect(failure.status).toBe('failed');
    const two = lineFor(run, 'allows one, not two');
    expect(two.processes.filter((p) => p.allowed === 'one daemon, on purpose')).toHaveLength(1);
    expect(two.processes.filter((p) => p.allowed === undefined)).toHaveLength(1);
    expect(two.failed).toEqual(['processes']);
    expect(failure.failureMessages.join('\n')).toContain('left 1 thing behind (and 1 allowed):');
  });

  it('LK-06 sanitize.configure({ mode: fail, allow }) in a setup file before the entry lets one through and not two', async () => {
    const run = await runs.scopes;
    expect(result(run, 'configured: one allowed').status).toBe('passed');
    const one = lineFor(run, 'configured: one allowed');
    expect(one.processes.map((p) => p.allowed)).toEqual(['configured: one on purpose']);
    expect(result(run, 'configured: one allowed, not two').status).toBe('failed');
    expect(lineFor(run, 'configured: one allowed, not two').failed).toEqual(['processes']);
  });

  it("LK-03 a file left in the test's own TMPDIR and a unix socket server left listening are reported and fail under CI=true; the TMPDIR is gone", async () => {
    const run = await runs.ci;
    expect(result(run, 'leaves a file in its TMPDIR').status).toBe('failed');
    const files = lineFor(run, 'leaves a file in its TMPDIR');
    expect(files.files).toEqual([{ path: 'left.txt', kind: 'file', bytes: 3 }]);
    expect(files.failed).toEqual(['files']);
    const testTmp = readFileSync(join(run.dir, 'tmpdir-of-test.txt'), 'utf8');
    expect(files.tmpDir).toBe(testTmp);
    expect(testTmp.startsWith(join(run.dir, 'tmp'))).toBe(true);
    expect(existsSync(testTmp)).toBe(false);
    expect(result(run, 'leaves a file in its TMPDIR').failureMessages.join('\n')).toMatch(
      /^ {2}file {5}file \$TMPDIR\/left\.txt \(3 B\)$/m,
    );

    expect(result(run, 'leaves a unix socket server listening').status).toBe('failed');
    const fds = lineFor(run, 'leaves a unix socket server listening');
    expect(fds.fdsChecked).toBe(true);
    expect(fds.failed).toEqual(['fds']);
    expect(fds.fds).toEqual([
      expect.objectContaining({
        kind: 'socket',
        description: expect.stringMatching(
          new RegExp(`listening, at ${join(run.dir, 'srv.sock')}`),
        ),
      }),
    ]);
    // The test's leak is the test's: the file scope, still open around it, does not report it again.
    expect(run.lines.filter((l) => l.scope === 'file')).toEqual([]);
  });

  it('LK-04 a process closed and not awaited is settled, not reported; one that ignores SIGTERM, killed and not awaited, is reported as killed but not awaited', async () => {
    const run = await runs.ci;
    expect(result(run, 'closes without awaiting').status).toBe('passed');
    expect(run.lines.filter((l) => l.label.endsWith('closes without awaiting'))).toEqual([]);
    const closed = Number(readFileSync(join(run.dir, 'closed-pid.txt'), 'utf8'));
    expect(isAlive(closed)).toBe(false);

    const title = 'kills one that ignores SIGTERM without awaiting';
    expect(result(run, title).status).toBe('failed');
    const line = lineFor(run, title);
    expect(line.processes.length).toBeGreaterThan(0);
    expect(line.processes.every((p) => p.killedNotAwaited)).toBe(true);
    expect(argvOf(line)).toContain('sleep 600');
    expect(line.objects).toEqual([]); // the process object is the processes' "started by", not a leak of its own
    expect(result(run, title).failureMessages.join('\n')).toContain(
      'killed but not awaited: it outlived the 500 ms settle',
    );
    for (const p of line.processes) expect(isAlive(p.pid)).toBe(false);
  });

  it('LK-05 a mock server made in beforeAll, disposed in afterAll and fetched by 3 tests blames no test; forgotten, the file scope reports it with where it was made', async () => {
    const run = await runs.scopes;
    for (const n of [1, 2, 3]) {
      const found = run.report.testResults
        .filter((f) => f.name.endsWith('server-ok.test.js'))
        .flatMap((f) => f.assertionResults)
        .find((a) => a.title === `fetches ${n}`);
      expect(found?.status, run.output).toBe('passed');
    }
    expect(run.lines.filter((l) => l.label.includes('server-ok.test.js'))).toEqual([]);

    // Forgotten: its tests pass (the server is the file's), the file scope fails.
    const forgotten = run.report.testResults.find((f) =>
      f.name.endsWith('server-forgotten.test.js'),
    );
    expect(forgotten?.assertionResults.map((a) => a.status)).toEqual([
      'passed',
      'passed',
      'passed',
    ]);
    expect(run.lines.filter((l) => l.label.startsWith('server-forgotten.test.js >'))).toEqual([]);
    const file = lineFor(run, 'server-forgotten.test.js', 'file');
    const at = `server-forgotten.test.js:${lineOf(SERVER_FORGOTTEN, 'MADE-HERE')}`;
    expect(file.objects).toEqual([
      expect.objectContaining({
        kind: 'mock server',
        name: expect.stringMatching(/^http:/),
        madeAt: at,
      }),
    ]);
    expect(file.failed).toEqual(['objects']);
    expect(run.output).toContain(
      'shimkit leak sanitizer (failed): the file scope (beforeAll, file fixtures) "server-forgotten.test.js" left 1 thing behind:',
    );
    expect(run.output).toMatch(
      new RegExp(
        `object +mock server http://\\S+ made at ${at}\n +holds: \\d+ client connections? open`,
      ),
    );
  });

  it('LK-05 eight test.concurrent tests each leaving a distinct sleep are each blamed on their own test (the cookie through an async context)', async () => {
    const run = await runs.scopes;
    for (let n = 601; n <= 608; n += 1) {
      const title = `leaves sleep ${n}`;
      expect(result(run, title).status).toBe('failed');
      const line = lineFor(run, `concurrent.test.js > ${title}`);
      expect(argvOf(line)).toEqual([`sleep ${n}`]);
      expect(result(run, title).failureMessages.join('\n')).toContain(`sleep ${n} (pid `);
    }
    for (const pid of run.pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  });

  it("LK-05 pool 'threads', two files at once: each leak is blamed on its own file's test", async () => {
    const run = await runs.threads;
    const a = lineFor(run, 'a.test.js > thread a leaves sleep 611');
    const b = lineFor(run, 'b.test.js > thread b leaves sleep 612');
    expect(argvOf(a)).toEqual(['sleep 611']);
    expect(argvOf(b)).toEqual(['sleep 612']);
    expect(a.pid).toBe(b.pid); // one process: two worker threads, each with its own env
    expect(a.fdsChecked).toBe(false);
    expect(run.lines.filter((l) => l.scope === 'test')).toHaveLength(2);
    expect(run.code).toBe(1);
    expect(result(run, 'thread a leaves sleep 611').status).toBe('failed');
    expect(result(run, 'thread b leaves sleep 612').status).toBe('failed');
  });

  it("LK-05 LK-06 LK-07 jest with 2 workers: each file's leak is blamed on its test and fails it; an afterEach that disposes is not reported; sanitize.policy('warn') passes", async () => {
    const run = await runs.jest;
    expect(run.code, run.output).toBe(1);
    for (const [me, arg] of [
      ['a', 621],
      ['b', 622],
    ] as const) {
      const leaking = result(run, `${me} leaves sleep ${arg}`);
      expect(leaking.status).toBe('failed');
      const message = leaking.failureMessages.join('\n');
      expect(message).toContain(
        `shimkit leak sanitizer (failed): test "${me}.test.js > ${me} leaves sleep ${arg}" left 1 thing behind:`,
      );
      expect(message).toContain(`made at ${me}.test.js:${lineOf(JEST_FILE(me, arg), 'MADE-HERE')}`);
      const line = lineFor(run, `${me} leaves sleep ${arg}`);
      expect(argvOf(line)).toEqual([`sleep ${arg}`]);
      expect(line.objects).toEqual([]); // the mock and the sandbox were disposed by afterEach

      expect(result(run, `${me} leaves sleep ${arg + 10} under policy warn`).status).toBe('passed');
      const warned = lineFor(run, `${me} leaves sleep ${arg + 10} under policy warn`);
      expect(warned).toMatchObject({ failed: [], warned: ['processes'] });
      expect(argvOf(warned)).toEqual([`sleep ${arg + 10}`]);

      expect(result(run, `${me} disposes in afterEach`).status).toBe('passed');
      expect(run.lines.filter((l) => l.label.endsWith(`${me} disposes in afterEach`))).toEqual([]);
    }
    // Two workers: two processes.
    expect(new Set(run.lines.map((l) => l.pid)).size).toBe(2);
    expect(run.output).toContain(
      'shimkit leak sanitizer (warning): test "a.test.js > a leaves sleep 631 under policy warn"',
    );
    for (const pid of run.pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  });
});
