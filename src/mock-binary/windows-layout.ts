import { copyFileSync, linkSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { packageFile } from '../internal/package-files.js';

/**
 * Where a bin dir keeps its files on Windows, and why.
 *
 * - The shims live in `<root>\node_modules\.bin\`. cross-spawn (which most
 *   Node CLIs use to run commands on Windows) escapes the arguments of a
 *   `.cmd` file twice only when its path matches `node_modules\.bin\*.cmd`,
 *   as npm's own shims do; a shim passes them on through `%*`, which cmd.exe
 *   parses a second time. Anywhere else `"&calc&"` would run `calc`.
 * - cmd.exe reads a `.cmd` file in the OEM code page, so the shim may only
 *   spell out paths in printable ASCII. Others it names from its own
 *   location (`%~dp0`, which cmd.exe keeps in Unicode), so everything it
 *   runs is inside the root: the runner is copied into `<root>\runner\`, and
 *   a Node whose path is not printable ASCII (`C:\Users\Jürgen\…\node.exe`)
 *   is hard-linked (copied where a link cannot be made) into
 *   `<root>\node\<n>\`.
 */
export const WINDOWS_BIN_SEGMENTS = ['node_modules', '.bin'] as const;

/** The shim dir of a bin dir rooted at `root`. */
export function shimDirOf(root: string, platform: NodeJS.Platform): string {
  return platform === 'win32' ? join(root, ...WINDOWS_BIN_SEGMENTS) : join(root, 'bin');
}

/** Whether cmd.exe reads `text` from a `.cmd` file as written: printable ASCII only. */
export function cmdReadable(text: string): boolean {
  return /^[\x20-\x7e]*$/.test(text);
}

/**
 * The runner's bundles (tsup.config.ts): the hot one and the halves it loads
 * on demand (runner/lazy.ts), all copied beside each other.
 */
export const RUNNER_FILES = [
  'runner.cjs',
  'runner-cold.cjs',
  'runner-route.cjs',
  'runner-proxy.cjs',
] as const;

/** The runner and Node a Windows shim in `root` runs, made reachable from the shim. */
export class WindowsFiles {
  readonly #root: string;
  #runner: string | undefined;
  readonly #nodes = new Map<string, string>();

  constructor(root: string) {
    this.#root = root;
  }

  /** `<root>\runner\runner.cjs`, copied with the halves it loads on demand (once per bin dir). */
  runner(): string {
    if (this.#runner === undefined) {
      const dir = join(this.#root, 'runner');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      for (const file of RUNNER_FILES) {
        copyFileSync(packageFile(join('dist', file)), join(dir, file));
      }
      this.#runner = join(dir, 'runner.cjs');
    }
    return this.#runner;
  }

  /** `nodePath` itself when cmd.exe can read it, else a link to it inside the root. */
  node(nodePath: string): string {
    if (cmdReadable(nodePath)) return nodePath;
    let local = this.#nodes.get(nodePath);
    if (local === undefined) {
      const dir = join(this.#root, 'node', String(this.#nodes.size + 1));
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const name = cmdReadable(basename(nodePath)) ? basename(nodePath) : 'node.exe';
      local = join(dir, name);
      try {
        linkSync(nodePath, local); // instant, on the same volume
      } catch {
        copyFileSync(nodePath, local); // another volume, or a file system without hard links
      }
      this.#nodes.set(nodePath, local);
    }
    return local;
  }
}
