import { readFileSync } from 'node:fs';

/** A process's resident set (`VmRSS`) and its peak so far (`VmHWM`), in bytes (Linux /proc). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Resolve once `read()` has not changed for `checks` polls in a row (the pipeline is full). */
export async function stalled(
  read: () => number,
  { every = 100, checks = 5, timeoutMs = 60_000 } = {},
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let same = 0;
  while (Date.now() < deadline) {
    const now = read();
    same = now === last && now > 0 ? same + 1 : 0;
    if (same >= checks) return now;
    last = now;
    await new Promise((r) => setTimeout(r, every));
  }
  throw new Error(`no stall within ${timeoutMs} ms (last value ${last})`);
}
