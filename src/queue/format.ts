import { truncate } from '../internal/describe.js';

/** `git status "a b"`: a call as a readable command line, for diagnostics. */
export function formatCommand(name: string, argv: readonly string[]): string {
  const shown = argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a)));
  return truncate([name, ...shown].join(' '), 120);
}
