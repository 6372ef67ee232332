/**
 * What `shimkit` exits with. Documented in `shimkit --help` and the README;
 * scripts may rely on them.
 */
export const ExitCode = {
  /** Done; for `verify`, every mock is done. */
  ok: 0,
  /** The check failed: `verify` found unused responses or calls (requests) without one; a wait (`wait-requests`, `release --wait`) timed out; `demo` did not go as scripted; `verify-pack` found a broken check; `leaks`: the command exited 0 but left processes running. */
  failed: 1,
  /** The command line is wrong: an unknown command or flag, a missing or bad value. */
  usage: 2,
  /** What the command works on is not right: not a shimkit mock dir, no such mock, no mock server running in the dir, cannot write the state, cannot listen; `verify-pack` could not check. */
  state: 3,
  /** A bug in shimkit: an unexpected error (the stack is printed). */
  internal: 70,
} as const;

export const EXIT_CODES_HELP = `Exit codes:
  0   ok (verify: every scripted response was used, no call went unanswered)
  1   verify: responses never used or calls without a response (for a mock server: requests
      nothing answered, under --strict; the report is on stderr); wait-requests and
      release --wait: the wait timed out; demo: the example did not go as scripted;
      verify-pack: a check of the packed package failed; leaks: the command exited 0
      but left processes running (leaks otherwise exits with the command's own code)
  2   usage error: unknown command or flag, missing or bad value, a name already mocked,
      a path no dir can be made at or a socket path too long (the message says which)
  3   the dir is not a shimkit mock dir, the mock does not exist, the state cannot be
      written, no mock server runs in the dir (or one already does, for serve), or the
      proxy or server cannot listen where it was told (taken, no such dir); verify-pack:
      it could not check (no npm beside node, no or an invalid package.json)
  70  an unexpected error in shimkit itself (please report it, with the stack printed)`;

/** A mistake on the command line: exit 2, with a pointer to the command's help. */
export class UsageError extends Error {
  constructor(
    readonly command: string,
    message: string,
  ) {
    super(message);
  }
}
