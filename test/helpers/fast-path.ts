// PERF-07 helpers: the shells /bin/sh may be, which path served a call, and
// the differential property that runs random scenarios through the sh shim and
// through the runner and wants the same bytes from both. The fast suite runs the
// property a few times per shell (test/mock-binary/fast-path.test.ts), the stress
// suite many times (fast-path.stress.test.ts).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { expect } from 'vitest';
import { createMockBinary, type MockBinary, type MockResponse } from '../../src/index.js';
import { completion, python3, spawnTracked, testDir } from './index.js';
import { generationDir } from './protocol.js';

export const EXEC_RAW = fileURLToPath(new URL('../fixtures/exec-raw.py', import.meta.url));

export const commandPath = (name: string) =>
  spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim() || undefined;

/** The shells /bin/sh may be; each runs the shim as `sh` (bash then in POSIX mode). */
export const SHELLS = (['dash', 'bash', 'busybox'] as const).map((name) => ({
  name,
  path: commandPath(name),
}));
for (const shell of SHELLS) {
  if (!shell.path) {
    console.warn(
      `SKIPPED the fast-path tests under ${shell.name}: it is not installed (CI installs it; apt-get install ${shell.name}).`,
    );
  }
}

/** The record of an sh-written call starts so (src/queue/records.ts). */
export const isShRecord = (mock: MockBinary, seq: number) =>
  readFileSync(join(generationDir(mock), 'calls', `${seq}.json`), 'latin1').startsWith('{"sh":1,');

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A call with raw bytes for argv, cwd and one env var (test/fixtures/exec-raw.py). */
async function rawCall(
  shell: string,
  mock: MockBinary,
  cwd: Buffer,
  args: readonly Uint8Array[],
  envValue: Uint8Array | undefined,
): Promise<Outcome> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.SK_VAR;
  if (envValue) env.SKHEX_SK_VAR = Buffer.from(envValue).toString('hex');
  const child = spawnTracked(
    python3(),
    [
      EXEC_RAW,
      shell,
      mock.path,
      cwd.toString('hex'),
      ...args.map((a) => Buffer.from(a).toString('hex')),
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const r = await completion(child);
  const clean = (b: Buffer) =>
    b.toString('hex').replaceAll(Buffer.from(mock.stateDir).toString('hex'), '<state>');
  return { code: r.code, signal: r.signal, stdout: clean(r.stdout), stderr: clean(r.stderr) };
}

/** Every file under `dir` (names and contents as hex), to compare what two runs wrote. */
function tree(dir: Buffer, prefix = ''): Record<string, string> {
  const found: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true, encoding: 'buffer' })) {
    const path = Buffer.concat([dir, Buffer.from('/'), entry.name]);
    const name = `${prefix}/${entry.name.toString('hex')}`;
    if (entry.isDirectory()) Object.assign(found, tree(path, name), { [name]: 'dir' });
    else found[name] = readFileSync(path).toString('hex');
  }
  return found;
}

/** What the two paths must agree on in a call record. */
function comparable(mock: MockBinary) {
  return mock.calls().map((c) => ({
    index: c.index,
    argv: c.argv,
    argvBytes: c.argvBytes.map((b) => b.toString('hex')),
    cwd: Buffer.from(c.cwd).toString('hex'),
    env: c.env,
    status: c.status,
    exitCode: c.exitCode,
    signal: c.signal,
    response: c.response,
    responseSource: c.responseSource,
    diagnostic: c.diagnostic?.replaceAll(mock.stateDir, '<state>'),
    stdin: c.stdin,
  }));
}

