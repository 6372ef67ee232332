import { describe, expectTypeOf, it } from 'vitest';
import {
  any,
  type CallsAction,
  calls,
  type MockServer,
  type ParallelAction,
  type Playbook,
  type PlaybookJson,
  type PlaybookOptions,
  parallel,
  type RemainingAction,
  type SaysAction,
  says,
  type ToolCallRecord,
  type ToolResultRecord,
  type Turn,
  type TurnRecord,
  when,
} from '../../src/index.js';
import type { ToolResultExpectation } from '../../src/vitest/index.js';

describe('playbook types (PB-01, PB-03, PB-04, PB-07)', () => {
  it('PB-01 when/calls/says/parallel make actions and turns; playbook() gives a Playbook', () => {
    expectTypeOf(calls('bash', { command: 'ls' })).toEqualTypeOf<CallsAction>();
    expectTypeOf(says('Done.')).toEqualTypeOf<SaysAction>();
    expectTypeOf(parallel(calls('a'), calls('b', {}))).toEqualTypeOf<ParallelAction>();
    expectTypeOf(when('List files', [calls('bash'), says('ok')])).toEqualTypeOf<Turn>();
    expectTypeOf(when(/readme/i, [says('ok')])).toEqualTypeOf<Turn>();
    expectTypeOf(when(any(), [says('ok')])).toEqualTypeOf<Turn>();
    expectTypeOf<MockServer['playbook']>().returns.toEqualTypeOf<Playbook>();
    expectTypeOf<{
      name: string;
      match: { headers: { 'x-agent': string } };
    }>().toMatchTypeOf<PlaybookOptions>();
    // @ts-expect-error a prompt is a string, a RegExp or any()
    when(5, [says('x')]);
    // @ts-expect-error says() takes text
    says({ text: 'x' });
    // @ts-expect-error parallel() takes calls()
    parallel(says('x'));
  });

  it('PB-03 the records are typed', () => {
    expectTypeOf<Playbook['toolCalls']>().returns.toEqualTypeOf<ToolCallRecord[]>();
    expectTypeOf<Playbook['toolResultsFor']>().returns.toEqualTypeOf<ToolResultRecord[]>();
    expectTypeOf<Playbook['turns']>().returns.toEqualTypeOf<TurnRecord[]>();
    expectTypeOf<Playbook['remaining']>().returns.toEqualTypeOf<RemainingAction[]>();
    expectTypeOf<ToolResultRecord['content']>().toEqualTypeOf<unknown>();
    expectTypeOf<ToolResultRecord['isError']>().toEqualTypeOf<boolean>();
    expectTypeOf<ToolCallRecord['params']>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<Playbook['consumed']>().toEqualTypeOf<number>();
    expectTypeOf<Playbook['waitDone']>().returns.toEqualTypeOf<Promise<void>>();
    expectTypeOf<RegExp>().toMatchTypeOf<ToolResultExpectation>();
    expectTypeOf<{ text: string; isError: true }>().toMatchTypeOf<ToolResultExpectation>();
  });

  it('PB-04 .then() takes the tool result; params may be late-bound', () => {
    calls('read', { path: 'a' }).then((result) => {
      expectTypeOf(result).toEqualTypeOf<ToolResultRecord>();
    });
    expectTypeOf(calls('write', () => ({ path: 'x' }))).toEqualTypeOf<CallsAction>();
    expectTypeOf(calls('write', async () => ({ path: 'x' }))).toEqualTypeOf<CallsAction>();
    // @ts-expect-error params are an object or a function that gives one
    calls('write', 'x');
  });

  it('PB-07 the JSON form is accepted where turns are', () => {
    const json: PlaybookJson = {
      name: 'deploy',
      turns: [{ when: 'go', do: [{ calls: 'bash', params: { command: 'ls' } }, { says: 'ok' }] }],
    };
    expectTypeOf(json).toMatchTypeOf<Parameters<MockServer['playbook']>[0]>();
  });
});
