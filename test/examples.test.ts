import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCommand } from './helpers/index.js';

describe('the demo', () => {
  it('MB-07 npm run demo: the orchestrator runs against mocked git and deploy, every response used once', async () => {
    const demo = fileURLToPath(new URL('../examples/orchestrator/demo.mjs', import.meta.url));
    const r = await runCommand(process.execPath, [demo]);
    const out = r.stdout.toString();
    expect(r.stderr.toString()).toBe('');
    expect(r.code).toBe(0);
    expect(out).toMatch(/orchestrator exited with 2 after \d+ ms/);
    expect(out).toMatch(
      /mock "git" recorded 2 calls:\n {2}#1 git rev-parse --abbrev-ref HEAD {2}→ response #1, exit 0/,
    );
    expect(out).toContain('mock "deploy" recorded 3 calls:');
    // Three parallel deploys, three responses: each printed once, each claimed once.
    for (const line of [
      'deployed as d-101',
      'deployed as d-102',
      'FAILED (exit 3) quota exceeded',
    ]) {
      expect(out.split(line).length - 1, line).toBe(1);
    }
    for (const n of [1, 2, 3])
      expect(out.match(new RegExp(`#\\d deploy .*→ response #${n},`, 'g'))).toHaveLength(1);
    expect(out).toContain('every scripted response was used exactly once.');
  });
});
