import { describe, expectTypeOf, it } from 'vitest';
import {
  createMockBinary,
  createMockBinDir,
  type MockBinary,
  type MockBinaryOptions,
  type MockBinDir,
  type MockCall,
  MockExitCode,
  type MockResponse,
  openMockBinDir,
  type PassthroughStats,
  type ShimkitError,
  type StateWriteError,
  UnusedResponsesError,
} from '../../src/index.js';

describe('public types', () => {
  it('createMockBinary returns a disposable MockBinary', () => {
    const git = createMockBinary('git');
    expectTypeOf(git).toEqualTypeOf<MockBinary>();
    expectTypeOf(git.path).toBeString();
    expectTypeOf(git.dispose).returns.resolves.toBeVoid();
    expectTypeOf(git[Symbol.asyncDispose]).toBeFunction();
    expectTypeOf(git.enqueue).parameter(0).toEqualTypeOf<MockResponse | readonly MockResponse[]>();
    expectTypeOf(git.enqueue({ stdout: 'x' })).toEqualTypeOf<MockBinary>();
    expectTypeOf(git.calls()).toEqualTypeOf<MockCall[]>();
    expectTypeOf(git.lastCall()).toEqualTypeOf<MockCall | undefined>();
    expectTypeOf(git.waitForCalls(1)).resolves.toEqualTypeOf<MockCall[]>();
  });

  it('response and option fields are typed', () => {
    // @ts-expect-error unknown field
    createMockBinary('git').enqueue({ ouptut: 'x' });
    // @ts-expect-error exitCode is a number
    createMockBinary('git').enqueue({ exitCode: '1' });
    expectTypeOf<MockBinaryOptions['onExhausted']>().toEqualTypeOf<
      'repeat' | 'fail' | MockResponse | undefined
    >();
    expectTypeOf<MockBinaryOptions['recordEnv']>().toEqualTypeOf<boolean | string[] | undefined>();
    expectTypeOf<MockCall['status']>().toEqualTypeOf<
      'running' | 'exited' | 'timed-out' | 'unmatched' | 'failed' | 'killed'
    >();
  });

  it('bin dirs make mocks without per-mock platform or tmpDir', () => {
    const bin = createMockBinDir();
    expectTypeOf(bin.mock('git')).toEqualTypeOf<MockBinary>();
    // @ts-expect-error platform belongs to the bin dir
    bin.mock('git', { platform: 'win32' });
  });

  it('errors and exit codes are exported with literal types', () => {
    expectTypeOf(MockExitCode.timeout).toEqualTypeOf<124>();
    expectTypeOf(new UnusedResponsesError('x')).toMatchTypeOf<ShimkitError>();
    expectTypeOf(new UnusedResponsesError('x').code).toBeString();
    expectTypeOf<StateWriteError>().toMatchTypeOf<ShimkitError>();
    expectTypeOf<StateWriteError['errno']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<StateWriteError['file']>().toEqualTypeOf<string>();
  });

  it('a call record says how long its claim took', () => {
    expectTypeOf<MockCall['claimMs']>().toEqualTypeOf<number | undefined>();
    // @ts-expect-error there is no lock to wait for
    expectTypeOf<MockCall['lockWaitMs']>().toBeNumber();
  });

  it('mock dirs that outlive their process, and passthrough with faults, are typed', () => {
    expectTypeOf(openMockBinDir).returns.toEqualTypeOf<MockBinDir>();
    expectTypeOf<MockBinDir['get']>().returns.toEqualTypeOf<MockBinary>();
    expectTypeOf(createMockBinDir)
      .parameter(0)
      .toMatchTypeOf<{ dir?: string; keep?: boolean } | undefined>();
    expectTypeOf<MockCall['proxy']>().toEqualTypeOf<PassthroughStats | undefined>();
    const ok: MockResponse = {
      passthrough: { framing: 'lines', faults: [{ action: 'drop', frame: 1 }] },
    };
    expectTypeOf(ok).toMatchTypeOf<MockResponse>();
    const framer = { decode: () => ({}), encode: (f: Buffer) => f };
    // @ts-expect-error a custom Framer cannot reach the shim: a framing name only
    const bad: MockResponse = { passthrough: { framing: framer } };
    expectTypeOf(bad).toMatchTypeOf<MockResponse>();
  });
});
