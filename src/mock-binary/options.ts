import { oneOf } from '../internal/describe.js';
import { InvalidResponseError } from '../internal/errors.js';
import {
  checkMs,
  checkOptionKeys,
  MAX_TIMER_MS,
  optionError,
  resolvePlatform,
} from '../internal/options.js';
import { responseProblem } from '../queue/response-schema.js';
import { PROTOCOL_VERSION, type WireConfig, type WireResponse } from '../queue/types.js';
import type { MockBinaryOptions } from './types.js';

const OPTION_KEYS: ReadonlyArray<keyof MockBinaryOptions> = [
  'timeoutMs',
  'onExhausted',
  'default',
  'recordEnv',
  'stdin',
  'stdinLimitBytes',
  'stdinIdleMs',
  'responses',
  'platform',
  'nodePath',
  'tmpDir',
];

export interface ResolvedOptions {
  config: WireConfig;
  /** The `responses` option, validated. */
  responses: WireResponse[];
  platform: NodeJS.Platform;
  nodePath: string;
  tmpDir: string | undefined;
}

/** Check every option now (not when first used) and turn them into the on-disk config. */
export function resolveOptions(name: string, options: MockBinaryOptions = {}): ResolvedOptions {
  const where = `createMockBinary(${JSON.stringify(name)})`;
  checkOptionKeys(options, OPTION_KEYS, where);
  const bad = (option: string, expected: string, value: unknown) =>
    optionError(where, option, expected, value);

  const { timeoutMs = 30_000, stdin = 'ignore', stdinLimitBytes = 1024 * 1024 } = options;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS) {
    throw bad('timeoutMs', `a positive integer of milliseconds up to ${MAX_TIMER_MS}`, timeoutMs);
  }
  if (stdin !== 'capture' && stdin !== 'ignore')
    throw bad('stdin', oneOf(['capture', 'ignore']), stdin);
  if (!Number.isInteger(stdinLimitBytes) || stdinLimitBytes < 0) {
    throw bad('stdinLimitBytes', 'an integer number of bytes >= 0', stdinLimitBytes);
  }
  const stdinIdleMs = checkMs(where, 'stdinIdleMs', options.stdinIdleMs, 200);

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
  const given = options.responses ?? [];
  if (!Array.isArray(given)) throw bad('responses', 'an array of responses', given);
  const responses = given.map((response, i) =>
    toWireResponse(response, `response [${i}] of the \`responses\` option of ${where}`),
  );

  const config: WireConfig = {
    version: PROTOCOL_VERSION,
    name,
    timeoutMs,
    onExhausted,
    recordEnv,
    stdin,
    stdinLimitBytes,
    stdinIdleMs,
  };
  if (options.default !== undefined) {
    config.default = toWireResponse(options.default, `the \`default\` response of ${where}`);
  }
  return { config, responses, platform, nodePath, tmpDir: options.tmpDir };
}

/** The platform whose shims to write (`process.platform` unless given). */
/** Validate a response (throws `InvalidResponseError` naming `where`) and return its wire form. */
export function toWireResponse(value: unknown, where: string): WireResponse {
  try {
    const problem = responseProblem(value, where);
    if (problem) throw new InvalidResponseError(problem);
    // Own properties only, copied as checked: an inherited `toJSON` cannot
    // add what validation never saw.
    const wire: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value as object)) {
      if (field === undefined) continue;
      wire[key] =
        key === 'jsonl'
          ? (field as unknown[]).map((item) => JSON.parse(JSON.stringify(item)))
          : key === 'writeFiles'
            ? Object.fromEntries(Object.entries(field as object))
            : field;
    }
    return wire as WireResponse;
  } catch (error) {
    if (error instanceof InvalidResponseError) throw error;
    throw new InvalidResponseError(`Could not read ${where}: ${String(error)}`, { cause: error });
  }
}
