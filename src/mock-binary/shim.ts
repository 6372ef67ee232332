import { isAbsolute, relative, sep } from 'node:path';
import { InvalidOptionError } from '../internal/errors.js';
import { shimTemplate } from '../internal/package-files.js';
import { shQuote } from '../internal/sh-quote.js';
import { SH_ROUTE_LIMIT } from '../queue/sh-route.js';
import type { WireConfig } from '../queue/types.js';
import { posixMoveLines, windowsMoveLines } from './node-env.js';
import type { ShTools } from './sh-tools.js';
import { cmdReadable } from './windows-layout.js';

/** What a shim needs to know: which Node, which runner, which state dir. */
export interface ShimTarget {
  name: string;
  nodePath: string;
  /** Options for that Node (see runner-flags.ts); plain option words, no quoting needed. */
  nodeFlags: readonly string[];
  runnerPath: string;
  stateDir: string;
  /** The dir the shim is written to. */
  shimDir: string;
  /** The bin dir's temp dir, which holds the shim dir and the state. */
  root: string;
  /** POSIX: serve static responses in the shim (`config.sh` set), with these tools. */
  fast?: { config: WireConfig; tools: ShTools };
}

/** The shim's file name: the command name itself, or `<name>.cmd` on Windows. */
export function shimFileName(name: string, platform: NodeJS.Platform): string {
  if (platform !== 'win32') return name;
  return /\.(cmd|bat)$/i.test(name) ? name : `${name}.cmd`;
}

/**
 * A POSIX sh shim: its fast path, if any, then `exec '<node>' '<runner>'
 * '<state>' "$@"`.
 */
export function renderPosixShim(target: ShimTarget): string {
  return (
    fill(shimTemplate('posix.sh'), target, shQuote)
      .replaceAll('@@NAME_SH@@', () => shQuote(JSON.stringify(target.name)))
      // Inside a JSON string: the name's JSON, escaped again.
      .replaceAll('@@NAME_JSON@@', () =>
        shQuote(JSON.stringify(JSON.stringify(target.name)).slice(1, -1)),
      )
      .replace('@@MOVE_ENV@@', () => posixMoveLines())
      .replace('@@FAST@@', () =>
        target.fast ? renderFastPath(target.fast.config, target.fast.tools) : '',
      )
  );
}

