import {
  type LoggedRequest,
  type MockServer,
  type MockServerResponse,
  type Playbook,
  PlaybookError,
  type PlaybookJson,
  type RequestMatch,
  ShimkitError,
  UnusedResponsesError,
} from 'shimkit';
import { type ControlReply, type ControlRequest, LINES } from './control.js';
import { CliHolds } from './held.js';

/**
 * What `shimkit serve` does with each control request: the MockServer's
 * own methods, with data from the other commands (their flags, already
 * turned into a match and a MockServerResponse, or a playbook's JSON form).
 * The server's checks are the library's: a bad response comes back as its
 * InvalidResponseError. `playbooks` holds the server's playbooks (those of
 * `--playbook` first), for `shimkit tool-calls` and `tool-results`.
 */
export function controlHandler(
  api: MockServer,
  stop: () => void,
  playbooks: Playbook[],
): (request: ControlRequest) => Promise<ControlReply> {
  const holds = new CliHolds();
  return async (request) => {
    switch (request.op) {
      case 'hold':
        return { name: holds.add(api, request.match, request.options) };
      case 'release':
        return holds.release(request);
      case 'reset':
        api.reset();
        holds.clear();
        playbooks.length = 0; // forgotten by the server: no longer for tool-calls
        return {};
      case 'wait-requests': {
        const log = await api.waitForRequests(
          request.n,
          request.timeoutMs === undefined ? undefined : { timeoutMs: request.timeoutMs },
        );
        return { count: log.length };
      }
      case 'playbook': {
        const playbook = api.playbook(request.playbook as PlaybookJson);
        playbooks.push(playbook);
        return { name: playbook.name, total: playbook.total };
      }
      case 'playbooks':
        return { playbooks: playbooks.map(playbookJson) };
      case 'expect': {
        const expectation = api.expect(
          request.match as RequestMatch,
          request.response as MockServerResponse,
          request.options,
        );
        return { name: expectation.name };
      }
      case 'expect-many': {
        const names: string[] = [];
        for (const [i, one] of request.expectations.entries()) {
          try {
            names.push(
              api.expect(one.match as RequestMatch, one.response as MockServerResponse, one.options)
                .name,
            );
          } catch (error) {
            if (error instanceof Error) {
              error.message = `expectation ${i + 1} of --jsonl (${names.length} added before it): ${error.message}`;
            }
            throw error;
          }
        }
        return { names };
      }
      case 'enqueue':
        api.enqueue(request.responses as MockServerResponse[]);
        return { count: request.responses.length };
      case 'requests':
        return logSlice(api.requests(), request.since ?? 0, request.limit);
      case 'verify': {
        const requests = api.requests().length;
        try {
          api.assertDone();
          return { done: true, url: api.url, requests, report: null };
        } catch (error) {
          if (!(error instanceof UnusedResponsesError)) throw error;
          return { done: false, url: api.url, requests, report: error.message };
        }
      }
      case 'stop':
        setImmediate(stop); // after this answer is written
        return { url: api.url, pid: process.pid };
      default:
        throw new ShimkitError(
          'ERR_SHIMKIT_SERVER_CONTROL',
          `unknown control request ${JSON.stringify((request as { op?: unknown }).op)} (a \`shimkit\` of another version?).`,
        );
    }
  };
}

/** A playbook as JSON (`shimkit tool-calls --json`, `tool-results --json`): its records and what is left. */
export function playbookJson(playbook: Playbook): Record<string, unknown> {
  let report: string | null = null;
  try {
    playbook.assertDone();
  } catch (error) {
    if (!(error instanceof PlaybookError)) throw error;
    report = error.message;
  }
  return {
    name: playbook.name,
    consumed: playbook.consumed,
    total: playbook.total,
    done: report === null,
    remaining: playbook.remaining(),
    turns: playbook.turns(),
    toolCalls: playbook.toolCalls(),
    toolResults: playbook.toolResults(),
    report,
  };
}

/** The body as JSON, or null; parsed here, not through `request.json`, which would keep the value (a daemon's memory). */
function parsed(text: string, body: Buffer): unknown {
  if (body.length === 0) return null;
  try {
    return JSON.parse(text) ?? null;
  } catch {
    return null;
  }
}

/**
 * `shimkit requests D [--since SEQ] [--limit N]`: the entries after seq
 * `since`, at most `limit`, streamed one JSON line each (found by a binary
 * search: the log is in seq order, so the tail of a long log is as quick
 * as a short one), with the counts in the first line.
 */
export function logSlice(
  log: readonly LoggedRequest[],
  since: number,
  limit?: number,
): ControlReply {
  let low = 0;
  let high = log.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((log[mid] as LoggedRequest).seq <= since) low = mid + 1;
    else high = mid;
  }
  const end = limit === undefined ? log.length : Math.min(log.length, low + limit);
  let bodiesDropped = 0;
  for (const request of log) if (request.bodyDropped) bodiesDropped++;
  return {
    total: log.length,
    count: end - low,
    bodiesDropped,
    [LINES]: (function* () {
      for (let i = low; i < end; i++) yield requestJson(log[i] as LoggedRequest);
    })(),
  };
}

/** A log entry as JSON (`shimkit requests --json`): the body as text when it is UTF-8, else base64; null for what is not there. */
export function requestJson(request: LoggedRequest): Record<string, unknown> {
  const { body, response } = request;
  const text = body.toString('utf8');
  return {
    seq: request.seq,
    method: request.method,
    path: request.path,
    query: request.query,
    headers: request.headers,
    ...(Buffer.from(text, 'utf8').equals(body)
      ? { body: text }
      : { bodyBase64: body.toString('base64') }),
    bodyBytes: request.bodyBytes,
    bodyTruncated: body.length < request.bodyBytes,
    bodyDropped: request.bodyDropped === true,
    json: parsed(text, body),
    receivedAt: request.receivedAt,
    claimedBy: request.claimedBy,
    error: request.error ?? null,
    response: {
      status: response.status ?? null,
      bytesSent: response.bytesSent,
      events: response.events,
      endedBy: response.endedBy ?? null,
      startedAt: response.startedAt ?? null,
      endedAt: response.endedAt ?? null,
    },
  };
}
