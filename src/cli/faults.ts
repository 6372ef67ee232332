import { isAbsolute, resolve } from 'node:path';
import type { Address, FaultAction, FaultRule, FrameSelector } from 'shimkit';
import { milliseconds } from './args.js';
import { UsageError } from './exit-codes.js';

/**
 * Fault flags of `shimkit proxy`, as `FaultRule`s: `--ACTION DIR[:FRAMES][:ARG][@CONN]`.
 * DIR is passed through (the library names the accepted set); FRAMES is `N`,
 * `N-M`, `N-` (N onwards), `*` (every frame, the default) or `*∕K` (every K-th);
 * ARG is the delay of `--delay` (required), the bits of `--corrupt`, the body
 * bytes kept by `--truncate` and `--sever-mid-frame`, the piece size of
 * `--slice`, and `fin` or `rst` for `--sever-after`.
 */

/** The fault flags, by action. */
export const FAULT_FLAGS: Readonly<Record<string, FaultAction>> = {
  drop: 'drop',
  duplicate: 'duplicate',
  delay: 'delay',
  corrupt: 'corrupt',
  truncate: 'truncate',
  reorder: 'reorder',
  'sever-mid-frame': 'sever-mid-frame',
  'sever-after': 'sever-after',
  reset: 'reset',
  slice: 'slice',
};

export function parseFault(flag: string, spec: string): FaultRule {
  const action = FAULT_FLAGS[flag] as FaultAction;
  const bad = (why: string) =>
    new UsageError(
      'proxy',
      `--${flag} ${JSON.stringify(spec)}: ${why}. Write DIR[:FRAMES]${
        action === 'delay' ? ':DELAY' : ''
      }[@CONNECTION], e.g. --${flag} ${example(action)}.`,
    );
  let body = spec;
  let connection: number | undefined;
  const at = spec.lastIndexOf('@');
  if (at !== -1) {
    const n = spec.slice(at + 1);
    if (!/^[1-9]\d*$/.test(n))
      throw bad(`the connection after "@" must be a number >= 1, got ${JSON.stringify(n)}`);
    connection = Number(n);
    body = spec.slice(0, at);
  }
  const parts = body.split(':');
  const direction = parts[0] ?? '';
  if (direction === '') throw bad('the direction (c2s, s2c or both) comes first');
  let frames: string | undefined = parts[1];
  let arg: string | undefined = parts[2];
  if (parts.length > 3) throw bad('too many ":" parts');
  // `--delay s2c:50ms`: a duration where the frames would be means every frame.
  if (action === 'delay' && parts.length === 2 && /^\d+(\.\d+)?(ms|s)$/.test(frames ?? '')) {
    arg = frames;
    frames = undefined;
  }
  const rule: FaultRule = { action, direction: direction as FaultRule['direction'] };
  if (connection !== undefined) rule.connection = connection;
  const frame = frameSelector(frames, bad);
  if (frame !== undefined) rule.frame = frame;
  if (action === 'delay') {
    if (arg === undefined) throw bad('--delay needs how long, as its last part');
    rule.delayMs = milliseconds('proxy', `--${flag}`, arg);
  } else if (arg !== undefined && action === 'sever-after') {
    if (arg !== 'fin' && arg !== 'rst')
      throw bad(`the last part is fin or rst, got ${JSON.stringify(arg)}`);
    rule.mode = arg;
  } else if (arg !== undefined) {
    if (!/^\d+$/.test(arg)) throw bad(`${JSON.stringify(arg)} is not a whole number`);
    if (action === 'corrupt') rule.bits = Number(arg);
    else if (action === 'truncate' || action === 'sever-mid-frame') rule.keepBytes = Number(arg);
    else if (action === 'slice') {
      if (Number(arg) < 1) throw bad('a slice is at least 1 byte');
      rule.sliceBytes = Number(arg);
    } else throw bad(`--${flag} takes no third part`);
  }
  return rule;
}

function frameSelector(
  text: string | undefined,
  bad: (why: string) => UsageError,
): FrameSelector | undefined {
  if (text === undefined || text === '*' || text === '') return undefined;
  let m = /^\*\/([1-9]\d*)$/.exec(text);
  if (m) return { every: Number(m[1]) };
  if (/^[1-9]\d*$/.test(text)) return Number(text);
  m = /^([1-9]\d*)-([1-9]\d*)?$/.exec(text);
  if (m) {
    const from = Number(m[1]);
    if (m[2] === undefined) return { from };
    const to = Number(m[2]);
    if (to < from) throw bad(`the range ${text} ends before it starts`);
    return { from, to };
  }
  throw bad(`frames are N, N-M, N-, * or */K (1-based), got ${JSON.stringify(text)}`);
}

function example(action: FaultAction): string {
  switch (action) {
    case 'delay':
      return 's2c:*:50ms';
    case 'sever-after':
      return 'c2s:10';
    case 'corrupt':
      return 's2c:2:3';
    case 'slice':
      return 's2c:1:2';
    default:
      return 'c2s:3';
  }
}

/** `--listen` / `--upstream`: a socket path, `HOST:PORT`, `:PORT` or `PORT`, or a Windows pipe. */
export function parseAddress(flag: string, text: string): Address {
  if (/^\\\\[.?]\\pipe\\/i.test(text)) return text;
  const tcp = /^(?:\[([^\]]+)\]|([^:/\\]*)):?(\d{1,5})$/.exec(text);
  if (tcp && !text.includes('/') && (text.includes(':') || /^\d+$/.test(text))) {
    const port = Number(tcp[3]);
    if (port > 65535) throw new UsageError('proxy', `${flag}: port ${port} is above 65535.`);
    const host = tcp[1] ?? tcp[2];
    return host ? { host, port } : { port };
  }
  if (text === '') throw new UsageError('proxy', `${flag} needs a socket path or HOST:PORT.`);
  return isAbsolute(text) ? text : resolve(text);
}
