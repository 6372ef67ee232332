// makeUnavailable() / makeAvailable() (requirement MB-25): a mock's shim moved
// aside (ENOENT) or without its exec bit (EACCES), and put back.
import { chmodSync, existsSync, renameSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { stateError } from '../queue/errors.js';

/** The shim whose availability changes. */
export interface ShimFile {
  /** The command name, for messages. */
  readonly name: string;
  /** Absolute path of the shim. */
  readonly path: string;
  /** The shim dir. */
  readonly dir: string;
  readonly platform: NodeJS.Platform;
}

/** Where `makeUnavailable('ENOENT')` moves the shim. */
export function asidePath(shim: ShimFile): string {
  return join(shim.dir, `.${basename(shim.path)}.unavailable`);
}

/** Check `code`, then make the shim fail to start with it. */
export function makeUnavailable(shim: ShimFile, code: 'ENOENT' | 'EACCES'): void {
  if (code !== 'ENOENT' && code !== 'EACCES') {
    throw new InvalidOptionError(
      `Expected makeUnavailable() on mock "${shim.name}" to get 'ENOENT' (not found) or 'EACCES' (not executable), got ${describeValue(code)}.`,
    );
  }
  if (code === 'EACCES' && shim.platform === 'win32') {
    throw new InvalidOptionError(
      `makeUnavailable('EACCES') on mock "${shim.name}": Windows has no exec bit to take away; use 'ENOENT'.`,
    );
  }
  makeAvailable(shim);
  try {
    if (code === 'ENOENT') renameSync(shim.path, asidePath(shim));
    else chmodSync(shim.path, 0o600);
  } catch (error) {
    throw stateError(error, shim.path, 'test');
  }
}

/** Put the shim back in place, executable. */
export function makeAvailable(shim: ShimFile): void {
  try {
    if (existsSync(asidePath(shim))) renameSync(asidePath(shim), shim.path);
    chmodSync(shim.path, 0o700);
  } catch (error) {
    throw stateError(error, shim.path, 'test');
  }
}
