// VT-03: the core imports no test framework; only shimkit/vitest and shimkit/jest do.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

const FRAMEWORK =
  /(?:from\s+|require\()\s*['"](?:vitest|@vitest\/[^'"]+|jest|@jest\/[^'"]+|node:test)['"]/;

describe('the core', () => {
  it('VT-03 no source file outside src/vitest and src/jest imports vitest, jest or node:test', () => {
    const core = files('src').filter((f) => !/src[\\/](vitest|jest)[\\/]/.test(f));
    expect(core.length).toBeGreaterThan(50);
    expect(core.filter((f) => FRAMEWORK.test(readFileSync(f, 'utf8')))).toEqual([]);
    expect(FRAMEWORK.test(readFileSync('src/vitest/index.ts', 'utf8'))).toBe(true); // the pattern works
  });

  it('VT-03 the built core (dist/index.*, the runners) names no test framework', () => {
    for (const file of [
      'dist/index.js',
      'dist/index.cjs',
      'dist/runner.cjs',
      'dist/runner-cold.cjs',
    ]) {
      expect(FRAMEWORK.test(readFileSync(file, 'utf8')), file).toBe(false);
    }
  });

  it('VT-01 shimkit/vitest is ESM only, as vitest is: no CommonJS build, no require branch in its export', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
    expect(pkg.exports['./vitest']).toEqual({
      types: './dist/vitest.d.ts',
      default: './dist/vitest.js',
    });
    const built = readdirSync('dist');
    expect(built).toContain('vitest.js');
    expect(built.filter((f) => /^vitest\.(cjs|d\.cts)/.test(f))).toEqual([]);
    expect(built).toContain('jest.cjs'); // jest runs CommonJS: that build stays
  });
});
