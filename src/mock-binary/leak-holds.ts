// What an undisposed mock still holds, for the leak sanitizer (LK-02): its
// calls still running, holds not released, responses never claimed, and for
// a strict mock what assertDone() would say. Read from the state dir as
// calls() reads it; every part is caught (see holdLines()).
import { counted, holdLines, messageOf, secondsText } from '../internal/leak-lines.js';
import { formatCommand } from '../queue/format.js';
import { type RecordCache, readSnapshot, type Snapshot } from '../queue/reader.js';
import { notDoneReport } from './calls.js';
import type { LiveChannel } from './live.js';

/** Live calls listed by name before `… and N more`. */
const LISTED = 5;

/** What the leak report reads of a mock. */
export interface LeakView {
  readonly name: string;
  readonly stateDir: string;
  readonly records: RecordCache;
  readonly strict: boolean;
  readonly live: LiveChannel | undefined;
}

/**
 * The lines, e.g.
 *   2 live calls: git push origin main (pid 4242, 3.1 s); git fetch (pid 4243, 0.2 s)
 *   1 hold of git not released: call #2 git push a (held 1.0 s)
 *   2 responses of git never claimed
 */
export function mockLeakHolds(view: LeakView): string[] {
  const holds = () => view.live?.leakLine();
  let snapshot: Snapshot;
  try {
    snapshot = readSnapshot(view.stateDir, view.records);
  } catch (error) {
    // One line when the state cannot be read, not one per part that needs it.
    return [
      `could not read its state dir: ${messageOf(error)}`,
      ...holdLines({ 'its holds': holds }),
    ];
  }
  return holdLines({
    'its live calls': () => liveCalls(view.name, snapshot),
    'its holds': holds,
    'its queue': () =>
      view.strict ? strictLine(view.name, snapshot) : unclaimed(view.name, snapshot),
  });
}

function liveCalls(name: string, snapshot: Snapshot): string | undefined {
  const live = snapshot.calls.filter((c) => c.status === 'running' && c.ended !== true);
  if (live.length === 0) return undefined;
  const now = Date.now();
  const shown = live.slice(0, LISTED).map((c) => {
    const age = typeof c.startedAt === 'number' ? `, ${secondsText(now - c.startedAt)}` : '';
    return `${formatCommand(name, c.argv)} (pid ${c.pid}${age})`;
  });
  const more = live.length > LISTED ? ` … and ${live.length - LISTED} more` : '';
  return `${counted(live.length, 'live call')}: ${shown.join('; ')}${more}`;
}

function unclaimed(name: string, snapshot: Snapshot): string | undefined {
  let n = 0;
  for (let i = 1; i <= snapshot.queue.length; i++) if (!snapshot.claims.has(i)) n += 1;
  return n === 0 ? undefined : `${counted(n, 'response')} of ${name} never claimed`;
}

/** A strict mock: the first line of what assertDone() would throw (`mock "git": 1 of 3 responses used; …`). */
function strictLine(name: string, snapshot: Snapshot): string | undefined {
  const report = notDoneReport(name, snapshot);
  return report === undefined ? undefined : `strict, not done: ${report.split('\n')[0]}`;
}
