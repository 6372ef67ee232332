// Several playbooks on one server (PB-06): 20 agents, each a real SDK agent
// in its own process (test/fixtures/tool-agent.mjs), all at once, each
// routed to its own playbook by the `x-agent` header its AGENT_ID sets.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { calls, says, when } from '../../src/index.js';
import { testDir } from '../helpers/index.js';
import { server } from '../helpers/server.js';

const AGENT = join(import.meta.dirname, '../fixtures/tool-agent.mjs');
const run = promisify(execFile);
const FORMATS = ['chat', 'responses', 'messages'] as const;

describe('several playbooks, several agents (PB-06)', () => {
  it('PB-06 20 agents at once, each routed by its match to its own playbook, each get their own conversation, every action exactly once', async () => {
    const api = await server({ strict: true });
    const agents = Array.from({ length: 20 }, (_, i) => ({
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
    expect(log).toHaveLength(60);
    expect(new Set(log.map((r) => r.seq)).size).toBe(60);
    expect(
      log.every((r) => r.response.status === 200 && r.claimedBy === r.headers['x-agent']),
    ).toBe(true);
    api.assertDone();
  });

  it('PB-06 playbooks with the same match are played one after another, in the order they were made', async () => {
    const api = await server({ strict: true });
    const first = api.playbook([when('hi', [says('first')])]);
    const second = api.playbook([when('hi', [says('second')])], { name: 'second' });
    const ask = async () => {
      const r = await fetch(`${api.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = (await r.json()) as {
        id: string;
        choices: Array<{ message: { content: string } }>;
      };
      return [body.id, body.choices[0]?.message.content];
    };
    expect(await ask()).toEqual(['chatcmpl-shimkit-p1_s1', 'first']);
    expect(await ask()).toEqual(['chatcmpl-shimkit-p2_s1', 'second']);
    expect(api.requests().map((r) => r.claimedBy)).toEqual(['playbook#1', 'second']);
    first.assertDone();
    second.assertDone();
  });
});
