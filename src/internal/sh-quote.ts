/** Single-quote for POSIX sh: everything is literal except `'`, written as `'\''`. */
export function shQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}
