import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ProcessExitedError, spawnProcess, type TestProcess } from '../../src/index.js';

const PROMPTS = fileURLToPath(new URL('../fixtures/prompts.sh', import.meta.url));
const QUESTIONS = fileURLToPath(new URL('../fixtures/questions.mjs', import.meta.url));

function spawned(...args: Parameters<typeof spawnProcess>): TestProcess {
  const p = spawnProcess(...args);
  onTestFinished(async () => {
    await p.close({ graceMs: 0 });
  });
  return p;
}

describe('scripted interaction', () => {
  it('SP-08 respond() answers each confirmation as it appears, and a password prompt on stderr', async () => {
    const p = spawned('sh', [PROMPTS]);

    const confirm = p.respond(/Continue\? \[y\/N\] $/, 'y\n');
    const password = p.respond('Password: ', 'hunter2\n', { stream: 'stderr' });
    const exit = await p.wait({ timeoutMs: 10_000 });

    expect(exit).toMatchObject({ timedOut: false, exitCode: 0 });
    expect(p.stdout.tail()).toBe(
      'Continue? [y/N] Continue? [y/N] \nfirst=y second=y password-length=7\n',
    );
    expect(p.stderr.tail()).toBe('Password: ');
    expect(confirm.count).toBe(2);
    expect(password.count).toBe(1);
  });

  it('SP-08 respond() with times and a function answer; stop() stops answering', async () => {
    const p = spawned('sh', [PROMPTS]);

    let asked = 0;
    const first = p.respond(
      /Continue\? \[(y)\/N\] $/,
      (m) => (++asked === 1 ? `${m[1]}\n` : 'n\n'),
      {
        times: 2,
      },
    );
    const never = p.respond(/Password: /, 'x\n');
    never.stop();
    p.respond(/Password: /, 'secret\n', { times: 1 });
    await p.wait({ timeoutMs: 10_000 });

    expect(p.stdout.tail()).toContain('first=y second=n password-length=6');
    expect(first.count).toBe(2);
    expect(never.count).toBe(0);
  });

  it('SP-08 send() feeds inputs one at a time after the output goes idle, then ends stdin', async () => {
    const p = spawned(process.execPath, [QUESTIONS, '3']);
    // Idleness counts from the last output, so wait out a silent start-up first.
    await p.waitForOutput('Question 1?');

    // (Long enough that a stall of the child or of this process cannot pass for idleness.)
    await p.send(['one\n', 'two\n', 'three\n'], { idleMs: 1000 });
    const exit = await p.wait({ timeoutMs: 10_000 });

    expect(exit).toMatchObject({ exitCode: 0 });
    // Each answer arrived on its own, after its question.
    expect(JSON.parse(p.stdout.tail().split('\n')[1] as string)).toEqual({
      chunks: ['one\n', 'two\n', 'three\n'],
    });
    expect(p.stdout.tail()).toMatch(/^Question 1\? Question 2\? Question 3\? \n/);
  });

  it('SP-08 the session ends when the inputs are done and the process exits at end of input', async () => {
    const p = spawned('sh', ['-c', 'while read -r line; do echo "got $line"; done; echo done']);

    await p.send(['a\n', 'b\n'], { idleMs: 20 });

    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
    expect(p.stdout.tail()).toBe('got a\ngot b\ndone\n');
  });

  it('SP-08 send() rejects when the process exits before every input was written', async () => {
    const p = spawned('sh', ['-c', 'read -r line; echo "only $line"']);

    const error = await p.send(['a\n', 'b\n'], { idleMs: 1000 }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ProcessExitedError);
    expect((error as Error).message).toMatch(
      /exited with code 0 before input 2 of 2 was sent by TestProcess\(.*\)\.send\(\)\. Last output:\nonly a\n$/,
    );
  });
});
