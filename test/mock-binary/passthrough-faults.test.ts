// PX-14: a mock with `passthrough: { framing, faults }`: a program that
// spawns a stdio server by name gets the real one, faulted, without a change
// on either side.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { createMockBinary, InvalidResponseError, MockExitCode } from '../../src/index.js';
import { isAlive, runCommand, testDir } from '../helpers/index.js';
import { treeTool } from '../helpers/tree.js';

const JSONRPC = fileURLToPath(new URL('../fixtures/jsonrpc_stdio.py', import.meta.url));
const request = (id: number, method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

/** `rpc-server` in a dir of its own: the JSON-RPC-over-lines server, as an installed command would be. */
function realServer(): string {
  const dir = testDir();
  const file = join(dir, 'rpc-server');
  writeFileSync(file, `#!/bin/sh\nexec python3 ${JSON.stringify(JSONRPC)} "$@"\n`);
  chmodSync(file, 0o755);
  return dir;
}

describe('PX-14 a mock binary that passes through with faults', () => {
  it('PX-14 MB-15 a program that spawns rpc-server talks to the real one with reply 1 dropped; the call records what the proxy did', async () => {
    const real = realServer();
    await using server = createMockBinary('rpc-server', {
      responses: [
        {
          passthrough: {
            framing: 'lines',
            faults: [{ action: 'drop', direction: 's2c', frame: 1 }],
          },
        },
      ],
    });
    const env = server.env({ ...process.env, PATH: `${real}:${process.env.PATH}` });
    // The program under test: a pipeline that starts `rpc-server` by name.
    const requests = [request(1, 'add', [1, 2]), request(2, 'echo', ['x']), request(3, 'exit')];
    const script = `printf '%s\\n' ${requests.map((r) => `'${r}'`).join(' ')} | rpc-server`;
    const r = await runCommand('sh', ['-c', script], { env });
    expect(r.code).toBe(0);
    expect(
      r.stdout
        .toString()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { jsonrpc: '2.0', id: 2, result: ['x'] },
      { jsonrpc: '2.0', id: 3, result: 'bye' },
    ]);
    const call = server.lastCall();
    expect(call).toMatchObject({ status: 'exited', exitCode: 0, responseSource: 'queue' });
    expect(call?.proxy).toMatchObject({
      c2s: { frames: 3 },
      s2c: { frames: 2 },
      faults: { drop: 1 },
    });
    server.assertDone();
  });

  it('PX-14 MB-06 stdin: capture on a faulted passthrough records what the caller wrote, before the faults', async () => {
    const real = realServer();
    await using server = createMockBinary('rpc-server', {
      stdin: 'capture',
      responses: [
        {
          passthrough: {
            framing: 'lines',
            faults: [{ action: 'drop', direction: 'c2s', frame: 2 }],
          },
        },
        {
          stdin: 'capture',
          passthrough: { framing: 'lines' },
        },
      ],
      stdinLimitBytes: 60,
    });
    const env = server.env({ ...process.env, PATH: `${real}:${process.env.PATH}` });
    const requests = [request(1, 'echo', ['a']), request(2, 'echo', ['b']), request(3, 'exit')];
    const input = requests.map((r) => `${r}\n`).join('');
    const r = await runCommand('rpc-server', [], { env, input });
    expect(r.code).toBe(0);
    // Request 2 never reached the server; the record still has it, as written, up to the limit.
    expect(r.stdout.toString()).not.toContain('"id":2');
    expect(server.lastCall()).toMatchObject({
      stdin: input.slice(0, 60),
      stdinTruncated: true,
      proxy: { faults: { drop: 1 } },
    });
    const small = await runCommand('rpc-server', [], { env, input: `${request(9, 'exit')}\n` });
    expect(small.code).toBe(0);
    expect(server.lastCall()?.stdin).toBe(`${request(9, 'exit')}\n`);
    expect(server.lastCall()?.stdinTruncated).toBe(false);
  });

  it('PX-14 the framing and the rules are checked when the response is made, naming it', () => {
    expect(() =>
      createMockBinary('rpc-server', {
        responses: [
          { passthrough: { framing: 'lines', faults: [{ action: 'explode' }] } } as never,
        ],
      }),
    ).toThrow(
      new InvalidResponseError(
        'Expected the `action` option of `faults[0]` to be "drop", "duplicate", "delay", "corrupt", "truncate", "reorder", "sever-mid-frame", "sever-after", "reset" or "slice", got "explode" (string).',
      ),
    );
    expect(() =>
      createMockBinary('rpc-server', {
        responses: [{ passthrough: { framing: { decode() {}, encode() {} } } } as never],
      }),
    ).toThrow(
      'Expected the `framing` of the `passthrough` of response [0] of the `responses` option of createMockBinary("rpc-server") to be a framing name such as "lines" (a custom Framer cannot reach the shim), got {} (object).',
    );
    expect(() =>
      createMockBinary('rpc-server', {
        responses: [{ passthrough: { framing: 'lines', stdout: 'x' } } as never],
      }),
    ).toThrow(/passthrough.*\{ framing\?, faults\?, seed\?, maxFrameBytes\? \}/);
  });

  it('PX-14 MB-11 a faulted passthrough that times out ends with its whole tree: a grandchild holding stderr is killed, so the caller reaches EOF at the deadline', async () => {
    const { dir, env: pids, tree } = treeTool('stderr');
    await using tool = createMockBinary('tool', {
      timeoutMs: 1000,
      responses: [{ passthrough: { framing: 'lines', faults: [] } }],
    });
    const env = tool.env({ ...process.env, PATH: `${dir}:/usr/bin:/bin`, ...pids });
    // The caller reads the call's stderr to EOF, which the grandchild holds.
    const r = await runCommand(
      'sh',
      ['-c', 'err=$(tool run 2>&1 >/dev/null </dev/null); echo "status $? err $err"'],
      { env, timeout: 20_000 },
    );
    expect(r.stdout.toString()).toMatch(
      new RegExp(`^status ${MockExitCode.timeout} err started\n`),
    );
    expect(tool.lastCall()).toMatchObject({ status: 'timed-out', exitCode: MockExitCode.timeout });
    expect(tree()).toHaveLength(2);
    await vi.waitFor(() => expect(tree().filter(isAlive)).toEqual([]), { timeout: 5000 });
  });
});
