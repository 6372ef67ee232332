import { describeValue, nearest, truncate } from '../internal/describe.js';
import { OUT_FILE_PATTERN } from './layout.js';
import { MOCK_SIGNALS, type WireResponse } from './types.js';

/**
 * The one validator for scripted responses. The test process runs it at
 * `enqueue()` time (so a typo fails the test where it was written); the runner
 * runs it on the queue line it claimed (so a hand-edited or corrupt queue gives
 * a diagnostic, never a silent default).
 */

type Check = (value: unknown) => string | undefined;

const isString: Check = (v) => (typeof v === 'string' ? undefined : 'a string');
const isBase64: Check = (v) =>
  typeof v === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(v) && v.length % 4 === 0
    ? undefined
    : 'a base64 string';
const isExitCode: Check = (v) =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 255
    ? undefined
    : 'an integer from 0 to 255';
const isDelay: Check = (v) =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0
    ? undefined
    : 'a finite number of milliseconds >= 0';
const isJsonl: Check = (v) => {
  if (!Array.isArray(v)) return 'an array of JSON values';
  for (const item of v) {
    try {
      if (JSON.stringify(item) === undefined) return 'an array of JSON values';
    } catch {
      return 'an array of JSON values';
    }
  }
  return undefined;
};
const isFileMap: Check = (v) => {
  const expected = 'an object mapping file paths to string contents';
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return expected;
  for (const [path, content] of Object.entries(v)) {
    if (path === '' || path.includes('\0') || typeof content !== 'string') return expected;
  }
  return undefined;
};
const isTimes: Check = (v) =>
  v === 'always' || (Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 1_000_000)
    ? undefined
    : "an integer from 1 to 1000000, or 'always'";
const isBoolean: Check = (v) => (typeof v === 'boolean' ? undefined : 'true or false');
/** The shape only: the framing and the rules are checked where responses are made (mock-binary/options.ts). */
const isPassthrough: Check = (v) =>
  typeof v === 'boolean' ||
  (typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.keys(v).every((k) => ['framing', 'faults', 'seed', 'maxFrameBytes'].includes(k)))
    ? undefined
    : 'true, false or { framing?, faults?, seed?, maxFrameBytes? }';

/** Why `v` is not one matcher element (a string, a RegExp, `{ regex, flags }` or `any()`). */
function argProblem(v: unknown): string | undefined {
  if (typeof v === 'string') return undefined;
  if (v instanceof RegExp) {
    // g is dropped when stored; y would change what fits (only at index 0): say so.
    return v.sticky ? 'a RegExp without the y flag (anchor it with ^ instead)' : undefined;
  }
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const keys = Object.keys(v);
    if (keys.length === 1 && (v as { any?: unknown }).any === true) return undefined;
    const { regex, flags } = v as { regex?: unknown; flags?: unknown };
    if (keys.length === 2 && typeof regex === 'string' && typeof flags === 'string') {
      try {
        new RegExp(regex, flags);
        return /^[imsuv]*$/.test(flags)
          ? undefined
          : 'a RegExp whose flags are among i, m, s, u and v';
      } catch {
        return 'a valid regular expression';
      }
    }
  }
  return 'a string, a RegExp or any()';
}

const MATCH_KEYS = ['args', 'argsPrefix', 'cwd', 'env'];

const isMatch: Check = (v) => {
  const shape = 'an object like { args: ["push", any()] } with args, argsPrefix, cwd or env';
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return shape;
  const m = v as Record<string, unknown>;
  for (const key of Object.keys(m)) {
    if (!MATCH_KEYS.includes(key)) {
      const guess = nearest(key, MATCH_KEYS);
      return `${shape} (unknown key ${JSON.stringify(key)}${guess ? `; did you mean ${guess}?` : ''})`;
    }
  }
  if (has(m, 'args') && has(m, 'argsPrefix')) return `${shape}, not both args and argsPrefix`;
  for (const key of ['args', 'argsPrefix']) {
    if (!has(m, key) || m[key] === undefined) continue;
    const list = m[key];
    if (!Array.isArray(list)) return `${shape}: \`${key}\` must be an array`;
    for (const [i, item] of list.entries()) {
      const problem = argProblem(item);
      if (problem) return `${shape}: \`${key}[${i}]\` must be ${problem}`;
    }
  }
  if (has(m, 'cwd') && m.cwd !== undefined) {
    const problem = argProblem(m.cwd);
    if (problem) return `${shape}: \`cwd\` must be ${problem}`;
  }
  if (has(m, 'env') && m.env !== undefined) {
    const env = m.env;
    if (typeof env !== 'object' || env === null || Array.isArray(env)) {
      return `${shape}: \`env\` must be an object of var names to matchers (null: unset)`;
    }
    for (const [name, item] of Object.entries(env)) {
      const problem = item === null ? undefined : argProblem(item);
      if (problem) return `${shape}: \`env.${name}\` must be ${problem}, or null for unset`;
    }
  }
  return undefined;
};

const isSignal: Check = (v) =>
  typeof v === 'string' && (MOCK_SIGNALS as readonly string[]).includes(v)
    ? undefined
    : `one of ${MOCK_SIGNALS.join(', ')}`;
const isStdinMode: Check = (v) =>
  v === 'capture' || v === 'ignore' ? undefined : "'capture' or 'ignore'";
