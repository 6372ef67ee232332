// PB-06 at full size: 20 real SDK agents at once on one server, each with
// its own playbook (test/server/playbook-parallel.test.ts runs 6).
import { describe, it } from 'vitest';
import { expectAgentsEachGetTheirOwn } from '../helpers/playbook.js';

describe('several playbooks, several agents (PB-06)', () => {
  it('PB-06 20 agents at once, each routed by its match to its own playbook, each get their own conversation, every action exactly once', async () => {
    await expectAgentsEachGetTheirOwn(20);
  });
});
