// Passthrough never loops (MB-15): a wrapper on PATH that runs "the next
// gcc that is not itself" (ccache, distcc) finds the shim again; the call it
// makes is refused with a diagnostic naming the wrapper, while a real
// command that calls another mocked command is served as usual.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMockBinary } from '../../src/index.js';
import { runCommand, testDir } from '../helpers/index.js';

/** An executable sh script `name` in a dir of its own; returns the dir. */
function script(name: string, lines: string[]): string {
  const dir = testDir();
  writeFileSync(join(dir, name), ['#!/bin/sh', ...lines, ''].join('\n'));
  chmodSync(join(dir, name), 0o755);
  return dir;
}

/**
 * A ccache-style `gcc`: it runs the first "gcc" on PATH that is not itself,
 * with the arguments it got (and `extra`, appended each time, if given).
 */
function ccacheWrapper(extra = ''): string {
  return script('gcc', [
    'self=$(cd "$(dirname "$0")" && pwd)/gcc',
    'IFS=:',
    'for d in $PATH; do',
    `  if [ -x "$d/gcc" ] && [ "$d/gcc" != "$self" ]; then exec "$d/gcc" "$@"${extra}; fi`,
    'done',
    'echo "wrapper: no gcc" >&2; exit 127',
  ]);
}

describe('passthrough that would never end', () => {
  it('MB-15 a spy behind a ccache-style wrapper refuses the call the wrapper makes again, naming the wrapper', async () => {
    const real = script('gcc', ['printf "real gcc:%s\\n" "$@"']);
    const wrapper = ccacheWrapper();
    await using gcc = createMockBinary('gcc', { spy: true, timeoutMs: 3000 });
    const env = gcc.env({ ...process.env, PATH: `${wrapper}:${real}:/usr/bin:/bin` });
    const r = await runCommand('gcc', ['-c', 'x.c'], { env, timeout: 30_000 });
    expect(r.code).toBe(127);
    expect(r.stderr.toString()).toBe(
      `shimkit: mock "gcc" call #2 (gcc -c x.c) was made by the real command it passes through to, ${wrapper}/gcc, which ran "gcc" again with the same arguments, and found this mock instead of the real one (1 passthrough deep), so passing it through would never end. A wrapper such as ccache or distcc runs the next "gcc" on PATH that is not itself: tell it where the real gcc is (ccache: CCACHE_PATH), or mock the command the wrapper runs instead.\n`,
    );
    expect(gcc.calls().map((c) => [c.index, c.status, c.exitCode])).toEqual([
      [1, 'exited', 127],
      [2, 'failed', 127],
    ]);
  });

  it('MB-15 a real command that calls another spied command is served, and no record shows the chain', async () => {
    const realInner = script('inner', ['printf "real inner:%s\\n" "$@"']);
    const realOuter = script('outer', ['printf "real outer\\n"', 'exec inner "$@"']);
    await using inner = createMockBinary('inner', { spy: true, recordEnv: true });
    await using outer = createMockBinary('outer', { spy: true, recordEnv: true });
    const env = outer.env(
      inner.env({ ...process.env, PATH: `${realOuter}:${realInner}:/usr/bin:/bin` }),
    );
    const r = await runCommand('outer', ['a'], { env, timeout: 30_000 });
    expect(r.stdout.toString()).toBe('real outer\nreal inner:a\n');
    expect(r.code).toBe(0);
    expect(outer.calls().map((c) => c.status)).toEqual(['exited']);
    expect(inner.calls().map((c) => [c.argv, c.status])).toEqual([[['a'], 'exited']]);
    for (const call of [...outer.calls(), ...inner.calls()]) {
      expect(Object.keys(call.env ?? {})).not.toContain('SHIMKIT_PASSED_THROUGH');
    }
  });

  it('MB-15 a wrapper that changes the arguments each time is taken for a loop at the 9th call of the mock in one chain', async () => {
    const real = script('gcc', ['printf "real gcc:%s\\n" "$@"']);
    const wrapper = ccacheWrapper(' -v');
    await using gcc = createMockBinary('gcc', { spy: true, timeoutMs: 10_000 });
    const env = gcc.env({ ...process.env, PATH: `${wrapper}:${real}:/usr/bin:/bin` });
    const r = await runCommand('gcc', ['x.c'], { env, timeout: 60_000 });
    expect(r.code).toBe(127);
    expect(r.stderr.toString()).toContain(
      `mock "gcc" call #9 (gcc x.c -v -v -v -v -v -v -v -v) was made by the real command it passes through to, ${wrapper}/gcc, which ran "gcc" again and found this mock instead of the real one, the 9th time in one chain, so it is taken for a loop.`,
    );
    expect(gcc.callCount()).toBe(9);
  });

  it('MB-15 a real command that runs itself with other arguments is served: node -e starting node -p, a script calling itself once', async () => {
    await using node = createMockBinary('node', { spy: true });
    const env = node.env();
    const r = await runCommand(
      'node',
      ['-e', "process.stdout.write(require('child_process').execFileSync('node', ['-p', '40+2']))"],
      { env, timeout: 30_000 },
    );
    expect({ code: r.code, stdout: r.stdout.toString() }).toEqual({ code: 0, stdout: '42\n' });
    expect(node.calls().map((c) => [c.argv[0], c.status, c.exitCode])).toEqual([
      ['-e', 'exited', 0],
      ['-p', 'exited', 0],
    ]);
    const dir = script('again', [
      'if [ "$1" = outer ]; then again inner; else echo "inner done"; fi',
    ]);
    await using again = createMockBinary('again', { spy: true });
    const r2 = await runCommand('again', ['outer'], {
      env: again.env({ ...process.env, PATH: `${dir}:/usr/bin:/bin` }),
      timeout: 30_000,
    });
    expect({ code: r2.code, stdout: r2.stdout.toString() }).toEqual({
      code: 0,
      stdout: 'inner done\n',
    });
    expect(again.calls().map((c) => c.argv)).toEqual([['outer'], ['inner']]);
  });
});
