/**
 * A file name or path as raw bytes, made readable on one line: valid UTF-8
 * is kept, and each control character, backslash and byte that is not
 * UTF-8 is written as `\xNN` (`\\` for a backslash), so a name with a
 * newline or a Latin-1 byte can be shown, and told apart from another, in a
 * report line. For display only: the text is not a path to open.
 * @example displayName(Buffer.from('a\nb')) // 'a\\x0ab'
 */
export function displayName(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  if (Buffer.byteLength(text) === bytes.length && !text.includes('\ufffd')) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: escaping them is the point
    return text.replace(/[\x00-\x1f\x7f\\]/g, (c) => escapeByte(c.charCodeAt(0)));
  }
  let out = '';
  for (const byte of bytes) {
    out +=
      byte >= 0x20 && byte < 0x7f && byte !== 0x5c ? String.fromCharCode(byte) : escapeByte(byte);
  }
  return out;
}

function escapeByte(byte: number): string {
  return byte === 0x5c ? '\\\\' : `\\x${byte.toString(16).padStart(2, '0')}`;
}
