import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotBuiltError } from './errors.js';

/**
 * Files shipped beside the code: the bundled shim runner and the shim
 * templates. Found relative to this module, whether it runs bundled from
 * `dist/` or from `src/internal/` in shimkit's own tests.
 */
const here = dirname(fileURLToPath(import.meta.url));
const roots = [join(here, '..'), join(here, '..', '..')];
const found = new Map<string, string>();

export function packageFile(relative: string): string {
  const cached = found.get(relative);
  if (cached) return cached;
  for (const root of roots) {
    const candidate = join(root, relative);
    if (existsSync(candidate)) {
      found.set(relative, candidate);
      return candidate;
    }
  }
  throw new NotBuiltError(`${relative} (looked in ${roots.join(' and ')})`);
}

/** Absolute path of the bundled shim runner, `dist/runner.cjs`. */
export function runnerPath(): string {
  return packageFile(join('dist', 'runner.cjs'));
}

const templates = new Map<string, string>();

/** The text of a shim template in `shims/`. */
export function shimTemplate(name: 'posix.sh' | 'posix-fast.sh' | 'windows.cmd'): string {
  let text = templates.get(name);
  if (text === undefined) {
    text = readFileSync(packageFile(join('shims', name)), 'utf8');
    templates.set(name, text);
  }
  return text;
}
