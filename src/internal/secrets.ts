/**
 * What counts as a secret (requirement SP-03, MB-06, HT-09). Shared by the
 * runner (`recordEnv: true` records these redacted), the sandbox diagnostics
 * and the mock server's cassettes, so they never disagree about what is
 * safe to show.
 */

/**
 * Env keys that look like credentials: any key containing KEY, TOKEN, SECRET,
 * PASSWORD, PASSWD, PASSPHRASE, AUTH (but not the word AUTHOR: `GIT_AUTHOR_NAME` is a
 * name), COOKIE, SESSION, CREDENTIAL or PRIVATE; with PAT or PASS as a whole
 * word (`GITHUB_PAT`, `DB_PASS`, not `PATH`); or ending in `_PW` or `_PWD`
 * (`MYSQL_PWD`, not `PWD` or `OLDPWD`). Any case.
 */
export const SECRET_KEY_PATTERN =
  /KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|AUTH(?!OR(?:$|[^A-Z0-9]))|COOKIE|SESSION|CREDENTIAL|PRIVATE|(?:^|[^A-Z0-9])(?:PAT|PASS)(?:$|[^A-Z0-9])|_PWD?$/i;

/** Shown in place of a redacted value. */
export const REDACTED = '[redacted]';

/**
 * `scheme://` then the authority and path (up to a quote, `<>`, whitespace,
 * `?`, `#` or the start of the next URL), then any query and fragment. Schemes
 * are capped at 32 characters so long values stay linear.
 */
const URL_PATTERN =
  /([a-z][a-z0-9+.-]{0,31}):\/\/((?:(?![a-z][a-z0-9+.-]{0,31}:\/\/)[^\s"'`<>?#])*)(?:[?#][^\s"'`<>]*)?/gi;

/**
 * A copy of `env` that is safe to print: a value whose key looks like a
 * credential is replaced whole; in every other value each URL loses its
 * userinfo, query and fragment (`https://u:pw@host:8080/p?token=x#f` →
 * `https://host:8080/p`), wherever it appears in the value.
 */
export function redactEnv(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const safe: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    safe[key] = SECRET_KEY_PATTERN.test(key) ? REDACTED : stripUrls(value);
  }
  return safe;
}

/**
 * `scheme://user:password@` where the password holds characters a URL
 * should have escaped (`/`, `?`, `#`, `:`): the userinfo runs to the last `@`
 * before the end of the value's word. Without a `:` before the `@` it is not
 * userinfo (`https://registry.example/@scope/pkg`).
 */
const RAW_USERINFO = /([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s"'`<>@/:]*:[^\s"'`<>@]*@/gi;

/** `value` with every URL in it reduced to scheme, host, port and path. */
export function stripUrls(value: string): string {
  if (!value.includes('://')) return value;
  return value
    .replace(RAW_USERINFO, '$1')
    .replace(URL_PATTERN, (_match, scheme: string, rest: string) => {
      const slash = rest.indexOf('/');
      const authority = slash === -1 ? rest : rest.slice(0, slash);
      const path = slash === -1 ? '' : rest.slice(slash);
      const host = authority.slice(authority.lastIndexOf('@') + 1);
      return `${scheme}://${host}${path}`;
    });
}
