import { describe, expectTypeOf, it } from 'vitest';
import {
  type BinExpect,
  type BinRun,
  createSandbox,
  formatPackedInstallReport,
  type ImportChecks,
  type PackCheck,
  type PackCheckKind,
  type PackedInstallError,
  type PackedInstallOptions,
  type PackedInstallReport,
  type ShimkitError,
  verifyPackedInstall,
} from '../../src/index.js';

describe('SP-12 public types: verifyPackedInstall and its options', () => {
  it('SP-12 takes optional PackedInstallOptions and gives a Promise of the report', () => {
    expectTypeOf(verifyPackedInstall).parameters.toEqualTypeOf<[PackedInstallOptions?]>();
    expectTypeOf(verifyPackedInstall).returns.toEqualTypeOf<Promise<PackedInstallReport>>();
    expectTypeOf(verifyPackedInstall()).resolves.toEqualTypeOf<PackedInstallReport>();
    expectTypeOf(formatPackedInstallReport)
      .parameter(1)
      .toEqualTypeOf<{ timings?: boolean } | undefined>();
    expectTypeOf<PackedInstallError>().toMatchTypeOf<ShimkitError>();
  });

  it('SP-12 each option has its type, and every one is optional', () => {
    expectTypeOf<Record<never, never>>().toMatchTypeOf<PackedInstallOptions>();
    expectTypeOf<PackedInstallOptions['packageDir']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<PackedInstallOptions['run']>().toEqualTypeOf<readonly BinRun[] | undefined>();
    expectTypeOf<PackedInstallOptions['imports']>().toEqualTypeOf<
      'all' | 'none' | ImportChecks | undefined
    >();
    expectTypeOf<PackedInstallOptions['peers']>().toEqualTypeOf<
      Readonly<Record<string, string>> | undefined
    >();
    expectTypeOf<PackedInstallOptions['npmConfig']>().toEqualTypeOf<
      Readonly<Record<string, string>> | undefined
    >();
    expectTypeOf<PackedInstallOptions['offline']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<PackedInstallOptions['timeoutMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<PackedInstallOptions['preload']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<PackedInstallOptions['registry']>().toEqualTypeOf<string | undefined>();
    expectTypeOf(createSandbox()).toMatchTypeOf<NonNullable<PackedInstallOptions['sandbox']>>();
    expectTypeOf<ImportChecks>().toEqualTypeOf<{
      import?: boolean;
      require?: boolean;
      types?: boolean;
      subpaths?: readonly string[];
      typesOnly?: readonly string[];
      esmOnly?: readonly string[];
    }>();
    expectTypeOf<BinRun['bin']>().toEqualTypeOf<string>();
    expectTypeOf<BinExpect['stdout']>().toEqualTypeOf<string | RegExp | undefined>();
  });

  it('SP-12 a well-formed call compiles; a misspelt or mistyped option does not', () => {
    const args = ['--version'] as const;
    verifyPackedInstall({
      packageDir: '.',
      run: [{ bin: 'my-cli', args, expect: { exitCode: 0, stdout: /\d/ }, input: 'y\n' }],
      imports: { require: false, subpaths: ['.'], typesOnly: ['./types'] },
      peers: { vitest: '^4' },
      offline: true,
      timeoutMs: 60_000,
    });
    verifyPackedInstall({ imports: 'none' });
    // @ts-expect-error imports is 'all', 'none' or an ImportChecks
    verifyPackedInstall({ imports: 'some' });
    // @ts-expect-error a bin is named by a string
    verifyPackedInstall({ run: [{ bin: 1 }] });
    // @ts-expect-error args are strings
    verifyPackedInstall({ run: [{ bin: 'x', args: [1] }] });
    // @ts-expect-error no such option (excess property)
    verifyPackedInstall({ pakageDir: '.' });
    // @ts-expect-error peers map a name to a range
    verifyPackedInstall({ peers: { vitest: 4 } });
    // @ts-expect-error offline is a boolean
    verifyPackedInstall({ offline: 'yes' });
  });

  it('SP-12 the report is plain data; a check may carry a warning', () => {
    expectTypeOf<PackedInstallReport['results']>().toEqualTypeOf<PackCheck[]>();
    expectTypeOf<PackedInstallReport['notes']>().toEqualTypeOf<string[]>();
    expectTypeOf<PackCheck['kind']>().toEqualTypeOf<PackCheckKind>();
    expectTypeOf<PackCheck['warning']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<PackCheckKind>().toEqualTypeOf<
      'pack' | 'install' | 'bin' | 'import' | 'require' | 'types'
    >();
  });
});
