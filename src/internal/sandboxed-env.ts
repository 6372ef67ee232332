import { childProcess } from './lazy.js';

let sandboxed: boolean | undefined;

/**
 * Whether this code sees a copy of `process.env` that the processes it
 * starts do not get. jest runs each test file with its own `process` object
 * and env copy: changing `process.env.PATH` there changes nothing for a
 * child spawned without an `env` option, and the `exit` events of that
 * object never fire. Told for certain by starting `sh` (`cmd` on Windows)
 * with the default env once per process (~2 ms) and asking whether it sees a
 * variable set here.
 */
export function envIsSandboxed(): boolean {
  if (sandboxed === undefined) {
    const key = `SHIMKIT_ENV_PROBE_${process.pid}`;
    process.env[key] = '1';
    try {
      const seen =
        process.platform === 'win32'
          ? childProcess()
              .spawnSync(process.env.ComSpec ?? 'cmd.exe', ['/d', '/s', '/c', `echo %${key}%`], {
                encoding: 'utf8',
                windowsHide: true,
              })
              .stdout?.trim()
          : childProcess().spawnSync('/bin/sh', ['-c', `printf %s "\${${key}-}"`], {
              encoding: 'utf8',
            }).stdout;
      sandboxed = seen !== '1' && seen !== undefined && seen !== null;
    } catch {
      sandboxed = false;
    } finally {
      delete process.env[key];
    }
  }
  return sandboxed;
}
