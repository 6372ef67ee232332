import { describeValue, nearest } from '../internal/describe.js';
import type { WireResponse } from './types.js';

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

/** Every response field and what it must be. */
export const RESPONSE_FIELDS: Readonly<Record<keyof WireResponse, Check>> = {
  stdout: isString,
  stderr: isString,
  stdoutBase64: isBase64,
  stderrBase64: isBase64,
  exitCode: isExitCode,
  delayMs: isDelay,
  jsonl: isJsonl,
  writeFiles: isFileMap,
};

/** Fields of SPEC that this version does not implement yet: a clear error, not "unknown key". */
const PLANNED_FIELDS = [
  'match',
  'times',
  'signal',
  'hang',
  'chunks',
  'stdin',
  'exitAfterStdinEof',
  'passthrough',
];

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
  ['stdout', 'stdoutBase64'],
  ['stderr', 'stderrBase64'],
];

/**
 * Why `value` is not a valid response, as one sentence naming `where`
 * (e.g. `response #2 for mock "git"`), or `undefined` if it is valid.
 */
export function responseProblem(value: unknown, where: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `Expected ${where} to be an object such as { stdout: "…", exitCode: 0 }, got ${describeValue(value)}.`;
  }
  const fields = Object.keys(RESPONSE_FIELDS);
  for (const [key, field] of Object.entries(value)) {
    const check = RESPONSE_FIELDS[key as keyof WireResponse];
    if (!check) return unknownKey(key, where, fields);
    if (field === undefined) continue;
    const expected = check(field);
    if (expected) {
      return `Expected the \`${key}\` field of ${where} to be ${expected}, got ${describeValue(field)}.`;
    }
  }
  for (const [a, b] of CONFLICTS) {
    if (a in value && b in value) {
      return `${capitalise(where)} sets both \`${a}\` and \`${b}\`; use one of them.`;
    }
  }
  return undefined;
}

function unknownKey(key: string, where: string, fields: string[]): string {
  if (PLANNED_FIELDS.includes(key)) {
    return `The \`${key}\` field of ${where} is not supported by this version of shimkit yet. Valid fields: ${fields.join(', ')}.`;
  }
  const guess =
    ALIASES[key] ?? nearest(key, fields) ?? ALIASES[nearest(key, Object.keys(ALIASES)) ?? ''];
  const hint = guess ? ` Did you mean \`${guess}\`?` : '';
  return `Unknown key \`${key}\` in ${where}.${hint} Valid fields: ${fields.join(', ')}.`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
