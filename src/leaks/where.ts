import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where a tracked object was made, for a report (LK-01, LK-02): the first
 * frame of its creation stack that is not shimkit's own code, a test
 * runner's or Node's, as `path:line` relative to the working dir
 * (`test/repo.test.ts:42`). Reading the stack is what formats it, so the
 * runner's source maps apply here, when reporting, not when the object was
 * made.
 */

const here = dirname(fileURLToPath(import.meta.url));
/** shimkit's own code: dist/ (bundled) and src/ (what its source maps point to, and its own tests run). */
const root = basename(here) === 'dist' ? dirname(here) : resolve(here, '..', '..');
const own = [join(root, 'dist'), join(root, 'src')];
const RUNNERS = /[\\/]node_modules[\\/](?:vitest|@vitest|jest-[\w-]+|@jest|tinypool|tinyspy)[\\/]/;

/** One parsed stack frame. */
export interface Frame {
  file: string;
  line: number;
  column: number;
}

/** The frames of a V8 stack, as file, line and column (frames without a file are skipped). */
export function parseStack(stack: string | undefined): Frame[] {
  if (stack === undefined) return [];
  const frames: Frame[] = [];
  for (const text of stack.split('\n')) {
    const match = /^\s*at (?:.*?\()?(?:async )?(.+?):(\d+):(\d+)\)?$/.exec(text);
    if (!match) continue;
    let file = match[1] as string;
    if (file.startsWith('file://')) {
      try {
        file = fileURLToPath(file);
      } catch {
        // keep it as it is
      }
    }
    frames.push({ file, line: Number(match[2]), column: Number(match[3]) });
  }
  return frames;
}

/** Whether `file` is shimkit's, a runner's or Node's own. */
function notTheTests(file: string): boolean {
  return (
    file.startsWith('node:') ||
    !file.includes(sep) ||
    RUNNERS.test(file) ||
    own.some((dir) => file.startsWith(dir + sep))
  );
}

/** The first frame of `stack` in the user's code, as `path:line`; undefined when there is none. */
export function madeAt(stack: string | undefined, cwd: string = process.cwd()): string | undefined {
  const frame = parseStack(stack).find((f) => !notTheTests(f.file));
  if (frame === undefined) return undefined;
  const path = relative(cwd, frame.file);
  const shown = path.startsWith('..') || path === '' ? frame.file : path;
  return `${shown}:${frame.line}`;
}

/** For tests: the dirs whose frames are shimkit's own. */
export const ownDirs: readonly string[] = own;
