import { resolve } from 'node:path';
import { sweepLeftovers } from 'shimkit';
import { parseArgs, positionals } from './args.js';
import type { Command } from './command.js';
import { ExitCode } from './exit-codes.js';
import { commandModule } from './run.js';
import { plural } from './words.js';

/** `shimkit clean`: the leftover sweep, on demand. */
export const cleanCommand: Command = {
  name: 'clean',
  usage: 'shimkit clean [--dir PARENT]... [--json]',
  help: `Remove temp dirs, proxy socket files and process groups left by shimkit users that
died without cleaning up (SIGKILL, a crashed worker): only what belongs to a process
that is gone, and to you. Dirs made with keep (\`shimkit mock --dir\`) are never touched.
A detached \`shimkit serve\` whose owner is gone (and that has not stopped by itself)
is killed, its files removed, and its dir too if nothing else is in it.
shimkit does this by itself once per process; this runs it now (sweepLeftovers()).

Options:
  --dir PARENT   also sweep this temp parent (the tmpDir your tests used; repeatable)
  --json         print the report {"removed","killed","sockets","failed"} as JSON

Examples:
  shimkit clean
  shimkit clean --dir /var/tmp/my-tests --json`,
  run(argv) {
    const args = parseArgs('clean', argv, {
      dir: { kind: 'list', value: 'PARENT' },
      json: { kind: 'switch' },
    });
    positionals('clean', args, []);
    const report = sweepLeftovers({ dirs: (args.lists.get('dir') ?? []).map((d) => resolve(d)) });
    if (args.switches.has('json')) {
      process.stdout.write(`${JSON.stringify(report)}\n`);
    } else {
      for (const path of report.removed) process.stdout.write(`removed ${path}\n`);
      for (const pgid of report.killed) process.stdout.write(`killed process group ${pgid}\n`);
      for (const path of report.sockets) process.stdout.write(`removed socket ${path}\n`);
      for (const { path, reason } of report.failed) {
        process.stderr.write(`could not remove ${path}: ${reason}\n`);
      }
      process.stdout.write(
        `clean: ${plural(report.removed.length, 'dir')} removed, ${plural(report.killed.length, 'process group')} killed, ${plural(report.sockets.length, 'socket')} removed${report.failed.length ? `, ${report.failed.length} failed` : ''}\n`,
      );
    }
    return report.failed.length > 0 ? ExitCode.state : ExitCode.ok;
  },
};

export const { exec, help } = commandModule(cleanCommand);
