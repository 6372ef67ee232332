import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const TEST_ROOT = fileURLToPath(new URL('.', import.meta.url));

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the suite itself', () => {
  it('REL-01 no test sleeps for synchronisation: test files never await a bare timer', () => {
    // A bare timer in a test is a guess about how long something takes; tests
    // wait for conditions (waitForCalls, waitForFrames, expect.poll, helpers
    // with deadlines) instead. Helpers may poll; test files may not sleep.
    const sleeping = [
      /new Promise\(\s*\(?\s*(\w+)\s*\)?\s*=>\s*setTimeout\(\s*\1\s*,/, // await new Promise((r) => setTimeout(r, ms))
      /\bsleep\s*\(/,
      /timers\/promises/,
    ];
    const offences: string[] = [];
    const self = fileURLToPath(import.meta.url); // names the patterns, so it is not scanned
    const files = testFiles(TEST_ROOT).filter((file) => file !== self);
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (sleeping.some((pattern) => pattern.test(line))) {
            offences.push(`${relative(TEST_ROOT, file)}:${i + 1}: ${line.trim()}`);
          }
        });
    }
    expect(offences).toEqual([]);
  });

  it('REL-01 the pattern catches the sleeps it is meant to catch', () => {
    const pattern = /new Promise\(\s*\(?\s*(\w+)\s*\)?\s*=>\s*setTimeout\(\s*\1\s*,/;
    expect(pattern.test('await new Promise((r) => setTimeout(r, 100));')).toBe(true);
    expect(pattern.test('await new Promise(resolve => setTimeout(resolve, 5))')).toBe(true);
    expect(pattern.test("setTimeout(() => victim.kill('SIGKILL'), 10)")).toBe(false);
  });
});
