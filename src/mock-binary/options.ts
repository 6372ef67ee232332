import { tmpdir } from 'node:os';
import { oneOf } from '../internal/describe.js';
import { InvalidOptionError, InvalidResponseError } from '../internal/errors.js';
import { currentLeakCookie } from '../internal/leak-cookie.js';
import {
  checkMs,
  checkOptionKeys,
  isDir,
  MAX_TIMER_MS,
  optionError,
  resolvePlatform,
} from '../internal/options.js';
import { checkPassthrough } from '../internal/wire/settings.js';
import { responseProblem } from '../queue/response-schema.js';
import {
  type ArgMatcher,
  type MockMatch,
  PROTOCOL_VERSION,
  type WireArg,
  type WireConfig,
  type WireMatch,
  type WireResponse,
} from '../queue/types.js';
import { cassetteResponses, resolveCassette } from './cassette.js';
import { runnerFlags } from './runner-flags.js';
import { shCapabilities } from './sh-tools.js';
import type { MockBinaryOptions } from './types.js';

const OPTION_KEYS: ReadonlyArray<keyof MockBinaryOptions> = [
  'timeoutMs',
  'onExhausted',
  'strict',
  'spy',
  'cassette',
  'default',
  'recordEnv',
  'stdin',
  'stdinLimitBytes',
  'stdinIdleMs',
  'responses',
  'platform',
  'nodePath',
  'fastPath',
  'tmpDir',
];

export interface ResolvedOptions {
  config: WireConfig;
  /** The `responses` option, validated. */
  responses: WireResponse[];
  platform: NodeJS.Platform;
  nodePath: string;
  /** Options for that Node (see runner-flags.ts). */
  nodeFlags: readonly string[];
  tmpDir: string | undefined;
  /** `dispose()` asserts done (see `MockBinaryOptions.strict`). */
  strict: boolean;
  /** Record mode: `dispose()` writes the cassette here. */
  recordTo: string | undefined;
}

/** Check every option now (not when first used) and turn them into the on-disk config. */
export function resolveOptions(
  name: string,
  options: MockBinaryOptions = {},
  binPlatform?: NodeJS.Platform,
): ResolvedOptions {
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

  const strict = options.strict ?? false;
  if (typeof strict !== 'boolean') throw bad('strict', 'true or false', strict);
  if (strict) {
    for (const key of ['onExhausted', 'default'] as const) {
      if (options[key] !== undefined) {
        throw new InvalidOptionError(
          `${where}: \`strict: true\` cannot take \`${key}\`: in strict mode a call no response is left for fails. Queue a response with \`times: 'always'\` (and \`optional: true\`) for calls that may come any number of times.`,
        );
      }
    }
    onExhausted = 'fail';
  }

  const cassette =
    options.cassette === undefined ? undefined : resolveCassette(options.cassette, where);
  let spy = options.spy ?? false;
  if (typeof spy !== 'boolean') throw bad('spy', 'true or false', spy);
  if (cassette?.mode === 'record') spy = true;
  if (spy) {
    for (const key of ['onExhausted', 'default', 'strict'] as const) {
      if (options[key] !== undefined && options[key] !== false) {
        throw new InvalidOptionError(
          `${where}: ${cassette ? 'recording a cassette' : '`spy: true`'} cannot take \`${key}\`: a spy runs the real command for every call no queued response is left for.`,
        );
      }
    }
  }

  const platform = binPlatform ?? resolvePlatform(options.platform, where);
  const nodePath = options.nodePath ?? process.execPath;
  if (typeof nodePath !== 'string' || nodePath === '')
    throw bad('nodePath', 'a path to a node executable', nodePath);
  checkTmpDir(options.tmpDir, where);
  const given = options.responses ?? [];
  if (!Array.isArray(given)) throw bad('responses', 'an array of responses', given);
  const responses = given.map((response, i) =>
    toWireResponse(response, `response [${i}] of the \`responses\` option of ${where}`),
  );
  if (cassette?.mode === 'replay') {
    if (options.onExhausted !== undefined || options.spy) {
      throw new InvalidOptionError(
        `${where}: replaying a cassette cannot take \`${options.spy ? 'spy' : 'onExhausted'}\`: a call that is not in the cassette fails.`,
      );
    }
    onExhausted = 'fail';
    for (const [i, response] of cassetteResponses(cassette.path, name, where).entries()) {
      responses.push(toWireResponse(response, `call ${i + 1} of the cassette ${cassette.path}`));
    }
  }

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
  if (spy) config.spy = true;
  if (cassette?.mode === 'record') config.recordOutput = true;
  if (cassette?.mode === 'replay') config.cassette = cassette.path;
  const leakCookie = currentLeakCookie();
  if (leakCookie !== undefined) config.leakCookie = leakCookie;
  if (options.default !== undefined) {
    config.default = toWireResponse(options.default, `the \`default\` response of ${where}`);
  }
  const fastPath = options.fastPath ?? process.env.SHIMKIT_FAST_PATH !== '0';
  if (typeof fastPath !== 'boolean') throw bad('fastPath', 'true or false', fastPath);
  const sh = shCapabilities(config, platform, fastPath);
  if (sh) config.sh = sh;
  const nodeFlags = runnerFlags(nodePath, platform, where);
  return {
    config,
    responses,
    platform,
    nodePath,
    nodeFlags,
    tmpDir: options.tmpDir,
    strict,
    recordTo: cassette?.mode === 'record' ? cassette.path : undefined,
  };
}

