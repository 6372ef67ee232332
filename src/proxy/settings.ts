// The settings a frame proxy takes besides where to listen and connect, checked:
// shared by createFrameProxy(), proxyStdio() and the runner's faulted
// passthrough. The checks that are plain data live in src/internal/wire/
// (settings.ts, rules.ts), where a mock checks a passthrough when the response
// is enqueued without importing the proxy.
import { checkOptionKeys, optionError } from '../internal/options.js';
import { parseFaults } from '../internal/wire/rules.js';
import { checkMaxFrameBytes, checkPassthrough, checkSeed } from '../internal/wire/settings.js';
import { type Clock, realClock } from './clock.js';
import type { Rule, Way } from './faults.js';
import { resolveFraming, type Wire } from './framing.js';
import type { FrameProxyOptions } from './proxy-options.js';
import { Recorder, type RecordOptions } from './recorder.js';

/** @internal The options both kinds of proxy take, other than where to listen and connect. */
export const SETTING_KEYS = [
  'framing',
  'maxFrameBytes',
  'faults',
  'seed',
  'clock',
  'queueLimitBytes',
  'bandwidth',
  'record',
] as const;

/** @internal What a proxy does to the frames it carries, from the options both kinds of proxy share. */
export interface ProxySettings {
  rules: Rule[];
  framing: Wire;
  maxFrameBytes: number;
  seed: number;
  clock: Clock;
  queueLimitBytes: number;
  bandwidth: Record<Way, number>;
  recorder: Recorder | undefined;
}

/** @internal The options of createFrameProxy() and proxyStdio() other than where to listen and connect, checked. */
export function resolveSettings(
  options: Omit<FrameProxyOptions, 'listen' | 'upstream'>,
  where: string,
): ProxySettings {
  const framing = resolveFraming(options.framing, `the \`framing\` option of ${where}`);
  const maxFrameBytes = checkMaxFrameBytes(options.maxFrameBytes, framing, where);
  const seed = checkSeed(options.seed, where);
  const queueLimitBytes = options.queueLimitBytes ?? 1024 * 1024;
  if (!Number.isInteger(queueLimitBytes) || queueLimitBytes < 0) {
    throw optionError(where, 'queueLimitBytes', 'an integer >= 0', queueLimitBytes);
  }
  const clock = options.clock ?? realClock;
  if (
    typeof clock?.now !== 'function' ||
    typeof clock.setTimeout !== 'function' ||
    typeof clock.clearTimeout !== 'function'
  ) {
    throw optionError(
      where,
      'clock',
      'an object with now(), setTimeout(fn, ms) and clearTimeout(handle), such as manualClock()',
      clock,
    );
  }
  const bandwidth = parseBandwidth(options.bandwidth, where);
  const recorder = parseRecord(options.record, where);
  const rules = parseFaults(options.faults);
  return {
    rules,
    framing,
    maxFrameBytes,
    seed,
    clock,
    queueLimitBytes,
    bandwidth,
    recorder,
  };
}

/** `record`: false, true, or `{ maxFrames, maxBodyBytes }`. */
function parseRecord(value: unknown, where: string): Recorder | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return new Recorder(10_000, 4096);
  if (typeof value !== 'object' || value === null) {
    throw optionError(where, 'record', 'true, false or { maxFrames, maxBodyBytes }', value);
  }
  checkOptionKeys(value, ['maxFrames', 'maxBodyBytes'], `the \`record\` option of ${where}`);
  const { maxFrames = 10_000, maxBodyBytes = 4096 } = value as RecordOptions;
  if (!Number.isInteger(maxFrames) || maxFrames < 1) {
    throw optionError(where, 'record.maxFrames', 'an integer >= 1', maxFrames);
  }
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 0) {
    throw optionError(where, 'record.maxBodyBytes', 'an integer >= 0', maxBodyBytes);
  }
  return new Recorder(maxFrames, maxBodyBytes);
}

/** `bandwidth`: bytes/s for both directions, or per direction; 0 for unlimited. */
function parseBandwidth(value: unknown, where: string): Record<Way, number> {
  const rate = (v: unknown, what: string) => {
    if (v === undefined) return 0;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
      throw optionError(where, what, 'a number of bytes per second > 0', v);
    }
    return v;
  };
  if (typeof value === 'object' && value !== null) {
    checkOptionKeys(value, ['c2s', 's2c'], `the \`bandwidth\` option of ${where}`);
    const { c2s, s2c } = value as { c2s?: unknown; s2c?: unknown };
    return { c2s: rate(c2s, 'bandwidth.c2s'), s2c: rate(s2c, 'bandwidth.s2c') };
  }
  const both = rate(value, 'bandwidth');
  return { c2s: both, s2c: both };
}

/**
 * @internal The proxy settings of a `passthrough: { framing, faults, seed, maxFrameBytes }`
 * response, checked (throws an `InvalidOptionError` naming `where`; see
 * checkPassthrough()).
 */
export function passthroughSettings(spec: unknown, where: string): ProxySettings {
  checkPassthrough(spec, where);
  return resolveSettings(spec as Omit<FrameProxyOptions, 'listen' | 'upstream'>, where);
}
