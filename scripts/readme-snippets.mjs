// The README's code blocks as tests, so every example runs exactly as it is
// printed (test/readme.test.ts).
//
//   node scripts/readme-snippets.mjs            write test/readme/*.test.ts (npm run readme)
//   node scripts/readme-snippets.mjs --check    exit 1 if those differ from README.md
//
// test/readme.test.ts imports readmeBlocks() for the other blocks (bash,
// python, go, js, sh) and runs them.
//
// TypeScript blocks are committed as tests, so `tsc` type-checks them like any
// other test. A block that starts with `// Every example in this section runs
// with these imports:` is the set-up of the examples after it (until the next
// set-up): its imports open the generated file and the rest follows them. Every
// other TypeScript block is either a whole test file (it calls `test(` at its
// top level: copied as it is, in a `describe` named for its requirements) or
// the body of one async test (wrapped in a `test` of its own). Imports are
// hoisted, nothing else is changed: not a character of a block is rewritten.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = join(ROOT, 'README.md');
const OUT = join(ROOT, 'test', 'readme');
const SETUP = '// Every example in this section runs with these imports:';

/**
 * The requirement IDs each example proves, by its heading. A new example
 * needs a line here (the generator refuses one without), so its test is
 * titled by what it proves.
 */
const IDS = {
  'Quick start': 'MB-06',
  'Mock git for one test': 'MB-01',
  'Script a sequence of answers': 'MB-05',
  'Route calls by their arguments': 'MB-13',
  'Strict mocks': 'MB-22',
  'Stream progress, then crash': 'MB-14',
  'Spy on the real git': 'MB-15 PX-14',
  'Record once, replay in CI': 'MB-24',
  'Only mocked commands may run': 'MB-23',
  'git is not installed': 'MB-25',
  'Answer from the test, and hold calls for a race': 'MB-16',
  'Parallel calls, each response exactly once': 'MB-07',
  'A hundred calls, served without Node': 'PERF-07',
  'Several mocks, one PATH entry, for the program under test': 'MB-09',
  'A failing test explains itself': 'MB-12',
  'Record env and stdin': 'MB-06',
  'Write files and wait for a call': 'MB-03',
  'From bash, pytest or Go: the `shimkit` command': 'CLI-01',
  'vitest: fixtures and matchers': 'VT-01 VT-02',
  'jest and node:test': 'VT-02 VT-04',
  '`createMockBinDir(options?)` → `MockBinDir`': 'CLI-01 MB-18',
  'Test a CLI that calls git and docker': 'SP-01',
  'A failing push, seen from the CLI': 'SP-04',
  'Answer prompts': 'SP-08',
  'Start a server, wait until it is ready, close the whole tree': 'SP-04',
  'Drive a terminal UI on a PTY': 'SP-13',
  '`run(command, args?, options?)` → `Promise<RunResult>`': 'SP-13',
  'A password prompt that reads /dev/tty': 'SP-13',
  'Drop one frame between a client and a server': 'PX-02',
  'Delay a reply, driven by a fake clock': 'PX-12',
  'Sever every connection mid-test': 'PX-09',
  'A client that expects more than it gets fails fast': 'PX-09',
  'Fault a JSON-RPC server on stdio': 'PX-14',
  'Hold a reply for a race, then read the timeline': 'PX-15 PX-13',
  'Play the model for a tool-calling agent': 'PB-08 PB-01 PB-03 PB-04',
  'Stream a chat completion to the agent under test': 'HT-01 HT-04 HT-07 HT-08',
  'Cut the stream after the first token': 'HT-05',
  'Retry after 429': 'HT-03 HT-08',
  'Hold a turn for a race': 'HT-06',
  'Record an API once, replay it in CI': 'HT-09',
  'Check the package you publish': 'SP-12',
  'A bin that needs a dev dependency': 'SP-12',
  'Check a scope by hand': 'LK-01 LK-02',
};

/** Every fenced block of the README: language, text, first line (1-based) and the headings above it. */
export function readmeBlocks(text = readFileSync(README, 'utf8')) {
  const blocks = [];
  const lines = text.split('\n');
  let section = '';
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('## ')) section = heading = line.slice(3).trim();
    else if (line.startsWith('### ')) heading = line.slice(4).trim();
    const open = /^```(\w*)\s*$/.exec(line);
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end] !== '```') end++;
    if (end === lines.length) throw new Error(`README.md:${i + 1}: a code block is never closed`);
    blocks.push({
      lang: open[1],
      code: `${lines.slice(start, end).join('\n')}\n`,
      line: start + 1,
      section,
      heading,
    });
    i = end;
  }
  return blocks;
}

