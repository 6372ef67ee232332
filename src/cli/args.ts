import { UsageError } from './exit-codes.js';
import { nearestWord } from './words.js';

/**
 * The command line of one `shimkit` command: positionals and `--flags`.
 * `--flag value` and `--flag=value`; a value flag takes the next argument
 * whatever it looks like (so `--stdout -n` works); `--` ends the flags.
 * An unknown flag is refused with the nearest known one.
 */

export type FlagKind = 'value' | 'list' | 'switch';

export interface FlagSpec {
  kind: FlagKind;
  /** Shown in the usage error for a missing value, e.g. `TEXT`. */
  value?: string;
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

export interface Parsed {
  positionals: string[];
  /** `value` flags: the last one given. */
  values: Map<string, string>;
  /** `list` flags, in the order given. */
  lists: Map<string, string[]>;
  switches: Set<string>;
  /** Every flag in the order given, with its value (for flags whose order matters). */
  order: { flag: string; value: string | undefined }[];
}

export function parseArgs(command: string, argv: readonly string[], specs: FlagSpecs): Parsed {
  const parsed: Parsed = {
    positionals: [],
    values: new Map(),
    lists: new Map(),
    switches: new Set(),
    order: [],
  };
  const known = Object.keys(specs);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      parsed.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      parsed.positionals.push(arg);
      continue;
    }
    if (arg === '--help' || arg === '-h') throw new HelpRequested();
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') ? arg.slice(2, eq === -1 ? undefined : eq) : arg.slice(1);
    const spec = Object.hasOwn(specs, flag) ? specs[flag] : undefined;
    if (!spec || (!arg.startsWith('--') && flag.length !== 1)) {
      const guess = nearestWord(flag.replace(/^-+/, ''), known);
      throw new UsageError(
        command,
        `unknown flag ${JSON.stringify(arg.slice(0, eq === -1 ? undefined : eq))}.${
          guess ? ` Did you mean --${guess}?` : ''
        }`,
      );
    }
    let value: string | undefined;
    if (spec.kind === 'switch') {
      if (eq !== -1) {
        throw new UsageError(command, `--${flag} takes no value (got ${JSON.stringify(arg)}).`);
      }
      parsed.switches.add(flag);
    } else {
      if (eq !== -1) value = arg.slice(eq + 1);
      else {
        if (i + 1 >= argv.length) {
          throw new UsageError(
            command,
            `--${flag} needs a value: --${flag} ${spec.value ?? 'VALUE'}.`,
          );
        }
        value = argv[++i] as string;
      }
      if (spec.kind === 'value') {
        if (parsed.values.has(flag)) {
          throw new UsageError(
            command,
            `--${flag} was given twice (${JSON.stringify(parsed.values.get(flag))} and ${JSON.stringify(value)}); give it once.`,
          );
        }
        parsed.values.set(flag, value);
      } else parsed.lists.set(flag, [...(parsed.lists.get(flag) ?? []), value]);
    }
    parsed.order.push({ flag, value });
  }
  return parsed;
}

/** Check the number of positionals; `names` says what each is, for the message. */
export function positionals(
  command: string,
  parsed: Parsed,
  names: readonly string[],
  optional: readonly string[] = [],
  rest = false,
): string[] {
  const got = parsed.positionals;
  if (got.length < names.length) {
    const missing = names.slice(got.length).join(' ');
    throw new UsageError(command, `missing ${missing}.`);
  }
  if (!rest && got.length > names.length + optional.length) {
    const extra = got.slice(names.length + optional.length);
    throw new UsageError(
      command,
      `unexpected argument${extra.length === 1 ? '' : 's'} ${extra.map((a) => JSON.stringify(a)).join(' ')}.${
        extra.some((a) => a.startsWith('—') || a.startsWith('–'))
          ? ' (A long dash was typed where "--" was meant?)'
          : ''
      }`,
    );
  }
  return got;
}

/** `--help` or `-h` where a flag may stand (not as the value of another flag): the command's help is printed. */
export class HelpRequested extends Error {}

/** `200`, `200ms`, `1.5s` → milliseconds (an integer). */
export function milliseconds(command: string, flag: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s)?$/.exec(text.trim());
  if (!match) {
    throw new UsageError(
      command,
      `${flag} takes a duration such as 200, 200ms or 1.5s, got ${JSON.stringify(text)}.`,
    );
  }
  return Math.round(Number(match[1]) * (match[2] === 's' ? 1000 : 1));
}
