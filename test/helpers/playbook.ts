// The tool-calling agent of the playbook tests (test/fixtures/tool-agent.mjs)
// run as a test runs it, and PB-06's many agents at once on one server, each
// routed by the `x-agent` header its AGENT_ID sets to a playbook of its own
// (the fast suite runs 6, two per format; the stress suite 20).
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

/** What tool-agent.mjs prints: each turn's text and tool calls, and the error that ended it. */
export interface AgentOut {
  turns: Array<{
    prompt: string;
    text: string | null;
    toolCalls: Array<{
      name: string;
      id: string;
      params: unknown;
      result: string;
      isError: boolean;
    }>;
  }>;
  error: { status: number | null; message: string } | null;
}

/** Run tool-agent.mjs with `args` (its flags and prompts) to its end; its JSON line, also when it failed. */
export async function runAgent(
  args: readonly string[],
  options: { env: Record<string, string>; cwd?: string },
): Promise<AgentOut> {
  try {
    const { stdout } = await run(process.execPath, [AGENT, ...args], {
      env: options.env,
      cwd: options.cwd ?? testDir(),
    });
    return JSON.parse(stdout) as AgentOut;
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout ?? '';
    if (stdout === '') throw error;
    return JSON.parse(stdout) as AgentOut;
  }
}

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
    agents.map(({ id, format, stream }) =>
      runAgent(['--api', format, ...(stream ? ['--stream'] : []), `task of ${id}`], {
        env: { ...api.env(), AGENT_ID: id },
      }),
    ),
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
