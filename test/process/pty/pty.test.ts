import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  createSandbox,
  NotATerminalError,
  run,
  spawnProcess,
  WaitTimeoutError,
} from '../../../src/index.js';
import { isAlive, python3, testDir } from '../../helpers/index.js';
import { spawned } from '../../helpers/pty.js';

const KEYS = fileURLToPath(new URL('../../fixtures/pty-keys.py', import.meta.url));
const QUERY = fileURLToPath(new URL('../../fixtures/pty-query.py', import.meta.url));

function sandbox() {
  const sb = createSandbox();
  onTestFinished(() => sb.dispose());
  return sb;
}

describe('SP-13 the program sees a terminal', () => {
  it('SP-13 isatty on 0, 1 and 2, stty size is the size asked for, /dev/tty reads what is typed', async () => {
    const sb = sandbox();
    const p = spawned(
      'sh',
      [
        '-c',
        'for fd in 0 1 2; do test -t $fd && printf "tty%s " $fd; done; echo; stty size; echo "TERM=$TERM"; printf "name? " >/dev/tty; read -r name </dev/tty; echo "hi $name"',
      ],
      { sandbox: sb, pty: { cols: 100, rows: 30 } },
    );
    await p.waitForScreen('name? ');
    p.type('ada\r');
    const exit = await p.wait({ timeoutMs: 10_000 });
    expect(exit).toMatchObject({ timedOut: false, exitCode: 0 });
    expect(p.screen().lines.slice(0, 5)).toEqual([
      'tty0 tty1 tty2 ',
      '30 100',
      'TERM=xterm-256color',
      'name? ada',
      'hi ada',
    ]);
    expect(p.screen()).toMatchObject({ cols: 100, rows: 30, cursor: { row: 5, col: 0 } });
  });

  it('SP-13 resize() sends SIGWINCH and the program reads the new size; the screen model takes it too', async () => {
    const p = spawned(
      python3(),
      [
        '-c',
        'import os, signal, sys\nsignal.signal(signal.SIGWINCH, lambda *a: print("winch %d %d" % os.get_terminal_size(), flush=True))\nprint("ready", flush=True)\nsys.stdin.readline()',
      ],
      { pty: { cols: 40, rows: 10 } },
    );
    await p.waitForScreen('ready');
    p.resize(120, 40);
    await p.waitForScreen('winch 120 40');
    expect(p.screen()).toMatchObject({ cols: 120, rows: 40 });
    expect(p.screen().lines).toHaveLength(40);
    p.type('\r');
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
    expect(() => p.resize(80, 24)).toThrow(/exited with code 0 before resize\(\) was called/);
  });

  it('SP-13 the emulator answers cursor-position and device-attribute queries, so a program that asks does not hang', async () => {
    const p = spawned(python3(), [QUERY], { pty: { cols: 80, rows: 24 } });
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
    const lines = p.screen().lines;
    expect(lines).toContain('position \\x1b[1;4R'); // row 1, col 4: after "abc"
    expect(lines.find((l) => l.startsWith('attributes'))).toMatch(/^attributes \\x1b\[\?[\d;]+c$/);
  });

  it('SP-13 a python getpass prompt reads from the terminal without echo', async () => {
    const p = spawned(
      python3(),
      ['-c', 'import getpass; s = getpass.getpass("Password: "); print("length", len(s))'],
      { pty: true },
    );
    await p.waitForScreen(/^Password: $/m);
    p.type('hunter2\r');
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
    expect(p.screen().lines.slice(0, 2)).toEqual(['Password: ', 'length 7']);
    expect(p.output()).not.toContain('hunter2');
  });
});

describe('SP-13 the pipe helpers on a terminal', () => {
  it('SP-13 respond() answers a prompt the program writes to /dev/tty, through the terminal', async () => {
    const p = spawned(
      'sh',
      ['-c', 'printf "Continue? [y/N] " >/dev/tty; read -r a </dev/tty; echo "answer=$a"'],
      { pty: true },
    );
    const answered = p.respond(/Continue\? \[y\/N\] $/, 'y\r');
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
    expect(answered.count).toBe(1);
    expect(p.screen().lines.slice(0, 2)).toEqual(['Continue? [y/N] y', 'answer=y']);
    expect(p.stderr.totalBytes).toBe(0); // the program's stderr is the terminal too
  });
});

describe('SP-13 keys', () => {
  it('SP-13 press() sends keys by name, arrows in the mode the program asked for; type() sends raw bytes', async () => {
    for (const mode of ['normal', 'app'] as const) {
      const p = spawned(python3(), [KEYS, mode], { pty: true });
      await p.waitForScreen('ready');
      // Each read is printed on the row the cursor was on.
      const got = async (send: () => void, text: string) => {
        const row = p.screen().cursor.row;
        send();
        await vi.waitFor(() => expect(p.screen().lines[row]).toBe(text), { timeout: 10_000 });
      };
      const csi = mode === 'app' ? '\\x1bO' : '\\x1b[';
      await got(() => p.press('Down'), `${csi}B`);
      await got(() => p.press('Up'), `${csi}A`);
      await got(() => p.press('Enter'), '\\r');
      await got(() => p.press('Tab'), '\\t');
      await got(() => p.press('Escape'), '\\x1b');
      await got(() => p.press('Ctrl+A'), '\\x01');
      await got(() => p.press('PageDown'), '\\x1b[6~');
      await got(() => p.press('f5'), '\\x1b[15~');
      await got(() => p.press('Alt+x'), '\\x1bx');
      await got(() => p.type(new Uint8Array([0xe2, 0x82, 0xac])), '\\xe2\\x82\\xac');
      p.press('q');
      expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
    }
  });

  it('SP-13 Ctrl+C reaches the foreground process group as SIGINT, as in a terminal', async () => {
    const handled = spawned(
      'sh',
      ['-c', 'trap "echo got INT; exit 3" INT; echo ready; sleep 30 & wait'],
      { pty: true, drainMs: 100 }, // the background sleep ignores SIGINT and holds the terminal
    );
    await handled.waitForScreen('ready');
    handled.press('Ctrl+C');
    expect(await handled.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 3 });
    // The terminal echoes ^C, as it does for a user.
    expect(handled.screen().lines.slice(0, 2)).toEqual(['ready', '^Cgot INT']);

    // Without a handler the program (sh, or the sleep it became) is ended by the signal.
    const plain = spawned('sh', ['-c', 'echo ready; exec sleep 30'], { pty: true });
    await plain.waitForScreen('ready');
    plain.press('Ctrl+C');
    expect(await plain.wait({ timeoutMs: 10_000 })).toMatchObject({
      exitCode: null,
      signal: 'SIGINT',
    });
  });

  it('SP-13 unknown keys and wrong types are refused before anything is sent', () => {
    const p = spawned('cat', [], { pty: true });
    expect(() => p.press('Dwon')).toThrow(/does not know the key "Dwon". Did you mean "down"\?/);
    expect(() => p.press()).toThrow(/was given no key/);
    expect(() => p.press(1 as unknown as string)).toThrow(/key name such as "Enter"/);
    expect(() => p.type({} as unknown as string)).toThrow(/to be a string or bytes/);
  });
});

