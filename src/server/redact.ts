import { REDACTED, SECRET_KEY_PATTERN } from '../internal/secrets.js';

/**
 * What a cassette never writes (HT-09): credentials in headers, in the
 * query and in a JSON request body. The serving thread redacts a recorded interaction before it leaves
 * that thread, so no secret reaches the test's thread's copy or the file.
 * Names are compared in any case; SECRET_KEY_PATTERN is the one that env
 * redaction uses (src/internal/secrets.ts), so the two never disagree.
 */

/** Headers redacted whatever SECRET_KEY_PATTERN says (it already covers most). */
const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'cookie',
  'set-cookie',
]);

/** Query parameters that carry credentials without saying so (OAuth codes), by whole name. */
const SECRET_QUERY = new Set(['code']);

/**
 * Words that make a name key-like wherever they stand in it (its parts split
 * at any non-letter-or-digit and at a lower-to-upper case change), which
 * SECRET_KEY_PATTERN (KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL … anywhere:
 * `api_key`, `Access_Token`, `X-Amz-Credential`) does not cover: signed URLs'
 * `X-Amz-Signature`, `X-Goog-Signature`, `sig`, `uploadSig`, webhooks'
 * `X-Hub-Signature-256`, `hmac`.
 */
const SECRET_PARTS = new Set(['sig', 'sigs', 'signature', 'signatures', 'hmac']);

function hasSecretPart(name: string): boolean {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .some((part) => SECRET_PARTS.has(part));
}

export { REDACTED };

/** Whether a header of this name is kept as `[redacted]`. */
export function isSecretHeader(name: string): boolean {
  return (
    SECRET_HEADERS.has(name.toLowerCase()) || SECRET_KEY_PATTERN.test(name) || hasSecretPart(name)
  );
}

/** Whether a query parameter of this name is kept as `[redacted]`. */
export function isSecretQuery(name: string): boolean {
  return (
    SECRET_QUERY.has(name.toLowerCase()) || SECRET_KEY_PATTERN.test(name) || hasSecretPart(name)
  );
}

/** A copy of `headers` with every secret one's value (each line of a list) `[redacted]`. */
export function redactHeaders<V extends string | string[]>(
  headers: Readonly<Record<string, V>>,
): Record<string, V> {
  const out: Record<string, V> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!isSecretHeader(name)) out[name] = value;
    else out[name] = (Array.isArray(value) ? value.map(() => REDACTED) : REDACTED) as V;
  }
  return out;
}

/** A copy of `query` with every key-like parameter's value `[redacted]`. */
export function redactQuery(query: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    out[name] = isSecretQuery(name) ? REDACTED : value;
  }
  return out;
}

/**
 * Parts of a JSON body member's name (split as hasSecretPart splits) that
 * make its value a credential: `api_key`, `apiKey`, `key`, `token`,
 * `access_token`, `refreshToken`, `client_secret`, `password`, `auth`,
 * `credentials`. Narrower than SECRET_KEY_PATTERN, because a body is data:
 * `max_tokens`, `budget_tokens` and `author` are not credentials (plurals
 * of `token` and `key` are counts or lists, and stay, but for
 * BODY_SECRET_PAIRS: `api_keys`, `accessTokens`), and a thinking
 * block's `signature` is content the API checks, not a key.
 */
const BODY_SECRET_PARTS = new Set([
  'key',
  'apikey',
  'token',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'authtoken',
  'secret',
  'clientsecret',
  'password',
  'passwd',
  'passphrase',
  'pass',
  'pwd',
  'auth',
  'authorization',
  'credential',
  'credentials',
  'cookie',
]);

/** Two parts together that name credentials in the plural (`api_keys`, `accessTokens`); `max_tokens` is not one. */
const BODY_SECRET_PAIRS = new Set([
  'apikeys',
  'accesstokens',
  'refreshtokens',
  'authtokens',
  'secretkeys',
  'privatekeys',
]);

/** Whether a JSON request body's member of this name is kept as `[redacted]` (at any depth). */
export function isSecretMember(name: string): boolean {
  const parts = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return parts.some(
    (part, i) =>
      BODY_SECRET_PARTS.has(part) || (i > 0 && BODY_SECRET_PAIRS.has(`${parts[i - 1]}${part}`)),
  );
}

/**
 * A copy of a JSON value with the value of every key-like member
 * (isSecretMember), at any depth and whatever it holds, `[redacted]`;
 * `changed` says whether there was one. The value itself when there is none.
 */
export function redactJson(value: unknown): { value: unknown; changed: boolean } {
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item) => {
      const r = redactJson(item);
      changed ||= r.changed;
      return r.value;
    });
    return changed ? { value: out, changed } : { value, changed };
  }
  if (typeof value !== 'object' || value === null) return { value, changed: false };
  let changed = false;
  // fromEntries makes own members (a `__proto__` member too, as JSON.parse does).
  const out = Object.fromEntries(
    Object.entries(value).map(([name, member]) => {
      if (isSecretMember(name)) {
        changed = true;
        return [name, REDACTED];
      }
      const r = redactJson(member);
      changed ||= r.changed;
      return [name, r.value];
    }),
  );
  return changed ? { value: out, changed } : { value, changed };
}