/** What a block is: 'setup', 'file' (a whole vitest test file), 'body' (of a test), or its language. */
export function kindOf(block) {
  if (block.lang !== 'ts') return block.lang || 'text';
  if (block.code.startsWith(SETUP)) return 'setup';
  return /^(test|it)\(/m.test(block.code) ? 'file' : 'body';
}

/**
 * Split a block into its leading import statements and the rest. Blank lines
 * and comments before the first import (the set-up line) are dropped.
 */
function splitImports(code) {
  const lines = code.split('\n');
  let i = 0;
  const imports = [];
  for (; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '' || (imports.length === 0 && line.startsWith('//'))) continue;
    if (!line.startsWith('import ')) break;
    let statement = line;
    while (!statement.trimEnd().endsWith(';')) statement += `\n${lines[++i]}`;
    imports.push(statement);
  }
  return { imports, rest: lines.slice(i).join('\n') };
}

function idsFor(block) {
  const ids = IDS[block.heading];
  if (!ids) {
    throw new Error(
      `README.md:${block.line}: the example under "${block.heading}" has no requirement IDs; add them to IDS in scripts/readme-snippets.mjs`,
    );
  }
  return ids;
}

/** Test titles: the IDs and the heading, numbered when a heading has more than one block. */
function titles(blocks) {
  const seen = new Map();
  return blocks.map((block) => {
    if (kindOf(block) === 'setup') return undefined;
    const n = (seen.get(block.heading) ?? 0) + 1;
    seen.set(block.heading, n);
    return `${idsFor(block)} README: ${block.heading.replace(/`/g, '')}${n > 1 ? ` (${n})` : ''}`;
  });
}

const slug = (text) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/**
 * The leak sanitizer's policy for the README's examples (LK-06): they show the
 * API, not their clean-up, so the temp dirs they make with mkdtemp are left in
 * the test's TMPDIR, which goes with it; anything else they leave fails them.
 */
const LEAKS = `// README examples leave their mkdtemp dirs in the test's TMPDIR, which the leak sanitizer removes.
const readmeLeaks = {
  meta: { shimkit: { leaks: { allow: [{ file: '', count: 20, reason: 'the mkdtemp dirs of an example' }] } } },
};
`;

const HEADER = (what) =>
  `// Generated by scripts/readme-snippets.mjs from ${what} of README.md: each block as the\n// README prints it. Do not edit; edit README.md, then run \`npm run readme\`.\n`;

/** The generated test files: name → content. */
export function generate(all = readmeBlocks()) {
  const files = new Map();
  let setup;
  const blocks = all.filter((block) => ['setup', 'body', 'file'].includes(kindOf(block)));
  const names = titles(blocks);
  for (const [i, block] of blocks.entries()) {
    const kind = kindOf(block);
    if (kind === 'setup') {
      const { imports, rest } = splitImports(block.code);
      setup = {
        name: `${slug(block.section)}.test.ts`,
        head: `${HEADER(`the "${block.section}" examples`)}${imports.join('\n')}\nimport { test as example } from 'vitest';\n\n${LEAKS}${rest}`,
        bodies: [],
      };
      files.set(setup.name, setup);
    } else if (kind === 'body') {
      if (!setup) {
        throw new Error(`README.md:${block.line}: an example before any set-up block ("${SETUP}")`);
      }
      setup.bodies.push(
        `\nexample(${JSON.stringify(names[i])}, readmeLeaks, async () => {\n${block.code}});\n`,
      );
    } else if (kind === 'file') {
      const { imports, rest } = splitImports(block.code);
      const name = `${slug(block.heading)}.test.ts`;
      files.set(name, {
        head: `${HEADER(`the "${block.heading}" example`)}${imports.join('\n')}\nimport { describe as example } from 'vitest';\n\n${LEAKS}example(${JSON.stringify(names[i])}, readmeLeaks, () => {\n${rest}});\n`,
        bodies: [],
      });
    }
  }
  return new Map([...files].map(([name, f]) => [name, f.head + f.bodies.join('')]));
}

function main(args) {
  const files = generate();
  if (args[0] === '--check') {
    const stale = [];
    const existing = readdirSync(OUT).filter((f) => f.endsWith('.test.ts'));
    for (const [name, content] of files) {
      let now;
      try {
        now = readFileSync(join(OUT, name), 'utf8');
      } catch {
        now = undefined;
      }
      if (now !== content) stale.push(name);
    }
    for (const name of existing)
      if (!files.has(name)) stale.push(`${name} (no longer in README.md)`);
    if (stale.length > 0) {
      console.error(
        `test/readme/ is not what README.md gives: ${stale.join(', ')}. Run \`npm run readme\` and commit the result.`,
      );
      return 1;
    }
    return 0;
  }
  mkdirSync(OUT, { recursive: true });
  for (const name of readdirSync(OUT)) {
    if (name.endsWith('.test.ts') && !files.has(name)) rmSync(join(OUT, name));
  }
  for (const [name, content] of files) writeFileSync(join(OUT, name), content);
  console.log(`wrote ${files.size} files in test/readme/ from README.md`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