const CHUNK_KEYS = ['stdout', 'stderr', 'delayMs'];
const isChunks: Check = (v) => {
  const expected = 'an array of { stdout?, stderr?, delayMs? } with stdout or stderr in each';
  if (!Array.isArray(v)) return expected;
  for (const [i, chunk] of v.entries()) {
    if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) return expected;
    const c = chunk as Record<string, unknown>;
    const keys = Object.keys(c);
    const unknown = keys.find((k) => !CHUNK_KEYS.includes(k));
    if (unknown !== undefined)
      return `${expected} (chunk ${i} has an unknown key ${JSON.stringify(unknown)})`;
    if (c.stdout === undefined && c.stderr === undefined)
      return `${expected} (chunk ${i} has neither)`;
    for (const k of ['stdout', 'stderr']) {
      if (c[k] !== undefined && typeof c[k] !== 'string')
        return `${expected} (chunk ${i}: ${k} must be a string)`;
    }
    if (c.delayMs !== undefined && isDelay(c.delayMs))
      return `${expected} (chunk ${i}: delayMs must be ${isDelay(c.delayMs)})`;
  }
  return undefined;
};

const isOutFile: Check = (v) =>
  typeof v === 'string' && OUT_FILE_PATTERN.test(v) ? undefined : 'a file name in out/';

type UserField = Exclude<keyof WireResponse, WireOnlyField>;
type WireOnlyField = 'stdoutFile' | 'stderrFile' | 'writeFilesFile';

/** Every response field and what it must be. */
export const RESPONSE_FIELDS: Readonly<Record<UserField, Check>> = {
  stdout: isString,
  stderr: isString,
  stdoutBase64: isBase64,
  stderrBase64: isBase64,
  exitCode: isExitCode,
  delayMs: isDelay,
  jsonl: isJsonl,
  writeFiles: isFileMap,
  match: isMatch,
  times: isTimes,
  optional: isBoolean,
  chunks: isChunks,
  signal: isSignal,
  hang: isBoolean,
  stdin: isStdinMode,
  exitAfterStdinEof: isBoolean,
  passthrough: isPassthrough,
};

/** Fields only the queue file holds: large parts kept in `out/` (see `WireResponse`). */
const WIRE_FIELDS: Readonly<Record<WireOnlyField, Check>> = {
  stdoutFile: isOutFile,
  stderrFile: isOutFile,
  writeFilesFile: isOutFile,
};

/** Names people reach for, mapped to the field they mean. */
const ALIASES: Readonly<Record<string, keyof WireResponse>> = {
  output: 'stdout',
  out: 'stdout',
  err: 'stderr',
  error: 'stderr',
  code: 'exitCode',
  exit: 'exitCode',
  status: 'exitCode',
  delay: 'delayMs',
  files: 'writeFiles',
};

const CONFLICTS: ReadonlyArray<[keyof WireResponse, keyof WireResponse]> = [
  ['hang', 'signal'],
  ['hang', 'exitAfterStdinEof'],
  ['stdout', 'stdoutBase64'],
  ['stderr', 'stderrBase64'],
  ['stdoutFile', 'stdout'],
  ['stdoutFile', 'stdoutBase64'],
  ['stdoutFile', 'jsonl'],
  ['stderrFile', 'stderr'],
  ['stderrFile', 'stderrBase64'],
  ['writeFilesFile', 'writeFiles'],
];

const has = (object: object, key: string) => Object.hasOwn(object, key);

/** The fields that still mean something for a response that runs the real command. */
const PASSTHROUGH_WITH = ['passthrough', 'match', 'times', 'optional', 'delayMs', 'stdin'];

/**
 * Why `value` is not a valid response, as one sentence naming `where`
 * (e.g. `response #2 for mock "git"`), or `undefined` if it is valid. Only own
 * properties count (`__proto__`, `constructor`, `hasOwnProperty` are unknown
 * keys). `wire: true` also accepts the fields only a queue line holds.
 */
export function responseProblem(
  value: unknown,
  where: string,
  options: { wire?: boolean } = {},
): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `Expected ${where} to be an object such as { stdout: "…", exitCode: 0 }, got ${describeValue(value)}.`;
  }
  const fields = Object.keys(RESPONSE_FIELDS);
  for (const [key, field] of Object.entries(value)) {
    const check = has(RESPONSE_FIELDS, key)
      ? RESPONSE_FIELDS[key as UserField]
      : options.wire && has(WIRE_FIELDS, key)
        ? WIRE_FIELDS[key as WireOnlyField]
        : undefined;
    if (!check) return unknownKey(key, where, fields);
    if (field === undefined) continue;
    const expected = check(field);
    if (expected) {
      return `Expected the \`${key}\` field of ${where} to be ${expected}, got ${describeValue(field)}.`;
    }
  }
  for (const [a, b] of CONFLICTS) {
    if (has(value, a) && has(value, b)) {
      return `${capitalise(where)} sets both \`${a}\` and \`${b}\`; use one of them.`;
    }
  }
  const passthrough = (value as { passthrough?: unknown }).passthrough;
  if (passthrough !== undefined && passthrough !== false) {
    const scripted = Object.keys(value).filter((k) => !PASSTHROUGH_WITH.includes(k));
    if (scripted.length > 0) {
      return `${capitalise(where)} sets \`passthrough\` with \`${scripted[0]}\`: the real command's output and exit code are what the call gets. Keep only match, times, optional, delayMs and stdin with it.`;
    }
  }
  return undefined;
}

function unknownKey(key: string, where: string, fields: string[]): string {
  const shown = truncate(JSON.stringify(key).slice(1, -1), 60);
  const alias = (k: string) => (has(ALIASES, k) ? ALIASES[k] : undefined);
  const guess =
    alias(key) ?? nearest(key, fields) ?? alias(nearest(key, Object.keys(ALIASES)) ?? '');
  const hint = guess ? ` Did you mean \`${guess}\`?` : '';
  return `Unknown key \`${shown}\` in ${where}.${hint} Valid fields: ${fields.join(', ')}.`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
