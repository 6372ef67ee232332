// Routing (MB-13) and strict mode and cardinality (MB-22), through real shims.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  any,
  CallAssertionError,
  createMockBinary,
  createMockBinDir,
  InvalidOptionError,
  InvalidResponseError,
  MockExitCode,
  UnusedResponsesError,
} from '../../src/index.js';
import { toWireResponse } from '../../src/mock-binary/options.js';
import { liveGeneration } from '../../src/queue/reader.js';
import { fits } from '../../src/queue/route.js';
import { claimRouted } from '../../src/queue/route-claim.js';
import type { WireConfig } from '../../src/queue/types.js';
import { runCommand, testDir } from '../helpers/index.js';
import { expectRoutedShapesExactlyOnce, expectTimesBoundUnderKills } from '../helpers/sized.js';

describe('routing', () => {
  it('MB-13 a call claims the first unclaimed response whose match fits: args, argsPrefix, RegExp, any()', async () => {
    await using git = createMockBinary('git', {
      onExhausted: 'fail',
      responses: [
        { match: { args: ['-C', 'r5', 'push'] }, stderr: 'rejected\n', exitCode: 1 },
        { match: { argsPrefix: ['-C', any()] }, stdout: 'fine\n', times: 3 },
        { match: { args: ['tag', /^v\d+\.\d+$/] }, stdout: 'tagged\n' },
        { stdout: 'anything\n' }, // no match: fits any call
      ],
    });
    const env = git.env();
    const call = async (...args: string[]) => {
      const r = await runCommand('git', args, { env });
      return `${r.code} ${r.stdout}${r.stderr}`;
    };
    expect(await call('-C', 'r1', 'push')).toBe('0 fine\n'); // #1 does not fit, #2 does
    expect(await call('-C', 'r5', 'push')).toBe('1 rejected\n');
    expect(await call('-C', 'r5', 'push')).toBe('0 fine\n'); // #1 is used: the next that fits
    expect(await call('tag', 'v1.2')).toBe('0 tagged\n');
    expect(await call('tag', 'v1.2.3')).toBe('0 anything\n'); // the RegExp does not fit
    expect(await call('-C', 'x', 'log')).toBe('0 fine\n'); // #2's third time
    const last = await runCommand('git', ['-C', 'y'], { env });
    expect(last.code).toBe(MockExitCode.unmatched); // #2 and #4 are used up, nothing else fits
    expect(git.calls().map((c) => c.response)).toEqual([2, 1, 2, 3, 4, 2, undefined]);
    git.assertNthCall(5, ['tag', /^v/]);
  });

  it("MB-13 times: 'always' answers every call it fits and is never used up; cwd and env matchers", async () => {
    const dir = testDir();
    await using git = createMockBinary('git', {
      onExhausted: 'fail',
      responses: [
        { match: { args: ['status'], cwd: dir }, stdout: 'in dir\n' },
        { match: { args: ['status'], env: { CI: 'true' } }, stdout: 'on ci\n', times: 'always' },
        { match: { args: ['status'], env: { CI: null } }, stdout: 'no ci\n', times: 'always' },
      ],
    });
    const env = { ...git.env(), CI: undefined };
    const out = async (options: { cwd?: string; env: NodeJS.ProcessEnv }) =>
      (await runCommand('git', ['status'], options)).stdout.toString();
    expect(await out({ cwd: dir, env })).toBe('in dir\n');
    expect(await out({ cwd: dir, env })).toBe('no ci\n'); // #1 is used; CI is unset
    for (let i = 0; i < 3; i++) expect(await out({ env: { ...env, CI: 'true' } })).toBe('on ci\n');
    expect(git.calls().map((c) => c.response)).toEqual([1, 3, 2, 2, 2]);
    git.assertDone();
  });

  // 64 calls in 4 shapes and 40 calls for times: 10 are in routing.stress.test.ts.
  it('MB-13 24 parallel calls in 4 argv shapes, arriving in random order, each get one of their own responses exactly once', () =>
    expectRoutedShapesExactlyOnce(6));

  it('MB-13 a response with times: n answers at most n of many parallel calls (20), some SIGKILLed mid-call', () =>
    expectTimesBoundUnderKills(20));

  it('MB-13 an unmatched call names the closest response and why it did not fit', async () => {
    await using git = createMockBinary('git', {
      responses: [
        { match: { args: ['status'] }, stdout: 's\n' },
        { match: { args: ['-C', 'r5', 'push', any()] }, exitCode: 1 },
      ],
    });
    const r = await runCommand('git', ['-C', 'r5', 'pull', 'origin'], { env: git.env() });
    expect(r.code).toBe(MockExitCode.unmatched);
    expect(r.stderr.toString()).toBe(
      'shimkit: mock "git" call #1 (git -C r5 pull origin) has no response: no response fits it; the closest is #2 (args ["-C", "r5", "push", any()]): arg 3: expected "push", got "pull". Add a response whose match fits this call, or fix the match.\n',
    );
    expect(git.lastCall()?.status).toBe('unmatched');
  });

  it('MB-13 what a call gets once what fits it is used up: repeat the last that fitted, fail, or the fallback', async () => {
    await using repeat = createMockBinary('git', {
      responses: [
        { match: { args: ['a'] }, stdout: 'a\n' },
        { match: { args: ['b'] }, stdout: 'b\n' },
      ],
    });
    const env = repeat.env();
    for (const arg of ['a', 'a', 'b', 'a']) await runCommand('git', [arg], { env });
    expect(repeat.calls().map((c) => [c.response, c.responseSource])).toEqual([
      [1, 'queue'],
      [1, 'repeat'],
      [2, 'queue'],
      [1, 'repeat'],
    ]);
    // Nothing fits: unmatched, even with onExhausted 'repeat' (no unrelated response is repeated).
    expect((await runCommand('git', ['c'], { env })).code).toBe(MockExitCode.unmatched);

    await using fallback = createMockBinary('gh', {
      onExhausted: { stdout: 'fallback\n' },
      responses: [{ match: { args: ['a'] }, stdout: 'a\n' }],
    });
    const fb = async (arg: string) =>
      (await runCommand('gh', [arg], { env: fallback.env() })).stdout.toString();
    expect([await fb('a'), await fb('a'), await fb('z')]).toEqual([
      'a\n',
      'fallback\n',
      'fallback\n',
    ]);

    await using fail = createMockBinary('kubectl', {
      onExhausted: 'fail',
      responses: [{ match: { args: ['get'] }, stdout: 'pods\n' }, { match: { args: ['x'] } }],
    });
    await runCommand('kubectl', ['get'], { env: fail.env() });
    const again = await runCommand('kubectl', ['get'], { env: fail.env() });
    expect(again.code).toBe(MockExitCode.unmatched);
    expect(again.stderr.toString()).toContain(
      'has no response: every response that fits it is used up (#1) and onExhausted is "fail". Enqueue another, raise its `times`, or set onExhausted.',
    );
  });

  it('MB-13 first arguments with quotes, backslashes, unicode and shared prefixes route exactly through real shims', async () => {
    const firsts = ['st', 'status', 'say "hi"', 'a\\b', 'ü日本', '', '-', '{"match"'];
    await using git = createMockBinary('git', {
      onExhausted: 'fail',
      responses: firsts.map((first, i) => ({
        match: { argsPrefix: [first] },
        stdout: `${i}\n`,
        times: 'always' as const,
      })),
    });
    for (const [i, first] of firsts.entries()) {
      const r = await runCommand('git', [first, 'x'], { env: git.env() });
      expect(r.stdout.toString()).toBe(`${i}\n`);
    }
    expect((await runCommand('git', ['stat'], { env: git.env() })).code).toBe(
      MockExitCode.unmatched,
    );
  });

  it('MB-13 the routed claim picks exactly what the matchers say, for random argv and matchers (lines ruled out unparsed or parsed)', () => {
    const config = { onExhausted: 'fail' } as WireConfig;
    const word = fc.constantFrom('a', 'ab', 'b', '"', '\\', 'ü', '');
    const element = fc.oneof(word, fc.constant(any()), fc.constantFrom(/^a/, /b$/));
    fc.assert(
      fc.property(
        fc.array(fc.record({ list: fc.array(element, { maxLength: 3 }), exact: fc.boolean() }), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.array(word, { maxLength: 3 }),
        fc.boolean(),
        (specs, argv, reorder) => {
          const wires = specs.map(({ list, exact }) =>
            toWireResponse({ match: exact ? { args: list } : { argsPrefix: list } }, 'r'),
          );
          // Hand-written lines may put keys in any order: those are parsed, not ruled out.
          const lines = wires.map((w) => JSON.stringify(reorder ? { stdout: 'x', ...w } : w));
          const call = { argv, cwd: '/', env: {} };
          const expected = wires.findIndex((w) => fits(w.match, call));
          const got = claimRouted(
            '/nonexistent',
            1,
            `${lines.join('\n')}\n`,
            call,
            config,
            () => true,
          );
          expect(got).toEqual(
            expected === -1 ? { source: 'none' } : { source: 'queue', response: expected + 1 },
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('MB-13 matchers are stored as JSON: a RegExp as { regex, flags } (g dropped), any() as { any: true }', async () => {
    await using git = createMockBinary('git', {
      responses: [{ match: { args: [/^V\d/gi, any()], env: { HOME: null } } }],
    });
    const line = readFileSync(join(liveGeneration(git.stateDir), 'queue.jsonl'), 'utf8').trim();
    expect(JSON.parse(line)).toEqual({
      match: { args: [{ regex: '^V\\d', flags: 'i' }, { any: true }], env: { HOME: null } },
    });
    const r = await runCommand('git', ['v1', 'x'], { env: { ...git.env(), HOME: undefined } });
    expect(r.code).toBe(0);
    expect(git.lastCall()?.response).toBe(1);
  });

  it('MB-13 a bad match, times or optional is refused where it was written, with what to write instead', async () => {
    await using git = createMockBinary('git');
    const bad = (response: object) => () => git.enqueue(response);
    expect(bad({ match: { args: 'push' } })).toThrow(InvalidResponseError);
    expect(bad({ match: { args: 'push' } })).toThrow('`args` must be an array');
    expect(bad({ match: { arg: ['push'] } })).toThrow('unknown key "arg"; did you mean args?');
    expect(bad({ match: { args: ['a'], argsPrefix: ['a'] } })).toThrow(
      'not both args and argsPrefix',
    );
    expect(bad({ match: { args: [1] } })).toThrow('`args[0]` must be a string, a RegExp or any()');
    expect(bad({ match: { env: { CI: 1 } } })).toThrow(
      '`env.CI` must be a string, a RegExp or any(), or null for unset',
    );
    expect(bad({ match: { args: [{ regex: '(', flags: '' }] } })).toThrow(
      'a valid regular expression',
    );
    expect(bad({ match: ['push'] })).toThrow('Expected the `match` field');
    expect(bad({ match: { args: [/^v/y] } })).toThrow(
      'a RegExp without the y flag (anchor it with ^ instead)',
    );
    expect(bad({ times: 0 })).toThrow("an integer from 1 to 1000000, or 'always'");
    expect(bad({ times: 'forever' })).toThrow("or 'always'");
    expect(bad({ optional: 'yes' })).toThrow(
      '`optional` field of the response passed to enqueue() on mock "git" to be true or false',
    );
    expect(git.queuedCount()).toBe(0);
  });
});

describe('strict mode and cardinality', () => {
  it('MB-22 strict: an unexpected call fails, nothing repeats, and dispose() throws naming what was not used', async () => {
    const git = createMockBinary('git', {
      strict: true,
      responses: [
        { match: { args: ['status'] }, stdout: 'clean\n' },
        { match: { args: ['push'] }, exitCode: 1 },
        { match: { args: ['fetch'] }, optional: true },
        { match: { args: ['log'] }, times: 2 },
      ],
    });
    const env = git.env();
    expect((await runCommand('git', ['status'], { env })).code).toBe(0);
    expect((await runCommand('git', ['status'], { env })).code).toBe(MockExitCode.unmatched); // no repeat
    expect((await runCommand('git', ['log'], { env })).code).toBe(0);
    const dir = git.dir;
    const error = await git.dispose().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnusedResponsesError);
    expect((error as Error).message).toMatch(
      /^mock "git": 2 of 4 responses used; never used: #2 \{match:\{args \["push"\]\},exitCode:1\}; used too few times: #4 \{match:\{args \["log"\]\},times:2\} \(1 of 2 times\); 1 call had no response \(#2\)\ncalls \(3\):/,
    );
    expect(existsSync(join(dir, '..'))).toBe(false); // the mock's root is removed anyway
    await expect(git.dispose()).resolves.toBeUndefined(); // once
  });

  it('MB-22 strict dispose() passes once every required response is used; optional ones may stay unused', async () => {
    await using bin = createMockBinDir();
    const git = bin.mock('git', {
      strict: true,
      responses: [{ stdout: 'a\n' }, { match: { args: ['x'] }, optional: true, times: 'always' }],
    });
    const gh = bin.mock('gh', { strict: true, responses: [{ stdout: 'pr\n' }] });
    await runCommand('git', [], { env: bin.env() });
    await runCommand('gh', [], { env: bin.env() });
    git.assertDone();
    gh.assertDone();
  });

  it('MB-22 a bin dir with strict mocks that are not done throws one report per mock on dispose()', async () => {
    const bin = createMockBinDir();
    bin.mock('git', { strict: true, responses: [{ stdout: 'a\n' }] });
    bin.mock('gh', { strict: true, responses: [{ stdout: 'b\n' }] });
    bin.mock('docker', { responses: [{ stdout: 'not strict\n' }] });
    const error = (await bin.dispose().catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(UnusedResponsesError);
    expect(error.message).toContain('mock "git": 0 of 1 responses used');
    expect(error.message).toContain('mock "gh": 0 of 1 responses used');
    expect(error.message).not.toContain('docker');
  });

  it('MB-22 strict refuses onExhausted and default, saying what to use instead', () => {
    expect(() => createMockBinary('git', { strict: true, onExhausted: 'repeat' })).toThrow(
      InvalidOptionError,
    );
    expect(() => createMockBinary('git', { strict: true, default: { stdout: 'x' } })).toThrow(
      "`strict: true` cannot take `default`: in strict mode a call no response is left for fails. Queue a response with `times: 'always'`",
    );
    expect(() => createMockBinary('git', { strict: 'yes' as never })).toThrow('`strict`');
  });

  it('MB-22 nthCall(i) and assertNthCall(i, args) with a readable argv diff', async () => {
    await using git = createMockBinary('git');
    for (const args of [['status'], ['push', 'origin', 'release/2.4']]) {
      await runCommand('git', args, { env: git.env() });
    }
    expect(git.nthCall(2).argv).toEqual(['push', 'origin', 'release/2.4']);
    git.assertNthCall(2, ['push', any(), /^release\//]);
    expect(() => git.assertNthCall(2, ['push', 'upstream', any()])).toThrow(CallAssertionError);
    expect(() => git.assertNthCall(2, ['push', 'upstream', any()])).toThrow(
      /^mock "git" call #2 had other arguments: arg 2: expected "upstream", got "origin"\n {2}expected: \["push", "upstream", any\(\)\]\n {2}got: {6}\["push","origin","release\/2\.4"\]\ncalls \(2\):/,
    );
    expect(() => git.assertNthCall(1, ['status', '-s'])).toThrow(
      'arg 2: expected "-s", got nothing',
    );
    expect(() => git.assertNthCall(2, ['push'])).toThrow('expected 1 arg, got 3 (extra: "origin")');
    expect(() => git.nthCall(3)).toThrow(
      /^mock "git" has no call #3: it was called 2 times\.\ncalls \(2\):/,
    );
    expect(() => git.nthCall(0)).toThrow('calls count from 1');
  });
});
