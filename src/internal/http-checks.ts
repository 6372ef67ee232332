/**
 * Checks for what goes into an HTTP/1.1 head or body as given by a test:
 * header names and values Node's `http` would refuse (it throws from
 * `setHeader`, far from where the value was written), and base64 that
 * decodes to exactly one byte string.
 */

/** An RFC 9110 token: what a header name may be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What Node's `http` lets through in a header value: tab, visible ASCII, space, obs-text. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Why `name` cannot be a header name (`undefined` when it can). */
export function headerNameProblem(name: string): string | undefined {
  if (TOKEN.test(name)) return undefined;
  if (/[\r\n]/.test(name)) return 'a header name without CR or LF';
  return "a header name of letters, digits and !#$%&'*+-.^_`|~ only";
}

/** Why `value` cannot be a header value (`undefined` when it can). */
export function headerValueProblem(value: string): string | undefined {
  if (FIELD_VALUE.test(value)) return undefined;
  if (/[\r\n]/.test(value)) return 'a header value without CR or LF';
  const bad = [...value].find((c) => !FIELD_VALUE.test(c)) ?? '';
  const code = `U+${(bad.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  return `a header value of tab, visible ASCII, space or U+0080–U+00FF (it has ${code}; send other text percent-encoded or in the body)`;
}

/**
 * Whether `value` is canonical base64 (RFC 4648 §4, padded, no whitespace,
 * zero padding bits): the one spelling of its bytes, so nothing is silently
 * dropped the way `Buffer.from(value, 'base64')` drops what it cannot read.
 */
export function isStrictBase64(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length % 4 === 0 &&
    /^[A-Za-z0-9+/]*={0,2}$/.test(value) &&
    Buffer.from(value, 'base64').toString('base64') === value
  );
}
