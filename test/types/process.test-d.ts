import { describe, expectTypeOf, it } from 'vitest';
import {
  type CommandNotFoundError,
  createSandbox,
  type NotATerminalError,
  type ProcessExit,
  type PtyOptions,
  type PtyUnavailableError,
  type Responder,
  type RunResult,
  run,
  type SandboxDiagnostics,
  type ScreenSnapshot,
  type ShimkitError,
  type SweepReport,
  spawnProcess,
  sweepLeftovers,
  type TestProcess,
  type TestSandbox,
  type WaitResult,
} from '../../src/index.js';
// Not on the public door yet (src/index.ts is edited elsewhere).
import type { StdinNotWritableError, StdinState } from '../../src/process/errors.js';

describe('public types: sandboxes and test processes', () => {
  it('createSandbox returns a disposable TestSandbox', () => {
    const sb = createSandbox({ git: true, keep: false, env: { CI: '1' } });
    expectTypeOf(sb).toEqualTypeOf<TestSandbox>();
    expectTypeOf(sb.env()).toEqualTypeOf<Record<string, string>>();
    expectTypeOf(sb.use).parameter(0).toEqualTypeOf<string | { readonly dir: string }>();
    expectTypeOf(sb.diagnostics()).toEqualTypeOf<SandboxDiagnostics>();
    expectTypeOf(sb[Symbol.asyncDispose]).toBeFunction();
    // @ts-expect-error unknown option
    createSandbox({ gti: true });
  });

  it('spawnProcess returns a TestProcess whose waits are typed', () => {
    const p = spawnProcess('git', ['status'], { tailBytes: 1024, stdin: 'ignore' });
    expectTypeOf(p).toEqualTypeOf<TestProcess>();
    expectTypeOf(p.pid).toBeNumber();
    expectTypeOf(p.stdout.tail()).toBeString();
    expectTypeOf(p.stdout.droppedBytes).toBeNumber();
    expectTypeOf(p.wait({ timeoutMs: 1 })).resolves.toEqualTypeOf<WaitResult>();
    expectTypeOf(p.close()).resolves.toEqualTypeOf<ProcessExit>();
    expectTypeOf(p.waitForOutput(/x/)).resolves.toEqualTypeOf<RegExpExecArray>();
    expectTypeOf(p.respond('?', 'y\n')).toEqualTypeOf<Responder>();
    expectTypeOf(p.kill('SIGINT')).toBeBoolean();
    // @ts-expect-error a signal name
    p.kill('INT');
    // @ts-expect-error stream is stdout, stderr or all
    p.waitForOutput('x', { stream: 'both' });
    // @ts-expect-error spawnProcess has no timeoutMs; use wait({ timeoutMs }) or run()
    spawnProcess('git', [], { timeoutMs: 5 });
  });

  it('run resolves with a RunResult; errors are ShimkitErrors', () => {
    expectTypeOf(
      run('git', [], { timeoutMs: 5000, input: 'x' }),
    ).resolves.toEqualTypeOf<RunResult>();
    expectTypeOf<RunResult['exitCode']>().toEqualTypeOf<number | null>();
    expectTypeOf<RunResult['timedOut']>().toEqualTypeOf<boolean>();
    expectTypeOf<CommandNotFoundError>().toMatchTypeOf<ShimkitError>();
    expectTypeOf<CommandNotFoundError['searched']>().toEqualTypeOf<readonly string[]>();
    expectTypeOf<CommandNotFoundError['notExecutable']>().toEqualTypeOf<readonly string[]>();
    expectTypeOf<StdinNotWritableError>().toMatchTypeOf<ShimkitError>();
    expectTypeOf<StdinNotWritableError['state']>().toEqualTypeOf<StdinState>();
    expectTypeOf<StdinState>().toEqualTypeOf<'not-a-pipe' | 'closed'>();
  });

  it('sweepLeftovers is synchronous and reports what it did', () => {
    expectTypeOf(sweepLeftovers({ dirs: ['/var/tmp/x'] })).toEqualTypeOf<SweepReport>();
    expectTypeOf<SweepReport['removed']>().toEqualTypeOf<string[]>();
    expectTypeOf<SweepReport['killed']>().toEqualTypeOf<number[]>();
    expectTypeOf<SweepReport['failed']>().toEqualTypeOf<{ path: string; reason: string }[]>();
    // @ts-expect-error dirs is a list
    sweepLeftovers({ dirs: '/tmp' });
  });
});

describe('public types: programs on a PTY (SP-13)', () => {
  it('SP-13 pty options, terminal methods and the screen are typed', () => {
    const p = spawnProcess('less', ['notes.txt'], { pty: { cols: 80, rows: 24 } });
    spawnProcess('vim', [], { pty: true });
    // @ts-expect-error unknown pty option
    spawnProcess('vim', [], { pty: { colums: 80 } });
    // @ts-expect-error a size is a number
    spawnProcess('vim', [], { pty: { cols: '80' } });
    expectTypeOf(p.screen()).toEqualTypeOf<ScreenSnapshot>();
    expectTypeOf(p.screen().lines).toEqualTypeOf<string[]>();
    expectTypeOf(p.screen().cursor).toEqualTypeOf<{ row: number; col: number }>();
    expectTypeOf(p.waitForScreen(/x/, { timeoutMs: 1 })).resolves.toEqualTypeOf<RegExpExecArray>();
    expectTypeOf(p.press).parameters.toEqualTypeOf<string[]>();
    expectTypeOf(p.type).parameter(0).toEqualTypeOf<string | Uint8Array>();
    expectTypeOf(p.resize).parameters.toEqualTypeOf<[number, number]>();
    expectTypeOf<PtyOptions>().toEqualTypeOf<{ cols?: number; rows?: number }>();
    expectTypeOf<PtyUnavailableError['code']>().toBeString();
    expectTypeOf<NotATerminalError>().toMatchTypeOf<ShimkitError>();
  });
});
