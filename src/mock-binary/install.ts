import { UnsupportedHereError } from '../internal/errors.js';
import { onProcessExit } from '../internal/exit-cleanup.js';
import { pathKey, prependPathEntry, removePathEntry } from '../internal/path-env.js';
import { envIsSandboxed } from '../internal/sandboxed-env.js';

/**
 * Puts shim dirs on `process.env.PATH` and takes them off again. Each install
 * adds one entry and its uninstall removes that one entry, wherever it now is,
 * so mocks can be uninstalled in any order (no LIFO assumption). If the
 * process dies first, the exit handler takes every entry off.
 */
const active = new Set<symbol>();
/** PATH as it was before the first of the currently active installs. */
let baseline: { value: string | undefined } | undefined;

export function installOnPath(
  dir: string,
  platform: NodeJS.Platform = process.platform,
): () => void {
  if (envIsSandboxed()) {
    throw new UnsupportedHereError(
      `install() cannot reach the programs this test starts: this test runs with its own copy of process.env (jest gives each test file one), and a child process started without an env option gets the real one, where ${dir} is not on PATH. Pass the mock's env() to the program under test instead — run(cmd, args, { env: git.env() }), execFileSync(cmd, args, { env: git.env() }) — or sandbox.use(git) with a sandbox.`,
    );
  }
  const env = process.env;
  const key = pathKey(env, platform);
  if (active.size === 0) baseline = { value: env[key] };
  const token = Symbol(dir);
  active.add(token);
  env[key] = prependPathEntry(env[key], dir, platform);

  let done = false;
  const uninstall = () => {
    if (done) return;
    done = true;
    forget();
    active.delete(token);
    const left = removePathEntry(env[key], dir, platform);
    if (left !== undefined) env[key] = left;
    else if (active.size === 0 && baseline?.value === undefined) delete env[key];
    else env[key] = '';
    if (active.size === 0) baseline = undefined;
  };
  const forget = onProcessExit(uninstall);
  return uninstall;
}
