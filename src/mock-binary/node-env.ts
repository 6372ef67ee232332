/**
 * Variables that change how Node itself starts or behaves: the shim moves
 * them aside before it runs the runner, so a mocked call prints and writes
 * exactly what was scripted whatever the caller's env (requirement MB-20), and the
 * runner puts them back (src/runner/env.ts) so the call record shows them
 * as the caller set them. Every variable `node --help` lists is here (a test
 * checks), plus the ones Node reads without listing them.
 */
export const NODE_RUNTIME_VARS: readonly string[] = [
  'NODE_OPTIONS',
  'NODE_DEBUG',
  'NODE_DEBUG_NATIVE',
  'NODE_V8_COVERAGE',
  'NODE_EXTRA_CA_CERTS',
  'NODE_REDIRECT_WARNINGS',
  'NODE_NO_WARNINGS',
  'NODE_PENDING_DEPRECATION',
  'NODE_PENDING_PIPE_INSTANCES',
  'NODE_PATH',
  'NODE_PRESERVE_SYMLINKS',
  'NODE_PRESERVE_SYMLINKS_MAIN',
  'NODE_ICU_DATA',
  'NODE_SKIP_PLATFORM_CHECK',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'NODE_DISABLE_COLORS',
  'NODE_REPL_EXTERNAL_MODULE',
  'NODE_REPL_HISTORY',
  'NODE_COMPILE_CACHE',
  'NODE_DISABLE_COMPILE_CACHE',
  'NODE_CHANNEL_FD',
  'NODE_CHANNEL_SERIALIZATION_MODE',
  'NODE_UNIQUE_ID',
  'NODE_TEST_CONTEXT',
  'NODE_USE_ENV_PROXY',
  'NODE_USE_SYSTEM_CA',
  'NODE_INSPECT_RESUME_ON_START',
  'FORCE_COLOR',
  'NO_COLOR',
  'UV_THREADPOOL_SIZE',
  'UV_USE_IO_URING',
  'OPENSSL_CONF',
];

/**
 * POSIX sh lines that move each set variable to `SHIMKIT_MOVED_<name>` and
 * list it in `SHIMKIT_MOVED`. One `case` first, so a call whose env has none
 * of them (the usual one) pays for a single expansion.
 */
export function posixMoveLines(): string {
  const any = NODE_RUNTIME_VARS.map((v) => `\${${v}+x}`).join('');
  return [
    'SHIMKIT_MOVED=',
    `case "${any}" in ?*)`,
    ...NODE_RUNTIME_VARS.map(
      (v) =>
        `  if [ -n "\${${v}+x}" ]; then SHIMKIT_MOVED_${v}=$${v}; export SHIMKIT_MOVED_${v}; unset ${v}; SHIMKIT_MOVED="$SHIMKIT_MOVED ${v}"; fi`,
    ),
    '  export SHIMKIT_MOVED',
    'esac',
  ].join('\n');
}

/**
 * cmd.exe lines doing the same. They run with delayed expansion on, so
 * `!VAR!` copies a value without cmd.exe parsing `&|<>^%` in it; the caller
 * switches it off again before `%*`.
 */
export function windowsMoveLines(): string {
  return [
    'set "SHIMKIT_MOVED="',
    ...NODE_RUNTIME_VARS.map(
      (v) =>
        `if defined ${v} (set "SHIMKIT_MOVED_${v}=!${v}!" & set "${v}=" & set "SHIMKIT_MOVED=!SHIMKIT_MOVED! ${v}")`,
    ),
  ].join('\r\n');
}
