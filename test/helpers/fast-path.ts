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
import {
  any,
  createMockBinary,
  type MockBinary,
  type MockBinaryOptions,
  MockExitCode,
  type MockResponse,
} from '../../src/index.js';
import { completion, python3, spawnTracked, testDir } from './index.js';
import { seededRandom } from './parallel.js';
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
 * One scenario, run once with the fast path and once without, in a fresh
 * `cwd` under `shell` as `sh`: the output, exit codes, files and call
 * records must be byte-identical. Returns how many calls the shell served.
 */
async function bothPathsAgree(
  shell: string,
  base: string,
  cwd: Buffer,
  options: Pick<MockBinaryOptions, 'responses' | 'onExhausted' | 'default'>,
  calls: readonly Uint8Array[][],
  env: Uint8Array | undefined,
): Promise<number> {
  const results = [];
  let shServed = 0;
  for (const fastPath of [true, false]) {
    mkdirSync(cwd);
    await using git = createMockBinary('git', {
      ...options,
      recordEnv: ['SK_VAR'],
      fastPath,
      tmpDir: base,
    });
    const outcomes = [];
    for (const args of calls) outcomes.push(await rawCall(shell, git, cwd, args, env));
    const records = comparable(git);
    if (fastPath) shServed = records.filter((_, i) => isShRecord(git, i + 1)).length;
    results.push({ outcomes, records, files: tree(cwd) });
    rmSync(cwd, { recursive: true, force: true });
  }
  expect(results[0]).toEqual(results[1]);
  return shServed;
}

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
      const options = { responses: sc.responses, onExhausted: sc.onExhausted, default: sc.default };
      shServed += await bothPathsAgree(shell, base, cwd, options, sc.calls, sc.env);
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

/** Words the routed scenarios match on and call with (shell metacharacters, quotes, UTF-8, empty). */
const word = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.constantFrom('status', 'push', '-C', '', 'a b', "it's", 'é', '*', '$x'),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 5 }) },
);
const argMatcher = fc.oneof(
  { weight: 6, arbitrary: word },
  { weight: 2, arbitrary: fc.constant(any()) },
  { weight: 1, arbitrary: fc.constantFrom(/^s/, /h$/) },
);
const routing = fc.record(
  {
    args: fc.array(argMatcher, { maxLength: 3 }),
    prefix: fc.boolean(),
    cwd: fc.constantFrom('here', 'elsewhere', 'any', 'regex'),
    env: fc.oneof(word, fc.constant(null), fc.constant(any()), fc.constant(/^s/)),
    times: fc.constantFrom<number | 'always'>(1, 2, 3, 'always'),
  },
  { requiredKeys: [] },
);
type Routing = typeof routing extends fc.Arbitrary<infer T> ? T : never;

const routedScenario = fc.record({
  responses: fc.array(
    fc.tuple(
      routing,
      fc.oneof({ weight: 5, arbitrary: staticResponse }, { weight: 1, arbitrary: runnerResponse }),
    ),
    { minLength: 1, maxLength: 4 },
  ),
  onExhausted: fc.oneof(
    fc.constant<'repeat'>('repeat'),
    fc.constant<'fail'>('fail'),
    staticResponse,
  ),
  calls: fc.array(
    fc.oneof(
      {
        weight: 5,
        arbitrary: fc.array(
          word.map((w) => Buffer.from(w)),
          { maxLength: 3 },
        ),
      },
      {
        weight: 1,
        arbitrary: fc.array(
          fc.uint8Array({ maxLength: 6 }).filter((a) => !a.includes(0)),
          { maxLength: 3 },
        ),
      },
    ),
    { minLength: 1, maxLength: 6 },
  ),
  env: fc.option(
    word.map((w) => Buffer.from(w)),
    { nil: undefined },
  ),
  cwdName: fc.constantFrom('r', 'é dir', "it's", 'a\\b'),
});

/** The `match` and `times` a routed scenario draws, made concrete for the call's cwd. */
function routedResponse([r, response]: [Routing, MockResponse], cwd: string): MockResponse {
  const match: NonNullable<MockResponse['match']> = {};
  if (r.args !== undefined) match[r.prefix ? 'argsPrefix' : 'args'] = r.args;
  if (r.cwd !== undefined) {
    match.cwd = { here: cwd, elsewhere: `${cwd}-not`, any: any(), regex: /r$/ }[r.cwd];
  }
  if (r.env !== undefined) match.env = { SK_VAR: r.env };
  return { ...response, match, ...(r.times === undefined ? {} : { times: r.times }) };
}