/** The platform whose shims to write (`process.platform` unless given). */
/** Validate a response (throws `InvalidResponseError` naming `where`) and return its wire form. */
export function toWireResponse(value: unknown, where: string): WireResponse {
  try {
    const problem = responseProblem(value, where);
    if (problem) throw new InvalidResponseError(problem);
    const passthrough = (value as { passthrough?: unknown }).passthrough;
    if (typeof passthrough === 'object' && passthrough !== null) {
      try {
        checkPassthrough(passthrough, `the \`passthrough\` of ${where}`);
      } catch (error) {
        if (!(error instanceof InvalidOptionError)) throw error;
        throw new InvalidResponseError(error.message);
      }
    }
    // Own properties only, copied as checked: an inherited `toJSON` cannot
    // add what validation never saw.
    // `match` first, so a call can rule a line out from its first bytes (route-claim.ts).
    const wire: Record<string, unknown> = {};
    if ((value as { match?: unknown }).match !== undefined) wire.match = undefined;
    for (const [key, field] of Object.entries(value as object)) {
      if (field === undefined) continue;
      wire[key] =
        key === 'jsonl'
          ? (field as unknown[]).map((item) => JSON.parse(JSON.stringify(item)))
          : key === 'passthrough' && typeof field === 'object'
            ? JSON.parse(JSON.stringify(field))
            : key === 'writeFiles'
              ? Object.fromEntries(Object.entries(field as object))
              : key === 'match'
                ? toWireMatch(field as MockMatch)
                : field;
    }
    return wire as WireResponse;
  } catch (error) {
    if (error instanceof InvalidResponseError) throw error;
    throw new InvalidResponseError(`Could not read ${where}: ${String(error)}`, { cause: error });
  }
}

/** Expected arguments (strings, RegExps, `any()`) in their stored form, validated as `match.args` is. */
export function toWireArgs(args: readonly ArgMatcher[], where: string): WireArg[] {
  return toWireResponse({ match: { args } }, where).match?.args as WireArg[];
}

/** A validated `match` in its stored form: RegExps as `{ regex, flags }`, copied as checked. */
function toWireMatch(match: MockMatch): WireMatch {
  const wire: WireMatch = {};
  if (match.args) wire.args = match.args.map(toWireArg);
  if (match.argsPrefix) wire.argsPrefix = match.argsPrefix.map(toWireArg);
  if (match.cwd !== undefined) wire.cwd = toWireArg(match.cwd);
  if (match.env) {
    wire.env = Object.fromEntries(
      Object.entries(match.env).map(([k, v]) => [k, v === null ? null : toWireArg(v)]),
    );
  }
  return wire;
}

function toWireArg(arg: ArgMatcher | { regex: string; flags: string }): WireArg {
  if (typeof arg === 'string') return arg;
  if (arg instanceof RegExp) return { regex: arg.source, flags: arg.flags.replace(/[gd]/g, '') };
  if ('any' in arg) return { any: true };
  return { regex: arg.regex, flags: arg.flags };
}

/** `tmpDir` as given, if it is an existing dir (else a clear error); undefined when not given. */
export function checkTmpDir(tmpDir: unknown, where: string): string | undefined {
  if (tmpDir === undefined) return undefined;
  if (typeof tmpDir !== 'string' || tmpDir === '') {
    throw optionError(where, 'tmpDir', 'a directory path', tmpDir);
  }
  if (!isDir(tmpDir)) {
    throw new InvalidOptionError(
      `Expected the \`tmpDir\` option of ${where} to be an existing directory, got ${JSON.stringify(tmpDir)}, which is not one. Create it first, or leave tmpDir out to use ${tmpdir()}.`,
    );
  }
  return tmpDir;
}
