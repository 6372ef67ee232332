/** One `shimkit` command, loaded when it runs (its module may import the core). */
export interface Command {
  name: string;
  /** The synopsis, shown in usage errors. */
  usage: string;
  /** The full text of `shimkit NAME --help`, examples included. */
  help: string;
  /** Run with the arguments after the command name; resolves with the exit code. */
  run(argv: readonly string[]): number | Promise<number>;
}

/**
 * What `shimkit --help` and the did-you-mean need of a command, without
 * loading it: a command's module is imported only when that command runs,
 * so `shimkit enqueue` never loads the frame proxy (and the CLI's bundle
 * holds of the core only what each command uses).
 */
export interface CommandEntry {
  name: string;
  /** One line for `shimkit --help`. */
  summary: string;
  /** Its module: src/cli/NAME.ts, built as dist/cli/NAME.js. */
  module: string;
}
