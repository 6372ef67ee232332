/** One `shimkit` command. */
export interface Command {
  name: string;
  /** One line for `shimkit --help`. */
  summary: string;
  /** The synopsis, shown in usage errors. */
  usage: string;
  /** The full text of `shimkit NAME --help`, examples included. */
  help: string;
  /** Run with the arguments after the command name; resolves with the exit code. */
  run(argv: readonly string[]): number | Promise<number>;
}
