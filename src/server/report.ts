import type { ServerContext } from './context.js';
import { formatRequest } from './logged.js';
import { timesText, wanted } from './mirror.js';
import { playbookReport } from './playbook/state.js';
import type { WireHttpResponse } from './types.js';

/**
 * The text of `assertDone()` and of a strict server's `dispose()` (design §3
 * report.ts), in the style of a mock binary's: what was scripted and not
 * used as often as asked, then — under `strict` — the requests no script
 * entry took, with the reason each got, then the log. The count is of uses:
 * each response asks for its `times` (`'always'`: at least one), optional
 * ones for none, so what the lists miss is what the count misses.
 *
 *   mock server http://127.0.0.1:41234: 1 of 3 scripted uses made; never used: expectation 'plan' …; used too few times: fifo#1 … (1 of 2 times)
 */
export function notDoneReport(ctx: ServerContext, strict: boolean): string | undefined {
  return notDone(ctx, strict)?.text;
}

/** The report, and how many scripted uses it misses (`asked - made`). */
export function notDone(
  ctx: ServerContext,
  strict: boolean,
): { text: string; missing: number } | undefined {
  const { mirror } = ctx;
  const unused: string[] = [];
  const partly: string[] = [];
  // Uses, so the header and the lists agree: each response asks for `times` uses ('always': one), optional ones none.
  let made = 0;
  let asked = 0;
  const count = (what: string, n: number, times: number, optional: boolean) => {
    if (!optional) {
      asked += wanted(times);
      made += Math.min(n, wanted(times));
    }
    if (n >= wanted(times) || optional) return;
    if (n === 0) unused.push(what);
    else partly.push(`${what} (${n} of ${timesText(times)})`);
  };
  for (const e of mirror.expectations.values()) {
    count(`expectation '${e.name}' ${e.match} → ${e.summary}`, e.used, e.times, e.optional);
  }
  for (const f of mirror.fifo) count(`fifo#${f.index} ${f.summary}`, f.used, f.times, f.optional);
  const unmatched = strict ? mirror.unmatched() : [];
  const playbooks: string[] = [];
  for (const state of mirror.playbooks.values()) {
    const report = playbookReport(state);
    if (report !== undefined) playbooks.push(report);
  }
  if (
    unused.length === 0 &&
    partly.length === 0 &&
    unmatched.length === 0 &&
    playbooks.length === 0
  ) {
    return undefined;
  }
  const parts = [`${made} of ${asked} scripted use${asked === 1 ? '' : 's'} made`];
  if (unused.length > 0) parts.push(`never used: ${unused.join(', ')}`);
  if (partly.length > 0) parts.push(`used too few times: ${partly.join(', ')}`);
  if (unmatched.length > 0) {
    parts.push(
      `${unmatched.length} request${unmatched.length === 1 ? '' : 's'} had no scripted response (${unmatched.map((r) => `#${r.seq}`).join(', ')})`,
    );
  }
  if (playbooks.length > 0) {
    parts.push(
      `${playbooks.length} playbook${playbooks.length === 1 ? ' was' : 's were'} not played through`,
    );
  }
  const lines = [`${ctx.name}: ${parts.join('; ')}.`];
  for (const report of playbooks) lines.push(...report.split('\n').map((line) => `  ${line}`));
  for (const request of unmatched.slice(0, 5)) lines.push(`  ${request.error ?? ''}`);
  const log = mirror.entries;
  lines.push(log.length === 0 ? '  (no requests)' : `  requests (${log.length}):`);
  for (const request of log.slice(0, 20)) lines.push(`    ${formatRequest(request)}`);
  if (log.length > 20) lines.push(`    … ${log.length - 20} more`);
  return { text: lines.join('\n'), missing: asked - made };
}

/** `{status:429,json}`, `{sse:[12 events],cut:fin@3}`, `a function` — a response in a report. */
export function summariseResponse(wire: WireHttpResponse | undefined): string {
  if (wire === undefined) return 'a function';
  const parts = [`status:${wire.status}`];
  if (wire.kind === 'sse') parts.push(`sse:[${wire.pieces.length} events]`);
  else if (wire.kind === 'chunks') parts.push(`chunks:[${wire.pieces.length}]`);
  else if (wire.kind === 'wire') parts.push(`wire:[${wire.pieces[0]?.length ?? 0} bytes]`);
  else if ((wire.pieces[0]?.length ?? 0) > 0) parts.push(`body:[${wire.pieces[0]?.length} bytes]`);
  if (wire.cut) {
    const at =
      wire.cut.afterEvents !== undefined
        ? `${wire.cut.afterEvents} events`
        : `${wire.cut.afterBytes} bytes`;
    parts.push(`cut:${wire.cut.how} after ${at}`);
  }
  if (wire.resetBeforeHeaders) parts.push('resetBeforeHeaders');
  return `{${parts.join(',')}}`;
}
