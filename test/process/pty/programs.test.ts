// SP-13 against real terminal programs: what shimkit's screen shows is what
// tmux shows for the same program at the same size (tmux renders with its own
// emulator, so this checks the screen model, not only the bytes). CI installs
// tmux, less, vim and openssh-client; without one, its test is skipped with a
// message.
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createSandbox, type TestProcess, type TestSandbox } from '../../../src/index.js';
import { commandPath } from '../../helpers/fast-path.js';
import { testDir } from '../../helpers/index.js';
import { spawned } from '../../helpers/pty.js';

const tools = Object.fromEntries(
  ['tmux', 'less', 'vim', 'ssh-keygen'].map((name) => [name, commandPath(name)]),
);
for (const [name, path] of Object.entries(tools)) {
  if (!path) {
    console.warn(
      `SKIPPED the SP-13 ${name} test: ${name} is not installed (CI installs it; apt-get install ${name === 'ssh-keygen' ? 'openssh-client' : name}).`,
    );
  }
}

function sandbox(): TestSandbox {
  const sb = createSandbox();
  onTestFinished(() => sb.dispose());
  return sb;
}

/** A tmux server of its own (its socket in a fresh dir) running `command` in a COLS×ROWS window. */
function tmux(sb: TestSandbox, cols: number, rows: number, command: string) {
  const socket = join(testDir(), 'tmux.sock');
  const env = sb.env();
  const tmuxRun = (...args: string[]) =>
    spawnSync(tools.tmux as string, ['-S', socket, '-f', '/dev/null', ...args], {
      cwd: sb.workspace,
      env,
      encoding: 'utf8',
    });
  const started = tmuxRun(
    'new-session',
    '-d',
    '-x',
    String(cols),
    '-y',
    String(rows),
    '-s',
    'pty',
    command,
  );
  expect(started.stderr).toBe('');
  onTestFinished(() => {
    tmuxRun('kill-server');
  });
  return {
    screen: () => normalize(tmuxRun('capture-pane', '-p', '-t', 'pty').stdout.split('\n')),
    keys: (...keys: string[]) => tmuxRun('send-keys', '-t', 'pty', ...keys),
    cursor: () => {
      const [col, row] = tmuxRun('display-message', '-p', '-t', 'pty', '#{cursor_x} #{cursor_y}')
        .stdout.trim()
        .split(' ')
        .map(Number);
      return { row, col };
    },
  };
}

/** Rows without trailing blanks, and without the blank rows at the bottom. */
function normalize(lines: string[]): string[] {
  const out = lines.map((line) => line.trimEnd());
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out;
}

/** Wait until tmux and shimkit both show `marker`, then until their screens agree. */
async function sameScreen(
  p: TestProcess,
  t: ReturnType<typeof tmux>,
  marker: RegExp,
): Promise<string[]> {
  await p.waitForScreen(marker, { timeoutMs: 10_000 });
  await vi.waitFor(() => expect(t.screen().join('\n')).toMatch(marker), { timeout: 10_000 });
  await vi.waitFor(() => expect(normalize(p.screen().lines)).toEqual(t.screen()), {
    timeout: 10_000,
  });
  return t.screen();
}

function numberedFile(sb: TestSandbox, name: string, count: number): void {
  const lines = Array.from({ length: count }, (_, i) => `line ${i + 1}: ${'·'.repeat(i % 7)}end`);
  writeFileSync(join(sb.workspace, name), `${lines.join('\n')}\n`);
}

