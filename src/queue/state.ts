import { readFileSync } from 'node:fs';
import { writeFileAtomic } from './atomic.js';
import { errnoCode, ProtocolError, VANISHED } from './errors.js';
import { GENERATION_PATTERN, statePath } from './layout.js';
import { PROTOCOL_VERSION, type WireState } from './types.js';

/** `state.json`: read by every call, replaced atomically by the test process. */

export function readState(stateDir: string): WireState {
  const file = statePath(stateDir);
  const text = readText(file);
  let state: WireState;
  try {
    state = JSON.parse(text) as WireState;
  } catch (cause) {
    throw new ProtocolError('the mock state is not valid JSON', file, { cause });
  }
  if (typeof state !== 'object' || state === null) {
    throw new ProtocolError('the mock state is not a JSON object', file);
  }
  if (typeof state.generation !== 'string' || !GENERATION_PATTERN.test(state.generation)) {
    throw new ProtocolError(
      `the mock state names generation ${JSON.stringify(state.generation)}, not "g<n>"`,
      file,
    );
  }
  if (typeof state.config !== 'object' || state.config === null) {
    throw new ProtocolError('the mock state has no config', file);
  }
  if (state.config.version !== PROTOCOL_VERSION) {
    throw new ProtocolError(
      `the mock state is protocol version ${JSON.stringify(state.config.version)}, this shimkit speaks ${PROTOCOL_VERSION} (was the mock made by another shimkit version?)`,
      file,
    );
  }
  return state;
}

export function writeState(stateDir: string, state: WireState): void {
  writeFileAtomic(statePath(stateDir), `${JSON.stringify(state)}\n`);
}

/** Read a protocol file; a missing or unreadable one is a `ProtocolError` naming it. */
export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (cause) {
    const code = errnoCode(cause);
    const why =
      code === 'ENOENT' ? VANISHED : `a state file cannot be read (${code ?? String(cause)})`;
    throw new ProtocolError(why, file, { cause });
  }
}
