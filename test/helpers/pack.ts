import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import type { PackCheck } from '../../src/index.js';
import { testDir } from './index.js';

/** A dir of this test's with these files (paths relative to it). */
export function writeDir(files: Record<string, string>): string {
  const dir = testDir('shimkit-pkg-');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** A package dir with this package.json (named fixture-pkg 1.2.3 unless it says) and these files. */
export function writePackage(manifest: object, files: Record<string, string>): string {
  return writeDir({
    'package.json': JSON.stringify({ name: 'fixture-pkg', version: '1.2.3', ...manifest }, null, 2),
    ...files,
  });
}

/** The check of a report by name; fails naming the checks there are when it is missing. */
export function check(report: { results: PackCheck[] }, name: string): PackCheck {
  const found = report.results.find((c) => c.name === name);
  expect(
    found,
    `no check named ${name}: ${report.results.map((c) => c.name).join(', ')}`,
  ).toBeDefined();
  return found as PackCheck;
}
