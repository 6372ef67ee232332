import { spawnSync } from 'node:child_process';
import { truncate } from '../internal/describe.js';
import { ShimkitError } from '../internal/errors.js';
import { pathKey } from '../internal/path-env.js';
import { formatCommand } from '../queue/format.js';

/**
 * `git: true` (requirement SP-02): the workspace becomes a repo on `main` with one
 * empty commit whose author, committer and dates are fixed, so hashes and
 * `git log` output are the same on every machine. The repo's local config
 * names the same identity, so later commits in the sandbox work too.
 */

/** Who made the initial commit of a `git: true` sandbox, and when. */
export const SANDBOX_GIT_IDENTITY = {
  name: 'shimkit',
  email: 'shimkit@example.invalid',
  date: '2000-01-01T00:00:00Z',
} as const;

const GIT_TIMEOUT_MS = 30_000;

/** `git: true` could not set up the repo: git is missing, failed or hung. */
export class GitSetupError extends ShimkitError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_SHIMKIT_GIT_SETUP', message, options);
  }
}

/**
 * Run `git init` and `git commit` in `workspace` with the sandbox `env`.
 * `noHooksDir` must not exist: hooks are looked up there, so none ever run,
 * and `--template=` keeps the host's template hooks out of `.git`.
 */
export function initGitRepo(
  workspace: string,
  env: Record<string, string>,
  noHooksDir: string,
): void {
  const { name, email, date } = SANDBOX_GIT_IDENTITY;
  const gitEnv = {
    ...env,
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
    GIT_COMMITTER_DATE: date,
  };
  const config = [
    `core.hooksPath=${noHooksDir}`,
    'commit.gpgsign=false',
    'init.defaultBranch=main',
    `user.name=${name}`,
    `user.email=${email}`,
  ].flatMap((setting) => ['-c', setting]);
  for (const args of [
    ['init', '--quiet', '--template='],
    ['commit', '--quiet', '--allow-empty', '--no-verify', '-m', 'initial commit'],
    // The repo's own identity, so the program under test can commit too
    // (the sandbox has no global config to take one from).
    ['config', 'user.name', name],
    ['config', 'user.email', email],
  ]) {
    const result = spawnSync('git', [...config, ...args], {
      cwd: workspace,
      env: gitEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: GIT_TIMEOUT_MS,
      windowsHide: true,
    });
    const shown = `\`${formatCommand('git', args)}\``;
    const where = `Could not make the sandbox workspace ${workspace} a git repo (\`git: true\`)`;
    const error = result.error as NodeJS.ErrnoException | undefined;
    if (error?.code === 'ENOENT') {
      throw new GitSetupError(
        `${where}: git was not found on the sandbox PATH (${truncate(env[pathKey(env, process.platform)] ?? '', 200) || 'empty'}) while running ${shown}. ` +
          'Install git or put it on PATH, or create the sandbox without `git: true`.',
        { cause: error },
      );
    }
    if (error) {
      const reason =
        error.code === 'ETIMEDOUT' ? `timed out after ${GIT_TIMEOUT_MS} ms` : error.message;
      throw new GitSetupError(`${where}: ${shown} ${reason}.`, { cause: error });
    }
    if (result.status !== 0) {
      const how =
        result.status === null ? `was killed by ${result.signal}` : `exited with ${result.status}`;
      const stderr = truncate(result.stderr.trim(), 1000) || '(no stderr)';
      throw new GitSetupError(
        `${where}: ${shown} ${how}: ${stderr}\n` +
          'Check that `git` works in a clean env (no global config), or create the sandbox without `git: true`.',
      );
    }
  }
}