const text = fc.string({ unit: 'binary', maxLength: 24 });
const base64 = fc.uint8Array({ maxLength: 24 }).map((b) => Buffer.from(b).toString('base64'));
const segment = fc
  .stringMatching(/^[a-z0-9 '"$%\\*é!&;|<>()`~#-]{1,6}$/)
  .filter((s) => s !== '.' && s !== '..');
const filePath = fc.array(segment, { minLength: 1, maxLength: 3 }).map((p) => p.join('/'));

/** A response the sh shim serves. */
const staticResponse: fc.Arbitrary<MockResponse> = fc
  .record(
    {
      stdout: fc.oneof(
        text.map((t) => ({ stdout: t })),
        base64.map((b) => ({ stdoutBase64: b })),
      ),
      stderr: fc.oneof(
        text.map((t) => ({ stderr: t })),
        base64.map((b) => ({ stderrBase64: b })),
      ),
      jsonl: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
      exitCode: fc.integer({ min: 0, max: 255 }),
      delayMs: fc.constantFrom(0, 1, 15),
      writeFiles: fc.dictionary(filePath, text, { maxKeys: 3 }),
    },
    { requiredKeys: [] },
  )
  .map(({ stdout, stderr, ...rest }) => ({ ...stdout, ...stderr, ...rest }));

/** Responses only the runner can act out: a mixed queue hands these over. */
const runnerResponse = fc.constantFrom<MockResponse>(
  { chunks: [{ stdout: 'c1\n' }, { stderr: 'c2\n' }] },
  { stdout: 'big\n'.repeat(4500) },
  { stdin: 'capture', stdout: 'captured\n' },
  { signal: 'SIGTERM', stdout: 'dying\n' },
  { exitAfterStdinEof: true, exitCode: 3 },
);

const scenario = fc.record({
  responses: fc.array(
    fc.oneof({ weight: 4, arbitrary: staticResponse }, { weight: 1, arbitrary: runnerResponse }),
    { maxLength: 3 },
  ),
  onExhausted: fc.oneof(
    fc.constant<'repeat'>('repeat'),
    fc.constant<'fail'>('fail'),
    staticResponse,
    runnerResponse,
  ),
  default: fc.option(staticResponse, { nil: undefined }),
  calls: fc.array(
    fc.array(
      fc.uint8Array({ maxLength: 12 }).filter((a) => !a.includes(0)),
      { maxLength: 4 },
    ),
    { minLength: 1, maxLength: 4 },
  ),
  env: fc.option(
    fc.uint8Array({ maxLength: 12 }).filter((a) => !a.includes(0)),
    { nil: undefined },
  ),
  cwdName: fc
    .uint8Array({ minLength: 1, maxLength: 10 })
    .filter((a) => !a.includes(0) && !a.includes(0x2f))
    .filter((a) => !['.', '..'].includes(Buffer.from(a).toString('latin1'))),
});

/**
 * PERF-07 MB-03 MB-05: `numRuns` random scenarios (responses the shell serves
 * and ones only the runner can act out, raw argv, cwd and env bytes), each run
 * once with the fast path and once without, under `shell` as `sh`: the output,
 * exit codes, files and call records must be byte-identical. Returns how many
 * calls the shell itself served, so a caller can check the property was not
 * vacuous. `seed` fixes the scenarios (fast-check prints it on a failure).
 */
export async function checkShAgreesWithRunner(
  shell: string,
  { numRuns, seed }: { numRuns: number; seed?: number },
): Promise<number> {
  const base = testDir();
  let shServed = 0;
  await fc.assert(
    fc.asyncProperty(scenario, async (sc) => {
      const cwd = Buffer.concat([Buffer.from(`${base}/`), Buffer.from(sc.cwdName)]);
      const results = [];
      for (const fastPath of [true, false]) {
        mkdirSync(cwd);
        await using git = createMockBinary('git', {
          responses: sc.responses,
          onExhausted: sc.onExhausted,
          default: sc.default,
          recordEnv: ['SK_VAR'],
          fastPath,
          tmpDir: base,
        });
        const outcomes = [];
        for (const args of sc.calls) outcomes.push(await rawCall(shell, git, cwd, args, sc.env));
        const records = comparable(git);
        if (fastPath) shServed += records.filter((_, i) => isShRecord(git, i + 1)).length;
        results.push({ outcomes, records, files: tree(cwd) });
        rmSync(cwd, { recursive: true, force: true });
      }
      expect(results[0]).toEqual(results[1]);
    }),
    { numRuns, ...(seed === undefined ? {} : { seed }) },
  );
  return shServed;
}

/**
 * A copy of the mock's shim that, once it has looked at the response it would
 * get, lets a whole other call run to its end (the original shim): a call
 * that loses the race for that response, every time.
 */
export function racingShim(mock: MockBinary): string {
  const dir = testDir();
  const shim = join(dir, 'git');
  const looked = '[ "$PWD" -ef . ] && shimkit_pick "$@" || return';
  const text = readFileSync(mock.path, 'utf8');
  expect(text).toContain(looked);
  const race = `${looked}\n  "${mock.path}" racer >/dev/null 2>&1 </dev/null`;
  writeFileSync(shim, text.replace(looked, race), { mode: 0o700 });
  return shim;
}
