import type { WireHttpResponse } from '../types.js';
import type { Script, ScriptEntry } from './claim.js';
import { closeness, mismatch, type RequestView } from './fit.js';
import { WorkerPlaybook } from './playbook/engine.js';

/**
 * What a request no script entry took gets (design §7), and the other
 * answers the server makes up itself: errors in the shape both SDKs read
 * (`{"type":"error","error":{…}}`) with `x-should-retry: false`, so a
 * missing script shows as one request, not three.
 */

/** A JSON error answer: 500 unmatched, 500 handler timeout, 504 hold timeout … */
export function errorResponse(status: number, type: string, message: string): WireHttpResponse {
  const body = { type: 'error', error: { type, code: type, param: null, message } };
  return bodyResponse(
    status,
    [
      ['content-type', 'application/json'],
      ['x-should-retry', 'false'],
    ],
    Buffer.from(JSON.stringify(body)),
  );
}

/** `unmatched: 'echo'`: 200 with the request's own body and content-type. */
export function echoResponse(view: RequestView): WireHttpResponse {
  const type = view.headers['content-type'] ?? 'application/octet-stream';
  return bodyResponse(200, [['content-type', type]], view.body);
}

/** A whole body in one piece, no delay, cut or hold: what the server makes up itself. */
function bodyResponse(
  status: number,
  headers: Array<[string, string]>,
  body: Uint8Array,
): WireHttpResponse {
  return {
    status,
    headers,
    kind: 'body',
    pieces: [body],
    gaps: [0],
    delayMs: 0,
    cut: undefined,
    resetBeforeHeaders: false,
    times: 1,
    optional: false,
    retryable: false,
  };
}

/**
 * "shimkit: no scripted response for POST /v1/chat/completions (request #3).
 * Closest: expectation 'plan' — json.stream: expected true, got false. …"
 */
export function unmatchedText(
  script: Script,
  view: RequestView,
  label: string,
  verdicts: ReadonlyMap<ScriptEntry, boolean | string>,
  advice = API_ADVICE,
): string {
  const parts = [`shimkit: no scripted response for ${label}.`];
  let best: ScriptEntry | undefined;
  let bestScore = -1;
  for (const e of script.entries) {
    const score = closeness(e.match, view);
    if (score > bestScore) {
      best = e;
      bestScore = score;
    }
  }
  if (best) {
    const why =
      (best.kind === 'playbook' && !WorkerPlaybook.takes(view)
        ? `it takes only model requests (POST /v1/chat/completions, /v1/responses or /v1/messages, each also without /v1), and this is ${view.method.toUpperCase()} ${view.path}`
        : undefined) ??
      mismatch(best.match, view) ??
      (verdicts.get(best) === false
        ? 'its predicate returned false'
        : best.kind === 'playbook'
          ? 'it fits, but every action was taken'
          : `it fits, but was used up (${best.used} of ${best.times} time${best.times === 1 ? '' : 's'})`);
    parts.push(
      `Closest: ${best.kind === 'expect' ? 'expectation' : 'playbook'} '${best.name}' — ${why}.`,
    );
  } else {
    parts.push('No expectation was set.');
  }
  const method = view.method.toUpperCase();
  const fifoTakes = script.fifoMethods === undefined || script.fifoMethods.has(view.method);
  const fifo = script.fifo.length;
  parts.push(
    !fifoTakes
      ? `The FIFO answers only ${script.fifoMethodsText} requests (the fifoMethods option of createMockServer()), and this is ${method}.`
      : fifo === 0
        ? 'The FIFO is empty.'
        : `The FIFO's ${fifo} response${fifo === 1 ? ' was' : 's were'} used up.`,
  );
  const retried = script.retried;
  if (retried && retried.method === view.method && retried.path === view.path) {
    parts.push(
      `Request #${retried.seq} to ${method} ${view.path} got a scripted ${retried.status} (${retried.by}), and the OpenAI and Anthropic SDKs retry a 408, 409, 429 or 5xx answer (2 retries by default): this is likely such a retry. To answer the retries too, give that response \`times: 3\`; to have the SDK give up at once, add the header \`x-should-retry: false\` to it (reply.status(${retried.status}, { headers: { 'x-should-retry': 'false' } })); or make the client with maxRetries: 0.`,
    );
  }
  // A request the FIFO does not take is not answered by enqueueing: the advice's last part goes.
  const advised = fifoTakes ? advice : advice.replace(/,? or (api\.|shimkit )enqueue.*$/, '');
  const filled = advised.replace(/\{(method|path|shPath)\}/g, (_, key: string) =>
    key === 'method' ? method : key === 'path' ? view.path : shWord(view.path),
  );
  parts.push(`To answer it: ${filled}${/[.!?]$/.test(filled) ? '' : '.'}`);
  return parts.join(' ');
}

/** The default of `unmatchedAdvice`: the calls of the library's API. */
const API_ADVICE = "api.expect({ method: '{method}', path: '{path}' }, …) or api.enqueue(…)";

/** One POSIX shell word: as it is when nothing in it is special, else single-quoted. */
function shWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
