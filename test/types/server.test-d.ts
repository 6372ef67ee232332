import { describe, expectTypeOf, it } from 'vitest';
import {
  any,
  createMockServer,
  type Expectation,
  type HeldRequest,
  type LoggedRequest,
  type MockServer,
  type MockServerOptions,
  type MockServerResponse,
  type RequestMatch,
  type ResponseOptions,
  type WireReplyOptions,
} from '../../src/index.js';

describe('createMockServer types (HT-01, HT-03, HT-06, HT-07)', () => {
  it('HT-01 createMockServer resolves to an async-disposable MockServer', () => {
    expectTypeOf(createMockServer).returns.toEqualTypeOf<Promise<MockServer>>();
    expectTypeOf<MockServer>().toMatchTypeOf<AsyncDisposable>();
    expectTypeOf<MockServer['url']>().toEqualTypeOf<string>();
    expectTypeOf<MockServer['socketPath']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<MockServer['env']>().returns.toEqualTypeOf<Record<string, string>>();
  });

  it('HT-15 requireToken is a boolean option; token is a string or undefined', () => {
    expectTypeOf<{ requireToken: true }>().toMatchTypeOf<MockServerOptions>();
    expectTypeOf<{ requireToken: 'yes' }>().not.toMatchTypeOf<MockServerOptions>();
    expectTypeOf<MockServer['token']>().toEqualTypeOf<string | undefined>();
  });

  it('HT-03 options and matches take what the SPEC names', () => {
    expectTypeOf<{ strict: true; unmatched: 'fail' }>().toMatchTypeOf<MockServerOptions>();
    expectTypeOf<{ listen: { path: string } }>().toMatchTypeOf<MockServerOptions>();
    expectTypeOf<{
      unmatched: (r: LoggedRequest) => { status: number };
    }>().toMatchTypeOf<MockServerOptions>();
    const match: RequestMatch = {
      method: 'POST',
      path: /^\/v1\//,
      query: { a: 'b', c: any() },
      headers: { authorization: /Bearer/ },
      json: { stream: true },
      predicate: (request) => request.json !== undefined,
    };
    expectTypeOf(match).toMatchTypeOf<RequestMatch>();
    // @ts-expect-error a method is a string
    const bad: RequestMatch = { method: 1 };
    void bad;
  });

  it('HT-06 expect() gives an Expectation, hold() a HeldRequest, and their waits resolve as named', () => {
    expectTypeOf<MockServer['expect']>().returns.toEqualTypeOf<Expectation>();
    expectTypeOf<MockServer['hold']>().returns.toEqualTypeOf<HeldRequest>();
    expectTypeOf<Expectation['waitSatisfied']>().returns.toEqualTypeOf<Promise<void>>();
    expectTypeOf<HeldRequest['waitBlocked']>().returns.toEqualTypeOf<Promise<LoggedRequest>>();
    expectTypeOf<MockServer['waitForRequests']>().returns.toEqualTypeOf<Promise<LoggedRequest[]>>();
  });

  it('HT-07 a log entry has claimedBy and the response fields', () => {
    expectTypeOf<LoggedRequest['claimedBy']>().toEqualTypeOf<string | null>();
    expectTypeOf<LoggedRequest['response']['endedBy']>().toEqualTypeOf<
      'complete' | 'cut' | 'client-abort' | undefined
    >();
    expectTypeOf<LoggedRequest['query']>().toEqualTypeOf<Record<string, string>>();
    expectTypeOf<LoggedRequest['response']['requeued']>().toEqualTypeOf<boolean | undefined>();
  });

  it('HT-16 retryable is a boolean field of a response, and a builder option', () => {
    expectTypeOf<MockServerResponse['retryable']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<{ retryable: true }>().toMatchTypeOf<ResponseOptions>();
    expectTypeOf<{ retryable: true; delayMs: 5 }>().toMatchTypeOf<WireReplyOptions>();
    // @ts-expect-error retryable is true or false
    const bad: MockServerResponse = { retryable: 'yes' };
    void bad;
  });

  it("HT-18 fifoMethods is a list of methods or 'any'", () => {
    expectTypeOf<{ fifoMethods: ['GET', 'HEAD'] }>().toMatchTypeOf<MockServerOptions>();
    expectTypeOf<{ fifoMethods: 'any' }>().toMatchTypeOf<MockServerOptions>();
    // @ts-expect-error 'all' is not an accepted value
    const bad: MockServerOptions = { fifoMethods: 'all' };
    void bad;
  });

  it('HT-14 the body budget: an option, and bodyDropped on an entry whose body it dropped', () => {
    expectTypeOf<{ logBodyBudgetBytes: number }>().toMatchTypeOf<MockServerOptions>();
    expectTypeOf<{ unmatchedAdvice: string }>().toMatchTypeOf<MockServerOptions>();
    expectTypeOf<LoggedRequest['bodyDropped']>().toEqualTypeOf<true | undefined>();
  });
});
