import { describe, expectTypeOf, it } from 'vitest';
import {
  createMockBinary,
  createMockBinDir,
  type MockBinary,
  type MockBinaryOptions,
  type MockCall,
  MockExitCode,
  type MockResponse,
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
});
