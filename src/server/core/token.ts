import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Intake } from './intake.js';
import type { CoreParts } from './parts.js';
import { refusal } from './refuse.js';

/**
 * `requireToken` (HT-15): on a shared host any local user can reach a
 * loopback port. With a token, a request that does not carry it — as
 * `authorization: Bearer <token>` or `x-api-key: <token>`, which is how the
 * OpenAI and Anthropic SDKs send the API keys `env()` sets to it — is
 * answered 401 here, before any claim: it takes no expectation, FIFO
 * entry, playbook step or hold, and its log entry says it was refused.
 */

/** Whether the request's headers carry `token`. */
export function carriesToken(headers: Record<string, string>, token: string): boolean {
  const bearer = /^bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '')?.[1];
  return same(bearer, token) || same(headers['x-api-key']?.trim(), token);
}

function same(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Answer 401 and log the request as refused; nothing of the script is touched. */
export function unauthorized(
  parts: CoreParts,
  req: IncomingMessage,
  res: ServerResponse,
  intake: Intake,
): void {
  const headers = intake.view.headers;
  const seen =
    headers.authorization !== undefined || headers['x-api-key'] !== undefined
      ? 'a token that is not this server’s'
      : 'no token';
  const { x, body } = refusal(
    parts,
    req,
    res,
    intake,
    401,
    'shimkit_token_required',
    (label) =>
      `shimkit: refused ${label}: it carries ${seen}, and this server requires its token (requireToken; shimkit serve --require-token): send it as "authorization: Bearer <token>" or "x-api-key: <token>" — env() sets OPENAI_API_KEY and ANTHROPIC_API_KEY to it. Answered 401; nothing scripted was used.`,
  );
  res.end(body, () => x.finish());
}
