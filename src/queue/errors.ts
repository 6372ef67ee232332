/**
 * A broken or vanished state dir. The runner turns this into a one-line
 * diagnostic and the `broken` exit code; it never falls back to a default
 * response. Kept free of the public error hierarchy so the runner stays small.
 */
export class ProtocolError extends Error {
  readonly file: string;
  readonly code = 'ERR_SHIMKIT_PROTOCOL';

  constructor(message: string, file: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProtocolError';
    this.file = file;
  }
}

export function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error
    ? String((error as { code: unknown }).code)
    : undefined;
}
