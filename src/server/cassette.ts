import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { brokenCassette, readCassetteJson, writeCassetteJson } from '../internal/cassette-file.js';
import {
  CASSETTE_MODE_VAR,
  cassetteTarget,
  resolveCassetteMode,
} from '../internal/cassette-mode.js';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { checkOptionKeys, optionError } from '../internal/options.js';
import type { CassetteInteraction, ServerCassette, ServerCassetteMode } from './cassette-format.js';
import { type ReplayEntry, replayEntries } from './cassette-replay.js';
import type { WireCassette } from './protocol.js';
import { redactJson } from './redact.js';

/**
 * The mock server's cassette on the test's thread (HT-09, design §8): the
 * option checked and its mode resolved (`SHIMKIT_CASSETTE_MODE`, `auto`) when
 * `createMockServer()` is called; the file read and checked then (a replay
 * becomes expectations, cassette-replay.ts); what the worker recorded kept
 * as it comes and written at `dispose()`.
 */

/** The `cassette` option, resolved; not exported from src/index.ts. */
export interface CassetteSettings {
  path: string;
  /** The base name, as `cassette:<file>#<n>` names interactions. */
  file: string;
  mode: 'record' | 'replay' | 'record-missing';
  upstream: string | undefined;
  timing: 'none' | 'recorded';
  /** What the file holds now (none when recording anew, or when it does not exist yet). */
  interactions: CassetteInteraction[];
  /** The file's interactions as expectations (replay, record-missing). */
  replay: ReplayEntry[];
}

const KEYS = ['path', 'mode', 'upstream', 'timing'];
const MODES: readonly ServerCassetteMode[] = ['record', 'replay', 'auto', 'record-missing'];
const TIMINGS = ['none', 'recorded'];

/** Check the `cassette` option of `where` and resolve its mode now. */
export function resolveServerCassette(
  value: unknown,
  where: string,
  env: NodeJS.ProcessEnv = process.env,
): CassetteSettings {
  const { path, options } = cassetteTarget(value, where, '{ path, mode?, upstream?, timing? }');
  checkOptionKeys(options, KEYS, `${where} \`cassette\``);
  const upstream =
    options.upstream === undefined ? undefined : checkUpstream(options.upstream, where);
  const timing = options.timing ?? 'none';
  if (!TIMINGS.includes(timing as string)) {
    throw optionError(where, 'cassette.timing', '"none" or "recorded"', timing);
  }
  const hint = ', with `upstream` set to the base URL to record from';
  const mode = resolveCassetteMode(options.mode, MODES, path, where, env, hint);
  if (mode !== 'replay' && upstream === undefined) {
    const fromEnv = env[CASSETTE_MODE_VAR];
    const why = fromEnv
      ? `${CASSETTE_MODE_VAR}=${fromEnv} says to record it`
      : (options.mode ?? 'auto') === 'auto'
        ? `mode 'auto' records it, as there is no file yet`
        : `mode '${mode}' records it`;
    throw new InvalidOptionError(
      `${where}: the cassette ${path} has no \`upstream\` to record from (${why}). Give \`cassette: { path, upstream: 'https://api.example.com' }\`, the base URL requests are passed to.`,
    );
  }
  const file = basename(path);
  const cassette =
    mode === 'replay' || (mode === 'record-missing' && existsSync(path))
      ? readServerCassette(path, where)
      : undefined;
  const interactions = cassette?.interactions ?? [];
  const timingOf = timing as CassetteSettings['timing'];
  const replay = replayEntries(interactions, file, timingOf, (what) =>
    brokenCassette(path, where, what),
  );
  return { path, file, mode, upstream, timing: timingOf, interactions, replay };
}

/** The cassette as the worker uses it. */
export function wireCassette(settings: CassetteSettings): WireCassette {
  const { path, file, mode, upstream } = settings;
  return {
    path,
    file,
    mode,
    upstream: mode === 'replay' ? undefined : upstream,
    recorded: settings.interactions.length,
  };
}

/**
 * What the worker recorded, kept on the test's thread as each interaction
 * completes; `write()` (at `dispose()`) puts them in the file after those it
 * had (record-missing), in their numbers' order. Nothing recorded writes
 * nothing: an existing file stays, and `auto` records again next time.
 */
export class CassetteRecording {
  readonly #settings: CassetteSettings;
  readonly #added = new Map<number, CassetteInteraction>();

  constructor(settings: CassetteSettings) {
    this.#settings = settings;
  }

  add(n: number, interaction: CassetteInteraction): void {
    this.#added.set(n, interaction);
  }

  write(): void {
    if (this.#added.size === 0) return;
    const added = [...this.#added].sort(([a], [b]) => a - b).map(([, interaction]) => interaction);
    const cassette: ServerCassette = {
      version: 1,
      kind: 'http',
      // What the file had is written back redacted too (a file from before bodies were).
      interactions: [...this.#settings.interactions.map(redactedInteraction), ...added],
    };
    writeCassetteJson(this.#settings.path, cassette);
  }
}

/** An interaction read from the file, its JSON request body redacted as recording does (core/record.ts). */
function redactedInteraction(interaction: CassetteInteraction): CassetteInteraction {
  const request = interaction.request;
  if (request.json === undefined) return interaction;
  const redacted = redactJson(request.json);
  if (!redacted.changed) return interaction;
  const bodyBase64 = Buffer.from(JSON.stringify(redacted.value)).toString('base64');
  return { ...interaction, request: { ...request, json: redacted.value, bodyBase64 } };
}

function checkUpstream(value: unknown, where: string): string {
  const expected =
    "an http: or https: base URL such as 'https://api.openai.com' (no credentials, query or fragment)";
  if (typeof value !== 'string') throw optionError(where, 'cassette.upstream', expected, value);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw optionError(where, 'cassette.upstream', expected, value);
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw optionError(where, 'cassette.upstream', expected, value);
  }
  return value;
}

/** Read and check a cassette file's shape (its interactions are checked as they become expectations). */
function readServerCassette(path: string, where: string): ServerCassette {
  const value = readCassetteJson(path, where);
  const version =
    typeof value === 'object' && value !== null ? (value as { version?: unknown }).version : 1;
  if (version !== 1 && version !== undefined) {
    const newer = typeof version === 'number' && version > 1;
    throw brokenCassette(
      path,
      where,
      `is version ${JSON.stringify(version)}; this shimkit reads version 1${newer ? ' (a newer shimkit wrote it: upgrade shimkit to replay it)' : ''}`,
    );
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    (value as { version?: unknown }).version !== 1 ||
    (value as { kind?: unknown }).kind !== 'http' ||
    !Array.isArray((value as { interactions?: unknown }).interactions)
  ) {
    const keys = typeof value === 'object' && value !== null ? Object.keys(value) : [];
    throw brokenCassette(
      path,
      where,
      `is not a shimkit HTTP cassette: expected { "version": 1, "kind": "http", "interactions": [...] }, got ${keys.length > 0 ? `an object with ${keys.map((k) => JSON.stringify(k)).join(', ')}` : describeValue(value)}`,
    );
  }
  return value as ServerCassette;
}