describe('SP-13 output, exit and the process tree', () => {
  it('SP-13 a 20 KB burst then exit is read to the last byte, run after run', async () => {
    const burst = 'head -c 20000 /dev/zero | tr "\\0" x; printf END';
    for (let run = 0; run < 100; run++) {
      const p = spawnProcess('sh', ['-c', burst], { pty: { cols: 80, rows: 24 } });
      const exit = await p.wait({ timeoutMs: 20_000 });
      expect(exit).toMatchObject({ timedOut: false, exitCode: 0 });
      const out = p.stdout.tail();
      expect({
        run,
        bytes: p.stdout.totalBytes,
        end: out.endsWith(`${'x'.repeat(100)}END`),
      }).toEqual({
        run,
        bytes: 20_003,
        end: true,
      });
      await p.close();
    }
  });

  it("SP-13 waitForOutput() reads the byte stream; exit codes and signals are the program's own", async () => {
    const p = spawned('sh', ['-c', 'printf "\\033[1mbold\\033[0m\\n"; exit 7'], { pty: true });
    await p.waitForOutput('\x1b[1mbold\x1b[0m\r\n'); // bytes as written, with the terminal's CRLF
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 7, signal: null });
    expect(p.screen().lines[0]).toBe('bold');

    const killed = spawned('sh', ['-c', 'kill -TERM $$'], { pty: true });
    expect(await killed.wait({ timeoutMs: 10_000 })).toMatchObject({
      exitCode: null,
      signal: 'SIGTERM',
    });
  });

  it("SP-13 close() ends the program and what it started; end() types Ctrl+D, the terminal's end of file", async () => {
    const dir = testDir();
    const pids = join(dir, 'pids');
    const p = spawned('sh', ['-c', `sleep 30 & echo $$ $! > ${pids}; echo started; cat`], {
      pty: true,
    });
    await p.waitForScreen('started');
    const tree = readFileSync(pids, 'utf8').trim().split(' ').map(Number);
    await p.close();
    for (const pid of tree) await vi.waitFor(() => expect(isAlive(pid)).toBe(false));

    const cat = spawned('cat', [], { pty: true });
    cat.type('line\r');
    await cat.waitForScreen(/line\nline/);
    cat.end();
    expect(await cat.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
  });

  it('SP-13 a background process that keeps the terminal open does not hold wait() past drainMs', async () => {
    const dir = testDir();
    const pidFile = join(dir, 'pid');
    const p = spawned('sh', ['-c', `sleep 30 & echo $! > ${pidFile}; echo bye`], {
      pty: true,
      drainMs: 200,
    });
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ timedOut: false, exitCode: 0 });
    expect(p.screen().lines[0]).toBe('bye');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await p.close();
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false));
  });
});

