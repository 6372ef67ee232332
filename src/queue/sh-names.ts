/** An env var name a POSIX shell can read as `$NAME`. */
export const SH_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Names a shell sets for itself whether or not the caller's env has them
 * (dash sets PS1, PS4, OPTIND, PPID, and PATH when it is unset; bash as sh
 * also TERM, SHELL, SHLVL, POSIXLY_CORRECT; busybox more), or the shim
 * or the runner uses (it takes SHIMKIT_PASSED_THROUGH and the moved
 * NODE_* vars out of its env): `$NAME` in the shell is not the env var the
 * runner would see.
 */
export const SHELL_OWNED =
  /^(?:_|IFS|PPID|PS[1-4]|OPTIND|OPTARG|OPTERR|LINENO|SECONDS|S?RANDOM|HOSTNAME|HOSTTYPE|MACHTYPE|OSTYPE|E?UID|GROUPS|HIST[A-Z]*|MAIL|MAILCHECK|MAILPATH|COLUMNS|LINES|SHELLOPTS|BASHOPTS|BASH|BASH_[A-Z0-9_]*|BASHPID|COMP_[A-Z_]*|EPOCH[A-Z]*|PIPESTATUS|FUNCNAME|DIRSTACK|OLDPWD|PWD|SHLVL|POSIXLY_CORRECT|TERM|SHELL|PATH|shimkit_.*|SHIMKIT_.*)$/;

/** Whether `$name` in the shim's shell is the caller's env var `name`. */
export const shellReads = (name: string): boolean => SH_NAME.test(name) && !SHELL_OWNED.test(name);