/** The fast path of a POSIX shim (shims/posix-fast.sh) for a mock with `config`. */
function renderFastPath(config: WireConfig, tools: ShTools): string {
  const keys = Array.isArray(config.recordEnv) ? config.recordEnv : undefined;
  // Keys are shell names (sh-tools.ts checked), so they need no quoting.
  const env = (keys ?? [])
    .map(
      (key) =>
        ` &&\n      if [ -n "\${${key}+x}" ]; then printf '${key}=%s\\0' "$${key}"; else printf '${key}\\0'; fi`,
    )
    .join('');
  return (
    shimTemplate('posix-fast.sh')
      .replace('@@MKDIR@@', () => shQuote(tools.mkdir ?? ''))
      .replace('@@SLEEP@@', () => shQuote(tools.sleep ?? ''))
      .replace('@@EXHAUSTED@@', () => exhaustedLines(config, PLAIN_REPEAT))
      .replace('@@ROUTED_EXHAUSTED@@', () => exhaustedLines(config, ROUTED_REPEAT))
      .replace('@@ROUTE_LIMIT@@', () => String(SH_ROUTE_LIMIT))
      .replace('@@ENVC@@', () => (keys ? `,"envc":${keys.length}` : ''))
      .replace('@@ENV@@', () => env)
      // Its comments are for readers of the template; a call need not parse them.
      .split('\n')
      .filter((line) => !/^\s*#/.test(line))
      .join('\n')
      .trimEnd()
  );
}

/**
 * What a call gets once no response is left for it (as src/queue/claim.ts
 * and route-claim.ts decide), with `repeat` for onExhausted 'repeat'.
 */
function exhaustedLines(config: WireConfig, repeat: readonly string[]): string {
  if (config.spy || config.onExhausted === 'fail') return '  return 1';
  if (typeof config.onExhausted === 'object') {
    return '  shimkit_src=fallback shimkit_f=$shimkit_state/fallback.sh';
  }
  return repeat.join('\n');
}

/** `shimkit_which`, every queued response claimed: the last repeats (none queued: the default). */
const PLAIN_REPEAT = [
  '  if [ "$shimkit_t" -gt 0 ]; then',
  '    shimkit_src=repeat shimkit_r=$shimkit_t shimkit_f=$shimkit_d/sh/$shimkit_t',
  // A queue line no sh/<n> stands for was written by hand: the runner reads it.
  '  elif [ -s "$shimkit_d/queue.jsonl" ]; then',
  '    return 1',
  '  else',
  '    shimkit_src=default shimkit_f=$shimkit_state/default.sh',
  '  fi',
];

/**
 * `shimkit_walk`, no fitting response with a free slot: the last one that
 * fitted repeats; a call nothing fitted gets the runner's diagnostic, which
 * names the closest response.
 */
const ROUTED_REPEAT = [
  '  [ -n "$shimkit_last" ] || return 1',
  '  shimkit_src=repeat shimkit_r=$shimkit_last shimkit_f=$shimkit_d/sh/$shimkit_last',
];

/**
 * A Windows `.cmd` shim. cmd.exe reads it in the OEM code page, so a path
 * that is not printable ASCII (a temp dir under `C:\Users\Jürgen`) is named
 * from the shim's own location, `%~dp0`, which cmd.exe keeps in Unicode;
 * the runner and Node are made reachable inside the root for that (see
 * windows-layout.ts). Paths are put in double quotes (Windows paths cannot
 * contain `"`); inside them cmd.exe only expands `%`, so that is the one
 * character escaped (`%%`). The line that runs node has delayed expansion
 * off, so `!` in paths and arguments is literal.
 */
export function renderWindowsShim(target: ShimTarget): string {
  const quote = (value: string) => cmdPath(value, target);
  return fill(shimTemplate('windows.cmd'), target, quote).replace(
    '@@MOVE_ENV@@',
    windowsMoveLines(),
  );
}

/**
 * A path as the shim names it: absolute when cmd.exe can read it (escaping
 * `%`), else from the shim's own location (`"%~dp0..\..\state\git.1a2b"`)
 * for a path inside the root. `%~dp0` is the fallback, not the rule: Wine's
 * cmd.exe expands `%VAR%` again inside what `%~dp0` expands to.
 */
function cmdPath(value: string, target: ShimTarget): string {
  if (cmdReadable(value)) return cmdQuote(value);
  const inRoot = relative(target.root, value);
  if (inRoot !== '' && !inRoot.startsWith('..') && !isAbsolute(inRoot)) {
    const fromShim = relative(target.shimDir, value).split(sep).join('\\');
    if (cmdReadable(fromShim)) return `"%~dp0${fromShim.replaceAll('%', '%%')}"`;
  }
  throw new InvalidOptionError(
    `A Windows shim cannot name ${value}: cmd.exe reads .cmd files in the OEM code page, so a path outside the mock's temp dir must be printable ASCII.`,
  );
}

export function renderShim(target: ShimTarget, platform: NodeJS.Platform): string {
  return platform === 'win32' ? renderWindowsShim(target) : renderPosixShim(target);
}

function fill(template: string, target: ShimTarget, quote: (value: string) => string): string {
  // Replacer functions: a path may hold `$&`, which a replacement string would expand.
  return template
    .replace('@@NAME@@', () => JSON.stringify(target.name).replaceAll('%', '%%'))
    .replace('@@NODE@@', () => [quote(target.nodePath), ...target.nodeFlags].join(' '))
    .replace('@@RUNNER@@', () => quote(target.runnerPath))
    .replace('@@STATE@@', () => quote(target.stateDir));
}

export function cmdQuote(value: string): string {
  if (value.includes('"')) {
    throw new InvalidOptionError(
      `A Windows shim cannot refer to a path containing a double quote: ${value}`,
    );
  }
  return `"${value.replaceAll('%', '%%')}"`;
}

export { shQuote };
