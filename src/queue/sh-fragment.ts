import { posix } from 'node:path';
import { outputBytes } from './output.js';
import type { ShCapabilities, WireConfig, WireResponse, WireState } from './types.js';

/**
 * Responses as the POSIX shim serves them itself, without starting Node
 * (requirement PERF-07; the shim's side is shims/posix-fast.sh). The writer
 * renders each response, just before its queue line, into
 * `sh/<n>`: a few lines of sh that set what the call does. A response the
 * shim cannot act out exactly gets an empty file, and its call runs the
 * runner. The shim decides from the file's size alone, never by parsing.
 *
 *   shimkit_delay=0.250                 seconds, for `sleep` (empty: none)
 *   shimkit_files() { "$shimkit_mkdir" -p -- 'a' && printf '…' >| 'a/b'; }
 *   shimkit_out='…' shimkit_outlen=3    printf formats: the exact bytes, and how many
 *   shimkit_err='…' shimkit_errlen=0
 *   shimkit_code=0
 */

/**
 * Output the shim writes itself, per stream; more is the runner's. A fresh
 * pipe holds 16 KiB or more everywhere (64 KiB on Linux), so a write this
 * size into an empty pipe never waits for its reader. (A non-blocking
 * stdout or stderr goes to the runner whatever the size: see
 * `shimkit_partial` in shims/posix-fast.sh.)
 */
export const SH_OUTPUT_LIMIT_BYTES = 16 * 1024;
/** Bytes of files one response may write from the shim. */
export const SH_FILES_LIMIT_BYTES = 64 * 1024;
/**
 * The longest delay the shim sleeps out. A shell killed by SIGKILL (or a
 * signal it does not trap) while it sleeps leaves its `sleep` running to
 * the end, holding no fd of the caller's but the /dev/null it was given, so
 * long delays are the runner's; they cost seconds anyway, not Node's start.
 */
export const SH_DELAY_LIMIT_MS = 2000;
/** A delay must end this long before the mock's timeout: the runner times out one that is late. */
const TIMEOUT_MARGIN_MS = 1000;

/**
 * The fields a response served by the shim may have; any other needs the
 * runner. (`match` and `times` say which calls get it, not what they do:
 * see sh-route.ts.)
 */
const STATIC_FIELDS: ReadonlySet<string> = new Set([
  'match',
  'times',
  'stdout',
  'stderr',
  'stdoutBase64',
  'stderrBase64',
  'jsonl',
  'exitCode',
  'delayMs',
  'writeFiles',
  'optional',
  'stdin',
]);

/**
 * `response` as the shim serves it, or '' when only the runner can act it
 * out: a signal, a hang, chunks, stdin capture, passthrough, too
 * much output, a long delay, or a tool the machine lacks.
 */
export function renderFragment(
  response: WireResponse,
  config: WireConfig,
  sh: ShCapabilities,
): string {
  for (const key of Object.keys(response)) if (!STATIC_FIELDS.has(key)) return '';
  if ((response.stdin ?? config.stdin) === 'capture') return '';
  const delay = delaySeconds(response.delayMs ?? 0, config, sh);
  if (delay === undefined) return '';
  const out = outputBytes(response.stdout, response.stdoutBase64, response.jsonl);
  const err = outputBytes(response.stderr, response.stderrBase64);
  if (out.length > SH_OUTPUT_LIMIT_BYTES || err.length > SH_OUTPUT_LIMIT_BYTES) return '';
  const files = fileSteps(response.writeFiles ?? {}, sh);
  if (files === undefined) return '';
  return [
    '# shimkit: a response as the sh shim serves it (see src/queue/sh-fragment.ts)',
    `shimkit_delay=${delay}`,
    `shimkit_files() { ${files.length > 0 ? files.join(' && ') : ':'}; }`,
    `shimkit_out=${printfFormat(out)} shimkit_outlen=${out.length}`,
    `shimkit_err=${printfFormat(err)} shimkit_errlen=${err.length}`,
    `shimkit_code=${response.exitCode ?? 0}`,
    '',
  ].join('\n');
}

/** The `sleep` operand for a delay ('' for none), or undefined when the shim should not sleep it. */
function delaySeconds(delayMs: number, config: WireConfig, sh: ShCapabilities): string | undefined {
  if (delayMs === 0) return '';
  if (sh.sleep === 'none' || delayMs > SH_DELAY_LIMIT_MS) return undefined;
  if (delayMs + TIMEOUT_MARGIN_MS > config.timeoutMs) return undefined;
  if (sh.sleep === 'seconds') return delayMs % 1000 === 0 ? String(delayMs / 1000) : undefined;
  // The runner's timer waits at least 1 ms; so does this.
  return (Math.max(delayMs, 1) / 1000).toFixed(3);
}

/** `mkdir -p` and `printf … >|` steps for the files, or undefined when the shim cannot write them. */
function fileSteps(files: Record<string, string>, sh: ShCapabilities): string[] | undefined {
  const steps: string[] = [];
  let bytes = 0;
  for (const [path, content] of Object.entries(files)) {
    // A NUL cannot be in a shell word; the runner reports such a path as Node does.
    if (path.includes('\0')) return undefined;
    const data = Buffer.from(content);
    bytes += data.length;
    if (bytes > SH_FILES_LIMIT_BYTES) return undefined;
    // As the runner does: `mkdirSync(dirname(file), { recursive: true })`, then the file.
    const dir = posix.dirname(path);
    if (dir !== '.' && dir !== '/') {
      if (!sh.mkdir) return undefined;
      steps.push(`"$shimkit_mkdir" -p -- ${shWord(dir)} 8>&- 9>&-`);
    }
    steps.push(`printf ${printfFormat(data)} >| ${shWord(path)}`);
  }
  return steps;
}

/**
 * Bytes as a quoted printf format that prints exactly them: printable ASCII
 * as itself (`%` and `\` doubled), every other byte as a three-digit octal
 * escape, so the script is plain ASCII whatever the bytes (NUL, invalid
 * UTF-8, a shell's internal quoting bytes) and no shell can reinterpret it.
 */
export function printfFormat(bytes: Uint8Array): string {
  let text = "'";
  for (const byte of bytes) {
    if (byte === 0x25) text += '%%';
    else if (byte === 0x5c) text += '\\\\';
    else if (byte >= 0x20 && byte < 0x7f && byte !== 0x27) text += String.fromCharCode(byte);
    else text += `\\${byte.toString(8).padStart(3, '0')}`;
  }
  return `${text}'`;
}

/** A shell word for any string without NUL: single-quoted, each `'` as `'\''`. */
function shWord(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * `state.sh`: the live generation for the shim, whether it may serve calls
 * at all (not while a test hook stops calls at a step), and how many
 * responses have their `sh/<n>` (so the shim need not search for them).
 */
export function shStateText(state: WireState, total: number): string {
  const on = state.config.sh !== undefined && state.config.stopAt === undefined;
  return `shimkit_gen=${state.generation} shimkit_on=${on ? 1 : 0} shimkit_total=${total}\n`;
}
