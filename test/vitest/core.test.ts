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

  it('VT-01 shimkit/vitest resolves under require as well as import, to the same builds of the types as shimkit (a TypeScript project checked as CommonJS mixes no builds)', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
    for (const entry of ['.', './vitest']) {
      expect(pkg.exports[entry].require.types, entry).toMatch(/\.d\.cts$/);
      expect(pkg.exports[entry].import.types, entry).toMatch(/\.d\.ts$/);
    }
  });
});
