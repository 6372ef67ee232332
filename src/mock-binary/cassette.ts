import { constants } from 'node:os';
import { brokenCassette, readCassetteJson, writeCassetteJson } from '../internal/cassette-file.js';
import {
  CASSETTE_MODE_VAR,
  cassetteTarget,
  resolveCassetteMode,
} from '../internal/cassette-mode.js';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import type { SnapshotRecord } from '../queue/reader.js';
import { RESPONSE_FIELDS } from '../queue/response-schema.js';
import { MOCK_SIGNALS, type MockResponse } from '../queue/types.js';

/**
 * Record and replay (requirement MB-24), like nock's Nock Back: in `record`
 * mode the mock is a spy that keeps each call's argv, stdin, output, exit
 * and duration, and `dispose()` writes them to the cassette; in `replay`
 * mode the cassette's calls become routed responses, one per recorded call
 * (exact argv), and a call that is not in it fails loudly; `auto` replays
 * when the cassette exists and records otherwise. `SHIMKIT_CASSETTE_MODE`
 * overrides the mode, so CI can replay what a developer recorded.
 */

export type CassetteMode = 'record' | 'replay' | 'auto';

/** The `cassette` option of `createMockBinary()`. */
export interface CassetteOptions {
  /** The cassette file (JSON), absolute. */
  path: string;
  /**
   * @default 'auto' (or `SHIMKIT_CASSETTE_MODE`)
   */
  mode?: CassetteMode;
}

/** One recorded call in a cassette file. */
export interface CassetteCall {
  argv: string[];
  /** Captured stdin (base64), when the mock captured it. */
  stdinBase64?: string;
  stdoutBase64: string;
  stderrBase64: string;
  /** The exit code, or undefined when a signal ended it. */
  exitCode?: number;
  signal?: string;
  durationMs: number;
}

/** A cassette file. */
export interface Cassette {
  version: 1;
  command: string;
  calls: CassetteCall[];
}

export { CASSETTE_MODE_VAR };

const MODES: readonly CassetteMode[] = ['record', 'replay', 'auto'];

/** The mode to use now, and the path: `auto` resolved, the env var applied. */
export function resolveCassette(
  value: unknown,
  where: string,
  env: NodeJS.ProcessEnv = process.env,
): { path: string; mode: 'record' | 'replay' } {
  const { path, options } = cassetteTarget(value, where, '{ path, mode }');
  return { path, mode: resolveCassetteMode(options.mode, MODES, path, where, env) };
}

/** The responses that replay a cassette: one per recorded call, for exactly its argv, in order. */
export function cassetteResponses(path: string, name: string, where: string): MockResponse[] {
  const cassette = readCassette(path, where);
  if (cassette.command !== name) {
    throw new InvalidOptionError(
      `${where}: the cassette ${path} was recorded for ${JSON.stringify(cassette.command)}, not ${JSON.stringify(name)}.`,
    );
  }
  return cassette.calls.map((call) => {
    const response: MockResponse = {
      match: { args: call.argv },
      stdoutBase64: call.stdoutBase64 ?? '',
      stderrBase64: call.stderrBase64 ?? '',
    };
    if (call.signal) response.signal = call.signal as MockResponse['signal'];
    else response.exitCode = call.exitCode ?? 0;
    return response;
  });
}

/**
 * Read and check a cassette file: anything malformed (not JSON, a wrong
 * shape, an entry that is not a call, a field of the wrong type, bad base64)
 * is an `InvalidOptionError` naming the file and the entry (`calls[2].argv`).
 */
function readCassette(path: string, where: string): Cassette {
  const broken = (what: string) => brokenCassette(path, where, what);
  const value = readCassetteJson(path, where);
  if (!isRecord(value) || value.version !== 1 || !Array.isArray(value.calls)) {
    throw broken(
      `is not a shimkit cassette: expected { "version": 1, "command", "calls": [...] }, got ${describeShape(value)}`,
    );
  }
  if (typeof value.command !== 'string') {
    throw broken(`has no command name: "command" is ${describeValue(value.command)}`);
  }
  for (const [i, call] of value.calls.entries()) {
    const problem = callProblem(call);
    if (problem) throw broken(`has a bad call: calls[${i}]${problem}`);
  }
  return value as unknown as Cassette;
}

/** What is wrong with one entry of `calls` (starting with its field), or undefined. */
function callProblem(call: unknown): string | undefined {
  if (!isRecord(call)) {
    return ` is ${describeValue(call)}, expected a call { "argv": [...], "stdoutBase64", "stderrBase64", "exitCode" }`;
  }
  const { argv } = call;
  if (!Array.isArray(argv)) {
    return `.argv is ${argv === undefined ? 'missing' : describeValue(argv)}, expected an array of strings`;
  }
  const arg = argv.findIndex((a) => typeof a !== 'string');
  if (arg >= 0) return `.argv[${arg}] is ${describeValue(argv[arg])}, expected a string`;
  const checks: Array<[keyof CassetteCall, (v: unknown) => string | undefined]> = [
    ['stdinBase64', RESPONSE_FIELDS.stdoutBase64],
    ['stdoutBase64', RESPONSE_FIELDS.stdoutBase64],
    ['stderrBase64', RESPONSE_FIELDS.stderrBase64],
    ['exitCode', RESPONSE_FIELDS.exitCode],
    ['signal', RESPONSE_FIELDS.signal],
    ['durationMs', RESPONSE_FIELDS.delayMs],
  ];
  for (const [field, check] of checks) {
    const v = call[field];
    if (v === undefined) continue;
    const expected = check(v);
    if (expected) return `.${field} is ${describeValue(v)}, expected ${expected}`;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeShape(value: unknown): string {
  if (!isRecord(value)) return describeValue(value);
  const keys = Object.keys(value);
  return keys.length === 0
    ? 'an empty object'
    : `an object with ${keys.map((k) => JSON.stringify(k)).join(', ')}`;
}

/** Write the cassette of the calls recorded (atomically: a temp file renamed into place). */
export function writeCassette(
  path: string,
  name: string,
  records: readonly SnapshotRecord[],
): void {
  const calls: CassetteCall[] = records
    .filter((r) => r.source === 'passthrough' && r.status === 'exited')
    .map((r) => {
      const call: CassetteCall = {
        argv: r.argv,
        stdoutBase64: r.stdoutBase64 ?? '',
        stderrBase64: r.stderrBase64 ?? '',
        durationMs: (r.endedAt ?? r.startedAt) - r.startedAt,
      };
      if (r.stdinBase64 !== undefined) call.stdinBase64 = r.stdinBase64;
      // A signal a mock cannot end by (SIGUSR1, SIGTRAP …) replays as a shell reports it.
      if (r.signal && (MOCK_SIGNALS as readonly string[]).includes(r.signal))
        call.signal = r.signal;
      else if (r.signal) call.exitCode = 128 + (constants.signals[r.signal as NodeJS.Signals] ?? 0);
      else call.exitCode = r.exitCode;
      return call;
    });
  const cassette: Cassette = { version: 1, command: name, calls };
  // The user's file, meant to be committed: it holds argv and output, never the env.
  writeCassetteJson(path, cassette);
}
