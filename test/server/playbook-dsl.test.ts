// The playbook DSL and its JSON form (PB-01, PB-04, PB-07): what is checked
// when an action is made, the refused await, the JSON form's errors. The
// serving is proven through real agents in playbook*.test.ts.
import { describe, expect, it } from 'vitest';
import {
  any,
  CallsAction,
  calls,
  InvalidOptionError,
  ParallelAction,
  parallel,
  SaysAction,
  says,
  when,
} from '../../src/index.js';
import { playbookFromJson } from '../../src/server/playbook/json.js';
import { server } from '../helpers/server.js';

describe('actions', () => {
  it('PB-01 calls(), says() and parallel() make frozen actions; .then() returns a new call', () => {
    const read = calls('read', { path: 'a.txt' });
    const seen: string[] = [];
    const then = read.then((r) => seen.push(r.text));
    expect(read).toBeInstanceOf(CallsAction);
    expect(then).not.toBe(read);
    expect(read.thens).toHaveLength(0);
    expect(then.thens).toHaveLength(1);
    expect(then.params).toEqual({ path: 'a.txt' });
    expect(Object.isFrozen(read)).toBe(true);
    expect(says('Done.')).toBeInstanceOf(SaysAction);
    expect(parallel(read, calls('read', { path: 'b' }))).toBeInstanceOf(ParallelAction);
    expect(when('List files', [read, says('ok')]).actions).toHaveLength(2);
    expect(when(/list/i, [says('ok')]).prompt).toEqual(/list/i);
    expect(when(any(), [says('ok')]).prompt).toEqual({ any: true });
  });

  it('PB-04 an action is not a promise: an await of calls() is refused with a message saying so', async () => {
    const action = calls('bash', { command: 'ls' });
    await expect(async () => await action).rejects.toThrow(
      /calls\("bash"\) is an action for when\(\)'s list, not a promise: do not await it/,
    );
    expect(() => action.then('x' as never)).toThrow(InvalidOptionError);
  });

  it('PB-01 bad input is refused where it is given, naming what was expected', () => {
    expect(() => calls('', {})).toThrow(/Expected the tool of calls\(\) to be a tool name/);
    expect(() => calls('bash', [] as never)).toThrow(
      /params of calls\("bash"\) to be a plain object/,
    );
    expect(() => calls('bash', { n: 1n } as never)).toThrow(/JSON data/);
    expect(() => calls('bash', new Date() as never)).toThrow(/plain object/);
    expect(() => says(5 as never)).toThrow(/text of says\(\) to be a string, got 5 \(number\)/);
    expect(() => parallel()).toThrow(/at least one calls/);
    expect(() => parallel(says('x') as never)).toThrow(/argument 1 of parallel\(\) to be calls/);
    expect(() => when('x', [])).toThrow(/non-empty array/);
    expect(() => when(5 as never, [says('x')])).toThrow(/prompt of when\(\) to be a string/);
    expect(() => when('x', [Promise.resolve() as never])).toThrow(
      /A promise\? An action is not awaited/,
    );
  });

  it('PB-01 playbook() checks its turns, options and name', async () => {
    const api = await server();
    expect(() => api.playbook([])).toThrow(/non-empty array of when/);
    expect(() => api.playbook([when('x', [says('y')])], { nme: 'a' } as never)).toThrow(
      /Unknown option `nme` for playbook\(\) #1/,
    );
    expect(() => api.playbook([when('x', [says('y')])], { name: 'playbook#3' })).toThrow(
      /a name of your own/,
    );
    api.expect({ path: '/v1/models' }, { json: {} }, { name: 'models' });
    expect(() => api.playbook([when('x', [says('y')])], { name: 'models' })).toThrow(
      /expectation #1 has it/,
    );
    api.playbook([when('x', [says('y')])], { name: 'agent' });
    expect(() => api.playbook([when('x', [says('y')])], { name: 'agent' })).toThrow(
      /a playbook has it/,
    );
    expect(() => api.playbook([when('x', [says('y')])], { match: { pth: '/' } as never })).toThrow(
      /Unknown key `pth` in the match of playbook\(\) #2/,
    );
    api.reset();
  });
});

describe('the JSON form (PB-07)', () => {
  it('PB-07 gives the same turns as the DSL, patterns and any() included', () => {
    const { turns, name, match } = playbookFromJson(
      {
        name: 'deploy',
        match: { headers: { 'x-agent': { regex: '^a', flags: 'i' } } },
        turns: [
          {
            when: 'List files',
            do: [
              { calls: 'bash', params: { command: 'ls' } },
              { parallel: [{ calls: 'read', params: { path: 'a' } }, { calls: 'read' }] },
              { says: 'Found 2 files.' },
            ],
          },
          { when: { regex: 'readme', flags: 'i' }, do: [{ says: 'ok' }] },
          { when: { any: true }, do: [{ says: 'bye' }] },
        ],
      },
      'test',
    );
    expect(name).toBe('deploy');
    expect(match?.headers?.['x-agent']).toEqual(/^a/i);
    expect(turns.map((t) => t.prompt)).toEqual(['List files', /readme/i, { any: true }]);
    const [bash, both, done] = turns[0]?.actions ?? [];
    expect(bash).toEqual(calls('bash', { command: 'ls' }));
    expect((both as ParallelAction).calls.map((c) => c.params)).toEqual([{ path: 'a' }, {}]);
    expect(done).toEqual(says('Found 2 files.'));
  });

  it('PB-07 a bad JSON playbook is refused with the path to what is wrong', () => {
    const bad = (value: unknown) => () => playbookFromJson(value, 'playbook.json');
    expect(bad([])).toThrow(/playbook.json: expected the playbook to be an object, got \[\]/);
    expect(bad({ turns: [] })).toThrow(/expected turns to be a non-empty array/);
    expect(bad({ turn: [] })).toThrow(/unknown key "turn" in the playbook. Did you mean "turns"\?/);
    expect(bad({ turns: [{ when: 'x', do: [{ calls: 'a', says: 'b' }] }] })).toThrow(
      /turns\[0\]\.do\[0\] must have exactly one of "calls" \(with "params"\), "says" or "parallel", got calls and says/,
    );
    expect(bad({ turns: [{ when: 'x', do: [{ calls: 'a', params: 5 }] }] })).toThrow(
      /turns\[0\]\.do\[0\]: Expected the params of calls\("a"\) to be a plain object/,
    );
    expect(bad({ turns: [{ when: 5, do: [{ says: 'b' }] }] })).toThrow(
      /expected turns\[0\]\.when to be a string, \{ "regex"/,
    );
    expect(bad({ turns: [{ when: { regex: '(' }, do: [{ says: 'b' }] }] })).toThrow(
      /to be a valid pattern/,
    );
    expect(bad({ turns: [{ when: 'x', do: [{ says: 'b', params: {} }] }] })).toThrow(
      /do\[0\]\.params to be left out with "says"/,
    );
  });
});
