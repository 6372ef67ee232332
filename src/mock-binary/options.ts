import { describeValue, nearest, oneOf } from '../internal/describe.js';
import { InvalidOptionError, InvalidResponseError } from '../internal/errors.js';
import { responseProblem } from '../queue/response-schema.js';
import type { WireConfig, WireResponse } from '../queue/types.js';
import type { MockBinaryOptions, MockResponse } from './types.js';

const OPTION_KEYS: ReadonlyArray<keyof MockBinaryOptions> = [
  'timeoutMs',
  'onExhausted',
  'default',
  'recordEnv',
  'stdin',
  'stdinLimitBytes',
  'responses',
  'platform',
  'nodePath',
  'tmpDir',
];
const PLATFORMS: readonly NodeJS.Platform[] = [
  'aix',
  'android',
  'darwin',
  'freebsd',
  'haiku',
  'linux',
  'openbsd',
  'sunos',
  'win32',
  'cygwin',
  'netbsd',
];
const MAX_TIMER_MS = 2_147_483_647;

export interface ResolvedOptions {
  config: WireConfig;
  responses: MockResponse[];
  platform: NodeJS.Platform;
  nodePath: string;
  tmpDir: string | undefined;
}

/** Check every option now (not when first used) and turn them into the on-disk config. */
export function resolveOptions(name: string, options: MockBinaryOptions = {}): ResolvedOptions {
  const where = `createMockBinary(${JSON.stringify(name)})`;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(
      `Expected the options of ${where} to be an object, got ${describeValue(options)}.`,
    );
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key as keyof MockBinaryOptions)) {
      const guess = nearest(key, OPTION_KEYS);
      throw new InvalidOptionError(
        `Unknown option \`${key}\` for ${where}.${guess ? ` Did you mean \`${guess}\`?` : ''} Valid options: ${OPTION_KEYS.join(', ')}.`,
      );
    }
  }
  const bad = (option: string, expected: string, value: unknown) =>
    new InvalidOptionError(
      `Expected the \`${option}\` option of ${where} to be ${expected}, got ${describeValue(value)}.`,
    );

  const { timeoutMs = 30_000, stdin = 'ignore', stdinLimitBytes = 1024 * 1024 } = options;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS) {
    throw bad('timeoutMs', `a positive integer of milliseconds up to ${MAX_TIMER_MS}`, timeoutMs);
  }
  if (stdin !== 'capture' && stdin !== 'ignore')
    throw bad('stdin', oneOf(['capture', 'ignore']), stdin);
  if (!Number.isInteger(stdinLimitBytes) || stdinLimitBytes < 0) {
    throw bad('stdinLimitBytes', 'an integer number of bytes >= 0', stdinLimitBytes);
  }

  const recordEnv = options.recordEnv ?? false;
  if (
    typeof recordEnv !== 'boolean' &&
    !(Array.isArray(recordEnv) && recordEnv.every((k) => typeof k === 'string' && k !== ''))
  ) {
    throw bad('recordEnv', 'true, false or an array of env var names', recordEnv);
  }

  let onExhausted: WireConfig['onExhausted'] = 'repeat';
  const exhausted = options.onExhausted;
  if (typeof exhausted === 'object' && exhausted !== null) {
    onExhausted = {
      response: toWireResponse(exhausted, `the \`onExhausted\` response of ${where}`),
    };
  } else if (exhausted === 'fail' || exhausted === 'repeat') {
    onExhausted = exhausted;
  } else if (exhausted !== undefined) {
    throw bad('onExhausted', `${oneOf(['repeat', 'fail'])} or a response object`, exhausted);
  }

  const platform = resolvePlatform(options.platform, where);
  const nodePath = options.nodePath ?? process.execPath;
  if (typeof nodePath !== 'string' || nodePath === '')
    throw bad('nodePath', 'a path to a node executable', nodePath);
  if (
    options.tmpDir !== undefined &&
    (typeof options.tmpDir !== 'string' || options.tmpDir === '')
  ) {
    throw bad('tmpDir', 'a directory path', options.tmpDir);
  }
  const responses = options.responses ?? [];
  if (!Array.isArray(responses)) throw bad('responses', 'an array of responses', responses);

  const config: WireConfig = {
    version: 1,
    name,
    timeoutMs,
    onExhausted,
    recordEnv,
    stdin,
    stdinLimitBytes,
  };
  if (options.default !== undefined) {
    config.default = toWireResponse(options.default, `the \`default\` response of ${where}`);
  }
  return { config, responses, platform, nodePath, tmpDir: options.tmpDir };
}

/** The platform whose shims to write (`process.platform` unless given). */
export function resolvePlatform(value: unknown, where: string): NodeJS.Platform {
  if (value === undefined) return process.platform;
  if (!PLATFORMS.includes(value as NodeJS.Platform)) {
    throw new InvalidOptionError(
      `Expected the \`platform\` option of ${where} to be ${oneOf(PLATFORMS)}, got ${describeValue(value)}.`,
    );
  }
  return value as NodeJS.Platform;
}

/** Validate a response (throws `InvalidResponseError` naming `where`) and return its wire form. */
export function toWireResponse(value: unknown, where: string): WireResponse {
  const problem = responseProblem(value, where);
  if (problem) throw new InvalidResponseError(problem);
  return JSON.parse(JSON.stringify(value)) as WireResponse;
}
