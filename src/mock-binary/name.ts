import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;

/** Longest name, in UTF-8 bytes: it becomes a file name, plus suffixes, within the usual 255-byte limit. */
export const MAX_NAME_BYTES = 128;

/**
 * A mock's name becomes a file name in the shim dir, so it must be a plain
 * command name: no path separators, no NUL or control characters, not `.` or
 * `..`; on Windows also none of `<>:"|?*`, no reserved device name, and
 * (cmd.exe runs the `.cmd` shim) printable ASCII without spaces or any of
 * `%!^&()=;,'\``.
 */
export function validateBinaryName(name: unknown, platform: NodeJS.Platform): string {
  const fail = (why: string) =>
    new InvalidOptionError(
      `Invalid mock binary name ${describeValue(name)}: ${why}. Use a plain command name such as "git".`,
    );
  if (typeof name !== 'string') throw fail('it must be a string');
  if (name === '') throw fail('it is empty');
  if (name === '.' || name === '..') throw fail('it is a directory reference');
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
    throw fail(
      `it is ${Buffer.byteLength(name)} bytes long, more than the ${MAX_NAME_BYTES} a file name here can take`,
    );
  }
  if (name.includes('/') || name.includes('\\')) throw fail('it contains a path separator');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point
  if (/[\u0000-\u001f\u007f]/.test(name)) throw fail('it contains a NUL or control character');
  if (platform === 'win32') {
    if (/[<>:"|?*]/.test(name)) throw fail('it contains a character Windows forbids in file names');
    if (WINDOWS_RESERVED.test(name)) throw fail('it is a reserved device name on Windows');
    if (/[. ]$/.test(name)) throw fail('Windows drops a trailing dot or space from file names');
    // cmd.exe runs the shim: it reads .cmd files in the OEM code page, and
    // splits or expands a command name at these characters.
    if (!/^[\x21-\x7e]*$/.test(name)) {
      throw fail(
        'a Windows shim is a .cmd file, and cmd.exe can only run one named in printable ASCII without spaces',
      );
    }
    const special = /[%!^&()=;,'`]/.exec(name);
    if (special) {
      throw fail(
        `cmd.exe treats ${JSON.stringify(special[0])} in a command name specially, so the .cmd shim could not be called by this name`,
      );
    }
  }
  return name;
}
