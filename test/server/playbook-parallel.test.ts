// Several playbooks on one server (PB-06): real SDK agents, each in its own
// process (test/fixtures/tool-agent.mjs), all at once, each routed to its
// own playbook by the `x-agent` header its AGENT_ID sets.
import { describe, expect, it } from 'vitest';
import { says, when } from '../../src/index.js';
import { expectAgentsEachGetTheirOwn } from '../helpers/playbook.js';
import { server } from '../helpers/server.js';

describe('several playbooks, several agents (PB-06)', () => {
  it('PB-06 6 agents at once (two per format), each routed by its match to its own playbook, each get their own conversation, every action exactly once (20 in the stress suite)', async () => {
    await expectAgentsEachGetTheirOwn(6);
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
