import { connect } from 'node:net';
import { describe, expectTypeOf, it } from 'vitest';
import {
  type Address,
  type Clock,
  type ConnectionStats,
  createFrameProxy,
  createFrameReader,
  encodeFrame,
  type FaultAction,
  type FaultRule,
  FrameDecodeError,
  FrameDecoder,
  type FrameHold,
  FrameProxy,
  type FrameProxyOptions,
  type FrameProxyStats,
  FrameReader,
  type FrameRecord,
  type Framer,
  type FrameTooLargeError,
  type Framing,
  type ListenAddress,
  type ManualClock,
  manualClock,
  ProxyConnection,
  ProxyListenError,
  proxyStdio,
  type SeedFaultPlan,
  type ShimkitError,
  type StdioExit,
  type StdioProxy,
  StreamEndedError,
  type TcpAddress,
  type Way,
} from '../../src/index.js';

describe('frame proxy types', () => {
  it('createFrameProxy resolves to a disposable FrameProxy', () => {
    expectTypeOf(createFrameProxy).returns.resolves.toEqualTypeOf<FrameProxy>();
    expectTypeOf<FrameProxy['stats']>().returns.toEqualTypeOf<FrameProxyStats>();
    expectTypeOf<FrameProxy['forwarded']>().parameter(0).toEqualTypeOf<'c2s' | 's2c'>();
    expectTypeOf<FrameProxy['forwarded']>().parameter(0).toEqualTypeOf<Way>();
    expectTypeOf<FrameProxy[typeof Symbol.asyncDispose]>().toBeFunction();
    expectTypeOf<FrameProxy['ref']>().returns.toEqualTypeOf<FrameProxy>();
    expectTypeOf<FrameProxyStats['connections']>().toEqualTypeOf<ConnectionStats[]>();
  });

  it('proxy.address follows the type of listen, so net.connect(proxy.address) compiles', async () => {
    const unix = await createFrameProxy({
      listen: '/tmp/x/proxy.sock',
      upstream: '/tmp/x/up.sock',
    });
    expectTypeOf(unix).toEqualTypeOf<FrameProxy<string>>();
    expectTypeOf(unix.address).toEqualTypeOf<string>();
    connect(unix.address);

    const tcp = await createFrameProxy({ listen: { port: 0 }, upstream: { port: 8080 } });
    expectTypeOf(tcp.address).toEqualTypeOf<TcpAddress>();
    expectTypeOf(tcp.address).toEqualTypeOf<{ host: string; port: number }>();
    connect(tcp.address);

    // Unknown at compile time: the union, which a test narrows itself.
    const either = await createFrameProxy({ listen: {} as Address, upstream: '/tmp/x/up.sock' });
    expectTypeOf(either.address).toEqualTypeOf<string | TcpAddress>();
    // @ts-expect-error net.connect has no overload for the union
    connect(either.address);
    expectTypeOf<ListenAddress<string>>().toEqualTypeOf<string>();
    expectTypeOf<ListenAddress<{ host: string; port: number }>>().toEqualTypeOf<TcpAddress>();
    expectTypeOf<FrameProxyOptions<string>['listen']>().toEqualTypeOf<string>();
    // Any proxy is a FrameProxy.
    expectTypeOf(unix).toMatchTypeOf<FrameProxy>();
    expectTypeOf(tcp).toMatchTypeOf<FrameProxy>();
  });

  it('the proxy classes cannot be constructed directly; their factories are the way in', () => {
    // @ts-expect-error the constructor is private: use createFrameProxy()
    new FrameProxy();
    // @ts-expect-error the constructor is private: the proxy makes connections
    new ProxyConnection();
    // @ts-expect-error the constructor is private: use createFrameReader()
    new FrameReader();
    expectTypeOf(new FrameDecoder()).toEqualTypeOf<FrameDecoder>();
  });

  it('encodeFrame, FrameDecoder and createFrameReader are typed for client code', () => {
    expectTypeOf(encodeFrame).parameter(0).toEqualTypeOf<Uint8Array | string>();
    expectTypeOf(encodeFrame).parameter(1).toEqualTypeOf<Framing | Framer | undefined>();
    expectTypeOf(encodeFrame('{}', 'lines')).toEqualTypeOf<Buffer>();
    expectTypeOf(encodeFrame).returns.toEqualTypeOf<Buffer>();
    // @ts-expect-error not a framing
    encodeFrame('x', 'u64');
    expectTypeOf<FrameDecoder['push']>().parameter(0).toEqualTypeOf<Uint8Array>();
    expectTypeOf<FrameDecoder['push']>().returns.toEqualTypeOf<Buffer[]>();
    expectTypeOf(createFrameReader(connect('/tmp/x.sock'))).toEqualTypeOf<FrameReader>();
    expectTypeOf<FrameReader['waitForFrames']>().returns.resolves.toEqualTypeOf<Buffer[]>();
    // @ts-expect-error an unknown option
    createFrameReader(connect('/tmp/x.sock'), { framming: 'u32be' });
  });

  it('manualClock is a Clock with advance() and pending()', () => {
    const clock = manualClock();
    expectTypeOf(clock).toEqualTypeOf<ManualClock>();
    expectTypeOf(clock).toMatchTypeOf<Clock>();
    expectTypeOf(clock.advance).parameter(0).toBeNumber();
    expectTypeOf(clock.pending).returns.toBeNumber();
    expectTypeOf<FrameProxyOptions['clock']>().toEqualTypeOf<Clock | undefined>();
  });

  it('fault rules and the seed plan are typed', () => {
    expectTypeOf<FaultRule['action']>().toEqualTypeOf<FaultAction>();
    expectTypeOf<'drop'>().toMatchTypeOf<FaultAction>();
    // @ts-expect-error not an action
    const bad: FaultRule = { action: 'explode' };
    expectTypeOf(bad).toEqualTypeOf<FaultRule>();
    expectTypeOf<SeedFaultPlan>().toHaveProperty('drop_frame');
    expectTypeOf<{ direction: 'c2s'; drop_frame: 2 }>().toMatchTypeOf<SeedFaultPlan>();
  });

  it('proxy errors are ShimkitErrors with their details', () => {
    expectTypeOf<FrameTooLargeError>().toMatchTypeOf<ShimkitError>();
    expectTypeOf<FrameTooLargeError['declaredLength']>().toBeNumber();
    expectTypeOf<FrameTooLargeError['direction']>().toEqualTypeOf<'c2s' | 's2c'>();
    expectTypeOf<ProxyListenError>().toMatchTypeOf<ShimkitError>();
    expectTypeOf<ProxyListenError['errno']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<FrameDecodeError['frame']>().toBeNumber();
    expectTypeOf<StreamEndedError['received']>().toBeNumber();
    expectTypeOf(
      new FrameDecodeError({ frame: 1, declaredLength: 9, maxFrameBytes: 8 }),
    ).toMatchTypeOf<ShimkitError>();
    expectTypeOf(StreamEndedError).toBeConstructibleWith('ended', 1, 2);
    expectTypeOf(ProxyListenError).toBeConstructibleWith('msg', '/tmp/p.sock', 'ENOENT', undefined);
  });

  it('holds, records, Framers and proxyStdio are typed', () => {
    expectTypeOf<FrameProxy['hold']>().returns.toEqualTypeOf<FrameHold>();
    expectTypeOf<FrameHold['waitHeld']>().returns.resolves.toBeVoid();
    expectTypeOf<FrameProxy['records']>().returns.toEqualTypeOf<FrameRecord[]>();
    expectTypeOf<FrameProxy['timeline']>().returns.toBeString();
    expectTypeOf<FrameRecord['fault']>().toEqualTypeOf<FaultAction | 'hold' | undefined>();
    expectTypeOf(proxyStdio).returns.resolves.toEqualTypeOf<StdioProxy>();
    expectTypeOf<StdioProxy['exited']>().resolves.toEqualTypeOf<StdioExit>();
    expectTypeOf<StdioProxy['proxy']>().toEqualTypeOf<FrameProxy<string>>();
    const framer: Framer = {
      decode: (b) => ({ frames: [b], rest: b.subarray(0, 0) }),
      encode: (f) => f,
    };
    expectTypeOf(encodeFrame('x', framer)).toEqualTypeOf<Buffer>();
    const hold = (proxy: FrameProxy) =>
      // @ts-expect-error a hold takes selectors only, not an action
      proxy.hold({ action: 'drop' });
    expectTypeOf(hold).toBeFunction();
    // @ts-expect-error not a framing name
    createFrameProxy({ listen: '/tmp/p.sock', upstream: '/tmp/s.sock', framing: 'json' });
  });
});
