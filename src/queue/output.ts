/**
 * The bytes a response writes to a stream: text (`stdout`) or bytes
 * (`stdoutBase64`), then `jsonl` values one JSON line each. One rendering,
 * used by the runner for inline fields and by the writer for out files, so
 * both give the same bytes.
 */
export function outputBytes(text?: string, base64?: string, jsonl?: readonly unknown[]): Buffer {
  const parts: Buffer[] = [];
  if (text) parts.push(Buffer.from(text));
  if (base64) parts.push(Buffer.from(base64, 'base64'));
  for (const value of jsonl ?? []) parts.push(Buffer.from(`${JSON.stringify(value)}\n`));
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
}
