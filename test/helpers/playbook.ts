// PB-06: many SDK agents at once on one server, each routed by the
// `x-agent` header its AGENT_ID sets to a playbook of its own. The fast
// suite runs 6 (two per format), the stress suite 20.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { calls, says, when } from '../../src/index.js';
import { testDir } from './index.js';
import { server } from './server.js';

const AGENT = join(import.meta.dirname, '../fixtures/tool-agent.mjs');
const run = promisify(execFile);
const FORMATS = ['chat', 'responses', 'messages'] as const;

/** `count` real agents at once, each with its own playbook: each gets its own conversation, every action exactly once. */
export async function expectAgentsEachGetTheirOwn(count: number): Promise<void> {
  const api = await server({ strict: true });
  const agents = Array.from({ length: count }, (_, i) => ({
    id: `agent-${i + 1}`,
    format: FORMATS[i % FORMATS.length] as (typeof FORMATS)[number],
    stream: i % 2 === 0,
  }));
  const plays = agents.map(({ id }) =>
    api.playbook(
      [
        when(`task of ${id}`, [
          calls('bash', { command: `echo ${id}` }),
          calls('bash', { command: `echo again ${id}` }),
          says(`done ${id}`),
        ]),
      ],
      { name: id, match: { headers: { 'x-agent': id } } },
    ),
  );
  const outs = await Promise.all(
    agents.map(async ({ id, format, stream }) => {
      const args = [AGENT, '--api', format, ...(stream ? ['--stream'] : []), `task of ${id}`];
      const { stdout } = await run(process.execPath, args, {
        env: { ...api.env(), AGENT_ID: id },
        cwd: testDir(),
      });
      return JSON.parse(stdout) as { turns: Array<{ text: string }>; error: unknown };
    }),
  );
  agents.forEach(({ id }, i) => {
    expect(outs[i]?.error, id).toBeNull();
    expect(outs[i]?.turns[0]?.text, id).toBe(`done ${id}`);
    const play = plays[i];
    expect(
      play?.toolResults().map((r) => r.text),
      id,
    ).toEqual([`${id}\n`, `again ${id}\n`]);
    expect(
      play?.requests().map((r) => r.headers['x-agent']),
      id,
    ).toEqual([id, id, id]);
    play?.assertDone();
  });
  const log = api.requests();
  expect(log).toHaveLength(3 * count);
  expect(new Set(log.map((r) => r.seq)).size).toBe(3 * count);
  expect(log.every((r) => r.response.status === 200 && r.claimedBy === r.headers['x-agent'])).toBe(
    true,
  );
  api.assertDone();
}