describe('SP-13 run() on a terminal', () => {
  it("SP-13 run() takes pty: the output is the terminal's, input is typed then Ctrl+D, the last screen comes back", async () => {
    const sb = sandbox();
    const r = await run(
      'sh',
      [
        '-c',
        'test -t 0 && test -t 1 && echo tty; stty size; read -r name; echo "hi $name" >&2; cat; echo done',
      ],
      { sandbox: sb, pty: { cols: 30, rows: 10 }, input: 'Ada\nmore\n', timeoutMs: 10_000 },
    );
    expect(r).toMatchObject({ exitCode: 0, timedOut: false, stderr: '' });
    // The terminal echoes what is typed when it is typed (type-ahead): the
    // echo of "Ada" and "more" comes anywhere before the program reads them,
    // so before "hi Ada" — and before, between or after its first lines.
    const echoless = r.stdout.replace('Ada\r\n', '').replace('more\r\n', '');
    expect(echoless).toBe('tty\r\n10 30\r\nhi Ada\r\nmore\r\ndone\r\n');
    expect(r.stdout.match(/Ada\r\n/g)).toHaveLength(2); // echoed, then "hi Ada"
    expect(r.screen?.lines.join('\n')).toMatch(/^hi Ada\nmore\ndone\n\n$/m);
    expect(r.screen?.cursor).toEqual({ row: 7, col: 0 }); // 7 lines: 2 echoed, 5 written
  });

  it('SP-13 run() with pty and no input types nothing: a reader waits until the deadline', async () => {
    const r = await run('sh', ['-c', 'printf "name? "; read -r name; echo "got $name"'], {
      pty: true,
      timeoutMs: 300,
    });
    expect(r).toMatchObject({ timedOut: true, stdout: 'name? ' });
    expect(r.screen?.lines[0]).toBe('name? ');
  });
});

describe('SP-13 diagnostics', () => {
  it('SP-13 waitForScreen() times out with the last screen in the message', async () => {
    const p = spawned('sh', ['-c', 'printf "one\\ntwo\\n"; exec cat'], {
      pty: { cols: 20, rows: 5 },
    });
    await p.waitForScreen('two');
    const error = await p.waitForScreen('three', { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as Error).message).toBe(
      `TestProcess(sh -c "printf \\"one\\\\ntwo\\\\n\\"; exec cat").waitForScreen(): the screen did not show three within 300 ms. Last screen (20×5, cursor at row 2, col 0):\n│one\n│two\n(3 empty rows below)\n`,
    );
  });

  it('SP-13 waitForScreen() rejects when the program exits first, with its screen', async () => {
    const p = spawned('sh', ['-c', 'echo partial; exit 2'], { pty: { cols: 20, rows: 3 } });
    await expect(p.waitForScreen('never')).rejects.toThrow(
      /exited with code 2 before its screen showed never\. Last screen \(20×3, cursor at row 1, col 0\):\n│partial/,
    );
  });

  it('SP-13 terminal methods on a process without pty say how to get one', () => {
    const p = spawned('cat', []);
    expect(() => p.screen()).toThrow(NotATerminalError);
    expect(() => p.press('Enter')).toThrow(
      /\.press\(\) needs a terminal, and this process runs on pipes\. Spawn it with `pty: \{ cols, rows \}`/,
    );
  });

  it('SP-13 bad pty options are refused when given', () => {
    expect(() => spawnProcess('cat', [], { pty: { cols: 0 } })).toThrow(
      'Expected the `pty.cols` option of spawnProcess("cat") to be an integer from 1 to 1000, got 0 (number).',
    );
    expect(() => spawnProcess('cat', [], { pty: { rows: 24, colls: 80 } as never })).toThrow(
      /Unknown option `colls`.*Did you mean `cols`\?/,
    );
    expect(() => spawnProcess('cat', [], { pty: 'yes' as never })).toThrow(
      /`pty` option .* to be true or \{ cols, rows \}/,
    );
    expect(() => spawnProcess('cat', [], { pty: true, stdin: 'ignore' })).toThrow(
      /`stdin` must be 'pipe' \(the default\) with `pty`/,
    );
  });
});

describe("SP-13 a mock binary on the PTY's PATH", () => {
  it("SP-13 a TUI that shells out to git gets the mock's answer on its screen", async () => {
    const { createMockBinary } = await import('../../../src/index.js');
    const sb = sandbox();
    const git = createMockBinary('git');
    onTestFinished(() => git.dispose());
    git.enqueue({ stdout: 'feature/pty\n' });
    sb.use(git);
    const dir = testDir();
    const tui = join(dir, 'tui.sh');
    writeFileSync(
      tui,
      'printf "\\033[2J\\033[H"; printf "branch: %s\\n" "$(git rev-parse --abbrev-ref HEAD)"; test -t 1 && echo "on a tty"; read -r _\n',
    );
    const p = spawned('sh', [tui], { sandbox: sb, pty: { cols: 60, rows: 10 } });
    await p.waitForScreen('on a tty');
    expect(p.screen().lines.slice(0, 2)).toEqual(['branch: feature/pty', 'on a tty']);
    p.press('Enter');
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
    expect(git.calls()).toHaveLength(1);
    expect(git.calls()[0]?.argv).toEqual(['rev-parse', '--abbrev-ref', 'HEAD']);
  });
});