/**
 * PERF-09: random routed scenarios (literal, any(), RegExp, cwd and env
 * matchers, `times`), each run once with the fast path and once without,
 * under `shell` as `sh`: the output, exit codes, files and call records must
 * be byte-identical. Returns how many calls the shell itself served.
 */
export async function checkRoutedShAgreesWithRunner(
  shell: string,
  { numRuns, seed }: { numRuns: number; seed?: number },
): Promise<number> {
  const base = testDir();
  let shServed = 0;
  await fc.assert(
    fc.asyncProperty(routedScenario, async (sc) => {
      const cwd = `${base}/${sc.cwdName}`;
      const responses = sc.responses.map((r) => routedResponse(r, cwd));
      const options = { responses, onExhausted: sc.onExhausted };
      shServed += await bothPathsAgree(shell, base, Buffer.from(cwd), options, sc.calls, sc.env);
    }),
    { numRuns, ...(seed === undefined ? {} : { seed }) },
  );
  return shServed;
}

/**
 * PERF-09 MB-02 MB-08: `callers` parallel calls, under `shell` as `sh`, on a
 * routed queue of literal routes with `times` 1–3, static responses (the
 * shell's) mixed with runner-only ones, about a third of the calls
 * SIGKILLed mid-call: no response answers more calls than its `times`, its
 * claim markers agree, every survivor printed what its record says it
 * claimed, and both paths served some.
 */
export async function expectRoutedStormExactlyOnce(
  shell: string,
  callers: number,
  seed: number,
): Promise<void> {
  const random = seededRandom(seed);
  const shapes = [['push'], ['pull', 'x'], ['log']];
  const queue: MockResponse[] = [];
  for (let i = 0, slots = 0; slots < callers; i++) {
    const shape = shapes[i % shapes.length] as string[];
    const times = 1 + Math.floor(random() * 3);
    slots += times;
    const stdout = `${shape.join(' ')} #${i + 1}\n`;
    const match = { argsPrefix: shape };
    queue.push(
      i % 4 === 3
        ? { match, times, chunks: [{ stdout, delayMs: 40 }] }
        : { match, times, stdout, delayMs: 40 + Math.floor(random() * 80) },
    );
  }
  await using git = createMockBinary('git', { responses: queue, onExhausted: 'fail' });
  const children = Array.from({ length: callers }, (_, k) =>
    spawnTracked(shell, [git.path, ...(shapes[k % shapes.length] as string[]), `c${k}`], {
      argv0: 'sh',
    }),
  );
  const exits = Promise.all(children.map(completion));
  for (const child of children) {
    if (random() < 0.35) setTimeout(() => child.kill('SIGKILL'), random() * 150);
  }
  const results = await exits;
  const calls = git.calls();
  const byTag = new Map(calls.map((c) => [c.argv.at(-1), c]));
  const uses = new Map<number, number>();
  for (const call of calls) {
    if (call.responseSource !== 'queue' || call.response === undefined) continue;
    uses.set(call.response, (uses.get(call.response) ?? 0) + 1);
    const shape = (queue[call.response - 1]?.match?.argsPrefix ?? []) as string[];
    expect(call.argv.slice(0, shape.length), `seed ${seed}`).toEqual(shape);
  }
  for (const [n, count] of uses) {
    expect(count, `seed ${seed}: response #${n} used`).toBeLessThanOrEqual(
      queue[n - 1]?.times as number,
    );
  }
  const markers = readdirSync(join(generationDir(git), 'claims'));
  queue.forEach((r, i) => {
    const mine = markers.filter((m) => m === `${i + 1}` || m.startsWith(`${i + 1}-`));
    expect(mine.length, `seed ${seed}: markers of #${i + 1}`).toBeLessThanOrEqual(
      r.times as number,
    );
  });
  for (const [k, exit] of results.entries()) {
    if (exit.signal !== null) continue;
    const call = byTag.get(`c${k}`);
    expect(call, `seed ${seed}: c${k} left no record`).toBeDefined();
    if (exit.code === 0) {
      const response = queue[(call?.response ?? 0) - 1];
      const stdout = response?.stdout ?? response?.chunks?.[0]?.stdout;
      expect(exit.stdout.toString(), `seed ${seed}: c${k}`).toBe(stdout);
    } else {
      expect(exit.code, `seed ${seed}: c${k} ${exit.stderr}`).toBe(MockExitCode.unmatched);
    }
  }
  const bySh = calls.filter((c) => isShRecord(git, c.index)).length;
  expect(bySh, `seed ${seed}: the shell served some`).toBeGreaterThan(0);
  expect(bySh, `seed ${seed}: the runner served some`).toBeLessThan(calls.length);
}
