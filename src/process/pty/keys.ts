import { describeValue, nearest } from '../../internal/describe.js';
import { InvalidOptionError } from '../../internal/errors.js';

/**
 * Key names to the bytes an xterm sends for them (requirement SP-13). Arrows,
 * Home and End depend on the cursor-key mode the program set (DECCKM: `vim`
 * and `less` turn it on), so they come in both forms.
 */

/** The bytes of keys whose encoding does not depend on a mode. */
const PLAIN: Record<string, string> = {
  enter: '\r',
  return: '\r',
  tab: '\t',
  'shift+tab': '\x1b[Z',
  backspace: '\x7f',
  escape: '\x1b',
  esc: '\x1b',
  space: ' ',
  insert: '\x1b[2~',
  delete: '\x1b[3~',
  pageup: '\x1b[5~',
  pagedown: '\x1b[6~',
  f1: '\x1bOP',
  f2: '\x1bOQ',
  f3: '\x1bOR',
  f4: '\x1bOS',
  f5: '\x1b[15~',
  f6: '\x1b[17~',
  f7: '\x1b[18~',
  f8: '\x1b[19~',
  f9: '\x1b[20~',
  f10: '\x1b[21~',
  f11: '\x1b[23~',
  f12: '\x1b[24~',
};

/** Cursor keys: the final byte after `ESC [` (normal mode) or `ESC O` (application mode). */
const CURSOR: Record<string, string> = {
  up: 'A',
  down: 'B',
  right: 'C',
  left: 'D',
  home: 'H',
  end: 'F',
};

/** Ctrl with these gives the C0 control code of the ASCII column they head. */
const CTRL_PUNCTUATION: Record<string, string> = {
  '@': '\x00',
  space: '\x00',
  '[': '\x1b',
  '\\': '\x1c',
  ']': '\x1d',
  '^': '\x1e',
  _: '\x1f',
  '?': '\x7f',
};

/** The names `press()` knows, for messages. */
export const KEY_NAMES = [
  'Enter',
  'Tab',
  'Shift+Tab',
  'Backspace',
  'Escape',
  'Space',
  'Up',
  'Down',
  'Left',
  'Right',
  'Home',
  'End',
  'PageUp',
  'PageDown',
  'Insert',
  'Delete',
  'F1–F12',
  'Ctrl+A–Z',
  'Alt+<key>',
  'a single character',
];

/**
 * The bytes for one key name, case-insensitive: `Enter`, `Ctrl+C`, `Alt+x`,
 * `Up`, `F5`, a single character. `applicationCursor` is the terminal's
 * DECCKM mode. Throws `InvalidOptionError` for a name it does not know.
 */
export function keyBytes(name: unknown, applicationCursor: boolean, where: string): string {
  if (typeof name !== 'string' || name === '') {
    throw new InvalidOptionError(
      `Expected each key of ${where} to be a key name such as "Enter" or "Ctrl+C", got ${describeValue(name)}. To send text or raw bytes, use type().`,
    );
  }
  const bytes = encode(name, applicationCursor);
  if (bytes !== undefined) return bytes;
  const known = [...Object.keys(PLAIN), ...Object.keys(CURSOR)];
  const guess = nearest(name.toLowerCase(), known);
  throw new InvalidOptionError(
    `${where} does not know the key ${JSON.stringify(name)}.${guess ? ` Did you mean "${guess}"?` : ''} Known keys: ${KEY_NAMES.join(', ')}. To send text or raw bytes, use type().`,
  );
}

function encode(name: string, applicationCursor: boolean): string | undefined {
  if ([...name].length === 1) return name;
  const lower = name.toLowerCase();
  const plain = PLAIN[lower];
  if (plain !== undefined) return plain;
  const cursor = CURSOR[lower];
  if (cursor !== undefined) return (applicationCursor ? '\x1bO' : '\x1b[') + cursor;
  const ctrl = /^(?:ctrl|control|c)[+-](.+)$/i.exec(name);
  if (ctrl) {
    const key = ctrl[1] as string;
    if (/^[a-z]$/i.test(key)) return String.fromCharCode(key.toUpperCase().charCodeAt(0) & 0x1f);
    return CTRL_PUNCTUATION[key.toLowerCase()];
  }
  const alt = /^(?:alt|meta|m)[+-](.+)$/i.exec(name);
  if (alt) {
    const rest = encode(alt[1] as string, applicationCursor);
    return rest === undefined ? undefined : `\x1b${rest}`;
  }
  return undefined;
}