describe('SP-13 real terminal programs', () => {
  it.skipIf(!tools.tmux || !tools.less)(
    'SP-13 less draws the same screen as under tmux at the same size, before and after paging',
    async () => {
      const sb = sandbox();
      numberedFile(sb, 'notes.txt', 100);
      const t = tmux(sb, 60, 12, 'less notes.txt');
      const p = spawned('less', ['notes.txt'], { sandbox: sb, pty: { cols: 60, rows: 12 } });

      const first = await sameScreen(p, t, /^notes\.txt/m);
      expect(first[0]).toBe('line 1: end');
      expect(first).toHaveLength(12);

      p.press('Space');
      t.keys('Space');
      const paged = await sameScreen(p, t, /^line 22: /m);
      expect(paged[0]).toBe('line 12: ····end');

      p.press('G');
      t.keys('G');
      await sameScreen(p, t, /\(END\)/);
      p.press('q');
      expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
    },
  );

  it.skipIf(!tools.tmux || !tools.vim)(
    'SP-13 vim draws the same screen as under tmux, and edits through typed keys',
    async () => {
      const sb = sandbox();
      numberedFile(sb, 'draft.txt', 5);
      const vimArgs = ['-u', 'NONE', '-i', 'NONE', '-N', '-n', 'draft.txt'];
      const t = tmux(sb, 70, 15, `vim ${vimArgs.join(' ')}`);
      const p = spawned('vim', vimArgs, { sandbox: sb, pty: { cols: 70, rows: 15 } });

      const opened = await sameScreen(p, t, /"draft\.txt" 5L/);
      expect(opened.slice(0, 6)).toEqual([
        'line 1: end',
        'line 2: ·end',
        'line 3: ··end',
        'line 4: ···end',
        'line 5: ····end',
        '~',
      ]);

      p.press('j', 'j');
      p.type('Otyped here');
      p.press('Escape');
      t.keys('j', 'j', 'O', 'typed here', 'Escape');
      const edited = await sameScreen(p, t, /^typed here$/m);
      expect(edited[2]).toBe('typed here');

      p.type(':wq\r');
      expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
    },
  );

  it.skipIf(!tools.tmux)(
    'SP-13 emoji, CJK and combining marks take the cells and move the cursor as under tmux',
    async () => {
      const sb = sandbox();
      // Each line ends with a cursor move to column 6 (CHA) and an X written
      // there: a width off by one anywhere before it shows in the text too.
      const script = [
        "printf 'A\\360\\237\\230\\200B|\\033[6GX\\n'", // A😀B
        "printf '\\346\\274\\242\\345\\255\\227e\\314\\201|\\033[6GX\\n'", // 漢字é (e + U+0301)
        "printf '\\342\\234\\205\\342\\214\\232ok\\033[6GX\\n'", // ✅⌚
        "printf 'end\\360\\237\\221\\215'", // end👍, the cursor after it
        'exec cat',
      ].join('; ');
      const t = tmux(sb, 30, 6, `sh -c "${script}"`);
      const p = spawned('sh', ['-c', script], { sandbox: sb, pty: { cols: 30, rows: 6 } });

      const screen = await sameScreen(p, t, /^end👍/m);
      expect(screen.slice(0, 3)).toEqual(['A😀B|X', '漢字e\u0301X', '✅⌚oX']);
      await vi.waitFor(() => expect(t.cursor()).toEqual({ row: 3, col: 5 }), { timeout: 10_000 });
      expect(p.screen().cursor).toEqual(t.cursor());
    },
  );

  it.skipIf(!tools['ssh-keygen'])(
    'SP-13 ssh-keygen -p prompts for the old and new passphrase on the terminal',
    async () => {
      const sb = sandbox();
      const key = join(sb.workspace, 'id_test');
      const made = spawnSync(
        tools['ssh-keygen'] as string,
        ['-q', '-t', 'ed25519', '-N', 'old secret', '-C', 'test', '-f', key],
        { env: sb.env(), encoding: 'utf8' },
      );
      expect(made.status).toBe(0);

      const p = spawned('ssh-keygen', ['-p', '-f', key], { sandbox: sb, pty: true });
      await p.waitForScreen(/Enter old passphrase: $/m);
      p.type('old secret\r');
      await p.waitForScreen(/Enter new passphrase \(empty for no passphrase\): $/m);
      p.type('new secret\r');
      await p.waitForScreen(/Enter same passphrase again: $/m);
      p.type('new secret\r');
      expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
      expect(p.screen().lines.join('\n')).toContain('Your identification has been saved');
      expect(p.output()).not.toContain('secret'); // passphrases are not echoed

      const check = spawnSync(
        tools['ssh-keygen'] as string,
        ['-y', '-P', 'new secret', '-f', key],
        {
          env: sb.env(),
          encoding: 'utf8',
        },
      );
      expect(check.status).toBe(0);
      expect(existsSync(`${key}.pub`)).toBe(true);
    },
  );
});
