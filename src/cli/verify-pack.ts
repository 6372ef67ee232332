import { resolve } from 'node:path';
import { formatPackedInstallReport, type ImportChecks, verifyPackedInstall } from 'shimkit';
import { milliseconds, parseArgs, positionals } from './args.js';
import type { Command } from './command.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { commandModule } from './run.js';

/** `semver 1.2.3 -r '^1'` → words, with '…' and "…" quoting and \ escapes (no expansion). */
export function splitWords(command: string, text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < text.length) word += text[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote)
    throw new UsageError(command, `--run ${JSON.stringify(text)} has an unclosed ${quote}.`);
  if (inWord) words.push(word);
  return words;
}

/** `vitest@^4` and `@scope/x@1` → [name, range]. */
function peer(command: string, text: string): [string, string] {
  const at = text.lastIndexOf('@');
  if (at <= 0) {
    throw new UsageError(
      command,
      `--peer takes NAME@RANGE, such as vitest@^4, got ${JSON.stringify(text)}.`,
    );
  }
  return [text.slice(0, at), text.slice(at + 1)];
}

/** `shimkit verify-pack`: verifyPackedInstall() from any language's CI. */
export const verifyPackCommand: Command = {
  name: 'verify-pack',
  usage: 'shimkit verify-pack [DIR] [--run "BIN ARGS"]... [--offline] [--json] [options]',
  help: `Pack the package in DIR (default: the current dir) with npm pack, install the tarball into
a fresh project in a sandbox with an npm of its own (its own HOME, cache, user and global
config; only the host's registry and how to reach it are kept), run each --run bin through
node_modules/.bin (it must exit 0), and load every exports subpath with import() and
require() and type-check it under moduleResolution node16 and bundler. Each failed check
is printed with its cause and fix; a require() that loaded an ES module while engines.node
admits a Node that cannot (18, 20.0-20.18) is printed with a warning, which does not change
the exit. Exit 0 when every check passed, 1 when one failed, 3 when
it could not check (no npm beside node; DIR has no package.json, or one that is not JSON or
names no name or version).

Options:
  --run "BIN ARGS"     run this bin with these args after the install (repeatable; quote
                       words with ' or "); it must exit 0
  --offline            install only from the host's npm cache, at the lockfile's versions
  --peer NAME@RANGE    install this package beside it, as a user does (an optional peer)
  --types-only SUBPATH check this subpath's types, but do not load it (repeatable)
  --esm-only SUBPATH   this subpath is an ES module only: do not require() it or
                       type-check it as CommonJS (repeatable)
  --subpath SUBPATH    check only these subpaths (repeatable; default: every one)
  --no-require         do not require() (an ESM-only package)
  --no-imports         do not load or type-check any entry point
  --preload CODE       CommonJS code run before the entry points load (a runner's globals)
  --registry URL       install dependencies from here (default: the host npm's registry)
  --timeout DURATION   deadline for each npm and tsc step (default 300s)
  --json               print the report as JSON (the verifyPackedInstall() report)

Examples:
  shimkit verify-pack --run 'my-cli --version'
  shimkit verify-pack packages/cli --offline --json
  shimkit verify-pack --run 'semver 1.2.3 -r ^1' --no-imports`,
  async run(argv) {
    const name = 'verify-pack';
    const args = parseArgs(name, argv, {
      run: { kind: 'list', value: '"BIN ARGS"' },
      offline: { kind: 'switch' },
      peer: { kind: 'list', value: 'NAME@RANGE' },
      'types-only': { kind: 'list', value: 'SUBPATH' },
      'esm-only': { kind: 'list', value: 'SUBPATH' },
      subpath: { kind: 'list', value: 'SUBPATH' },
      'no-require': { kind: 'switch' },
      'no-imports': { kind: 'switch' },
      preload: { kind: 'value', value: 'CODE' },
      registry: { kind: 'value', value: 'URL' },
      timeout: { kind: 'value', value: 'DURATION' },
      json: { kind: 'switch' },
    });
    const [dir] = positionals(name, args, [], ['DIR']);
    const run = (args.lists.get('run') ?? []).map((text) => {
      const [bin, ...rest] = splitWords(name, text);
      if (bin === undefined)
        throw new UsageError(name, '--run needs a bin name: --run "BIN ARGS".');
      return { bin, args: rest };
    });
    const timeout = args.values.get('timeout');
    const subpaths = args.lists.get('subpath');
    const imports: 'none' | ImportChecks = args.switches.has('no-imports')
      ? 'none'
      : {
          require: !args.switches.has('no-require'),
          typesOnly: args.lists.get('types-only') ?? [],
          esmOnly: args.lists.get('esm-only') ?? [],
          ...(subpaths ? { subpaths } : {}),
        };
    const report = await verifyPackedInstall({
      packageDir: resolve(dir ?? '.'),
      run,
      imports,
      offline: args.switches.has('offline'),
      peers: Object.fromEntries((args.lists.get('peer') ?? []).map((p) => peer(name, p))),
      ...(args.values.has('preload') ? { preload: args.values.get('preload') } : {}),
      ...(args.values.has('registry') ? { registry: args.values.get('registry') } : {}),
      ...(timeout ? { timeoutMs: milliseconds(name, '--timeout', timeout) } : {}),
    });
    if (args.switches.has('json')) process.stdout.write(`${JSON.stringify(report)}\n`);
    else process.stdout.write(`${formatPackedInstallReport(report)}\n`);
    return report.ok ? ExitCode.ok : ExitCode.failed;
  },
};

export const { exec, help } = commandModule(verifyPackCommand);
