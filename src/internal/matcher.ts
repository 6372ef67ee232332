// One matcher value as stored and sent (a RegExp as `{ regex, flags }`,
// `any()` as `{ any: true }`) and how it fits a value. Shared by the mock
// binaries' routing (src/queue/route.ts, in every routed call's runner) and
// the mock server's request matching (src/server/core/fit.ts), so the two
// agree on what a pattern means.

/** A matcher value: exactly this string, a pattern, or anything present. */
export type WireMatcher = string | { regex: string; flags: string } | { any: true };

const compiled = new Map<string, RegExp>();

function regexOf(arg: { regex: string; flags: string }): RegExp {
  if (typeof arg.regex !== 'string' || typeof arg.flags !== 'string') {
    throw new TypeError(
      `a matcher is not a string, { regex, flags } or { any: true }: ${JSON.stringify(arg)}`,
    );
  }
  const key = `${arg.flags}/${arg.regex}`;
  let re = compiled.get(key);
  if (re === undefined) {
    re = new RegExp(arg.regex, arg.flags);
    compiled.set(key, re);
  }
  return re;
}

/** Whether one matcher element fits `value` (`undefined`: the call has no such arg or var). */
export function argFits(matcher: WireMatcher, value: string | undefined): boolean {
  if (typeof matcher === 'string') return value === matcher;
  if (value === undefined) return false;
  if ((matcher as { any?: unknown }).any === true) return true;
  return regexOf(matcher as { regex: string; flags: string }).test(value);
}

/** A matcher as a person writes it: `"push"`, `/^v\d+$/i`, `any()`. */
export function describeArg(m: WireMatcher): string {
  if (typeof m === 'string') return JSON.stringify(m);
  if ('any' in m) return 'any()';
  return `/${m.regex}/${m.flags}`;
}
