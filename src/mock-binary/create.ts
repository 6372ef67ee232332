import { MockBinDir } from './bin-dir.js';
import type { MockBinary } from './mock-binary.js';
import { validateBinaryName } from './name.js';
import { resolveOptions } from './options.js';
import type { MockBinaryOptions } from './types.js';

/**
 * Create a mock binary in a temp dir of its own. Each call of the shim claims
 * the next scripted response exactly once, even under many parallel calls,
 * and is recorded.
 *
 * @example
 * await using git = createMockBinary('git', { responses: [{ stdout: 'main\n' }] });
 * const out = execFileSync('git', ['branch', '--show-current'], { env: git.env() });
 * expect(String(out)).toBe('main\n');
 * git.assertDone();
 */
export function createMockBinary(name: string, options: MockBinaryOptions = {}): MockBinary {
  // Everything is validated before anything is written to disk.
  const resolved = resolveOptions(String(name), options);
  validateBinaryName(name, resolved.platform);
  const { tmpDir, platform, ...rest } = options;
  const bin = new MockBinDir({ tmpDir, platform });
  try {
    return bin.mock(name, rest).ownBinDir();
  } catch (error) {
    bin.disposeSync();
    throw error;
  }
}
