import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { vi } from 'vitest';
import type { MockBinary } from '../../src/index.js';
import type { CallStep, WireState } from '../../src/queue/types.js';
import { publishState } from '../../src/queue/writer.js';

/** The live generation dir of a mock (to read or plant protocol files in tests). */
export function generationDir(mock: MockBinary): string {
  return join(mock.stateDir, readState(mock).generation);
}

function readState(mock: MockBinary): { generation: string; config: Record<string, unknown> } {
  return JSON.parse(readFileSync(join(mock.stateDir, 'state.json'), 'utf8'));
}

/**
 * Make every new call of `mock` stop itself (SIGSTOP) at `step` of the
 * protocol, or stop doing so (`undefined`): the runner's test hook, so a test
 * can kill or hold a call at an exact point. While it is set the sh shim
 * hands every call to the runner (see shStateText).
 */
export function stopCallsAt(mock: MockBinary, step: CallStep | undefined): void {
  const state = readState(mock) as unknown as WireState;
  if (step === undefined) delete state.config.stopAt;
  else state.config.stopAt = step;
  publishState(mock.stateDir, state);
}

/** The state letter of a process from /proc ('T' when stopped), or undefined once it is gone. */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.charAt(stat.lastIndexOf(')') + 2);
  } catch {
    return undefined;
  }
}

/** Wait (with a deadline) until `pid` has stopped itself. */
export async function waitUntilStopped(pid: number | undefined, timeoutMs = 10_000): Promise<void> {
  await vi.waitFor(
    () => {
      if (processState(pid ?? -1) !== 'T') throw new Error(`pid ${pid} has not stopped yet`);
    },
    { timeout: timeoutMs, interval: 5 },
  );
}
