import { onTestFinished } from 'vitest';
import { createMockServer, type MockServer, type MockServerOptions } from '../../src/index.js';
import { type Exit, runCommand } from './index.js';

/** A mock server disposed when the test finishes (after its own assertions). */
export async function server(options?: MockServerOptions): Promise<MockServer> {
  const api = await createMockServer(options);
  onTestFinished(async () => {
    try {
      await api.dispose();
    } catch {
      // a strict report is the test's business; cleanup happened before it threw
    }
  });
  return api;
}

/** Run curl (never through a proxy, at most 10 s), in its own process. */
export function curl(args: readonly string[]): Promise<Exit> {
  return runCommand('curl', ['-sS', '--noproxy', '*', '--max-time', '10', ...args]);
}

/** The args of curl that POSTs `json` to `url`. */
export function postJson(url: string, json: unknown): string[] {
  return [
    '-X',
    'POST',
    '-H',
    'content-type: application/json',
    '--data-binary',
    JSON.stringify(json),
    url,
  ];
}
