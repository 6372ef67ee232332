import {
  type Address,
  createFrameProxy,
  type FaultEvent,
  type FaultRule,
  type FrameEvent,
  type FrameProxyOptions,
  type FrameRecord,
  type ProxyConnection,
} from 'shimkit';
import { parseArgs } from './args.js';
import type { Command } from './command.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { FAULT_FLAGS, parseAddress, parseFault } from './faults.js';
import { commandModule } from './run.js';
import { plural } from './words.js';

/** `shimkit proxy`: the frame proxy in the foreground, one line per frame and fault. */
export const proxyCommand: Command = {
  name: 'proxy',
  usage:
    'shimkit proxy --listen ADDR --upstream ADDR [--framing F] [--drop c2s:3] [--delay s2c:*:50ms] ...',
  help: `Run a frame proxy between clients and a server until Ctrl-C (SIGINT), SIGTERM or SIGHUP,
printing one line per connection, frame and fault as they happen. When it is ready it
prints "listening on ADDR"; on one of those signals it closes every connection, prints a
final counters line and exits 0.

Addresses: an absolute or relative Unix socket path, HOST:PORT, :PORT or PORT (TCP on
127.0.0.1; port 0 picks a free one, printed in the "listening" line).

Options:
  --listen ADDR           where clients connect (required)
  --upstream ADDR         the real server (required)
  --framing NAME          how frames are delimited (default u32be; the library's list applies)
  --max-frame-bytes N     a header declaring more severs that connection (default 64 MiB)
  --seed N                seed for --probability and corrupt positions (default 1)
  --probability P         each fault rule hits a targeted frame with chance P (0-1)
  --per-connection        one --probability draw per connection (all its frames, or none)
  --bandwidth [DIR:]N     pace a direction (or both) to N bytes/s (suffix k or m: KiB, MiB)
  --timeline              one timeline line per frame, with its start and the fault
                          ("   12.3 ms  c2s #3  conn 1  42 B  {"id":3…}  DROPPED")
  --json                  one JSON object per line instead of text
  --quiet-frames          print faults, connections and errors, not every frame

Faults (each repeatable): --ACTION DIR[:FRAMES][:ARG][@CONNECTION]
  DIR is c2s (client to server), s2c or both; FRAMES is N, N-M, N-, * (every, the
  default) or */K (every K-th), counted from 1 per connection per direction;
  @CONNECTION limits the rule to the Nth accepted connection.
  --drop DIR[:FRAMES]               drop the frame(s)
  --duplicate DIR[:FRAMES]          send them twice
  --delay DIR[:FRAMES]:DELAY        hold them DELAY (50, 50ms, 1.5s); order is kept
  --corrupt DIR[:FRAMES][:BITS]     flip BITS body bits (default 1)
  --truncate DIR[:FRAMES][:BYTES]   keep only BYTES of the body (default half)
  --reorder DIR[:FRAMES]            swap with the next frame
  --sever-mid-frame DIR[:FRAMES][:BYTES]  send part of the frame, then close both sides
  --sever-after DIR[:FRAMES]        close both sides after that frame
  --reset DIR[:FRAMES]              reset the connection (RST) at that frame
  --slice DIR[:FRAMES][:BYTES]      write them in BYTES-sized pieces (default 1), 1 ms apart
  --sever-after takes fin (default) or rst as its last part: --sever-after c2s:10:rst

Examples:
  shimkit proxy --listen /tmp/p.sock --upstream /tmp/server.sock --drop c2s:3
  shimkit proxy --listen :0 --upstream 127.0.0.1:8080 --delay s2c:*:50ms --json
  shimkit proxy --listen ./p.sock --upstream ./s.sock --sever-after c2s:10 --framing u16be
  shimkit proxy --listen :7000 --upstream :7001 --drop both --probability 0.1 --seed 42
  shimkit proxy --listen ./p.sock --upstream ./s.sock --framing lines --timeline --drop s2c:2
  shimkit proxy --listen ./p.sock --upstream ./s.sock --bandwidth s2c:64k --slice c2s:1:3`,
  async run(argv) {
    const specs = {
      listen: { kind: 'value', value: 'ADDR' },
      upstream: { kind: 'value', value: 'ADDR' },
      framing: { kind: 'value', value: 'NAME' },
      'max-frame-bytes': { kind: 'value', value: 'N' },
      seed: { kind: 'value', value: 'N' },
      probability: { kind: 'value', value: 'P' },
      bandwidth: { kind: 'list', value: '[DIR:]N' },
      'per-connection': { kind: 'switch' },
      timeline: { kind: 'switch' },
      json: { kind: 'switch' },
      'quiet-frames': { kind: 'switch' },
      ...Object.fromEntries(
        Object.keys(FAULT_FLAGS).map((f) => [f, { kind: 'list', value: 'DIR:FRAMES' }]),
      ),
    } as const;
    const args = parseArgs('proxy', argv, specs);
    if (args.positionals.length > 0) {
      throw new UsageError(
        'proxy',
        `unexpected argument ${JSON.stringify(args.positionals[0])}: addresses go after --listen and --upstream.`,
      );
    }
    const listenText = args.values.get('listen');
    const upstreamText = args.values.get('upstream');
    if (listenText === undefined || upstreamText === undefined) {
      throw new UsageError(
        'proxy',
        `missing ${listenText === undefined ? '--listen' : '--upstream'} ADDR (a socket path or HOST:PORT).`,
      );
    }
    const faults: FaultRule[] = [];
    for (const { flag, value } of args.order) {
      if (Object.hasOwn(FAULT_FLAGS, flag)) faults.push(parseFault(flag, value as string));
    }
    const probability = args.values.get('probability');
    if (probability !== undefined) {
      const p = Number(probability);
      if (probability.trim() === '' || !(p >= 0 && p <= 1)) {
        throw new UsageError(
          'proxy',
          `--probability takes a number from 0 to 1, got ${JSON.stringify(probability)}.`,
        );
      }
      if (faults.length === 0)
        throw new UsageError(
          'proxy',
          '--probability applies to fault rules: add one, e.g. --drop c2s.',
        );
      for (const rule of faults) rule.probability = p;
    }
    if (args.switches.has('per-connection')) {
      if (probability === undefined) {
        throw new UsageError('proxy', '--per-connection goes with --probability P.');
      }
      for (const rule of faults) rule.per = 'connection';
    }
    const options: FrameProxyOptions<Address> = {
      listen: parseAddress('--listen', listenText),
      upstream: parseAddress('--upstream', upstreamText),
      faults,
    };
    const framing = args.values.get('framing');
    if (framing !== undefined) options.framing = framing as FrameProxyOptions['framing'];
    const seed = args.values.get('seed');
    if (seed !== undefined) options.seed = integer('--seed', seed);
    const max = args.values.get('max-frame-bytes');
    if (max !== undefined) options.maxFrameBytes = integer('--max-frame-bytes', max);
    const bandwidth = args.order
      .filter((o) => o.flag === 'bandwidth')
      .map((o) => o.value as string);
    if (bandwidth.length > 0) options.bandwidth = parseBandwidth(bandwidth);
    const timeline = args.switches.has('timeline');
    if (timeline) options.record = { maxFrames: 1, maxBodyBytes: 160 };
    return serve(options, args.switches.has('json'), args.switches.has('quiet-frames'), timeline);
  },
};

/** `--bandwidth N` (both ways) or `--bandwidth c2s:N` (repeatable); N in bytes/s, `k`/`m` for KiB/MiB. */
function parseBandwidth(values: string[]): { c2s?: number; s2c?: number } {
  const out: { c2s?: number; s2c?: number } = {};
  for (const value of values) {
    const m = /^(?:(c2s|s2c|both):)?(\d+(?:\.\d+)?)([km]?)$/i.exec(value.trim());
    if (!m) {
      throw new UsageError(
        'proxy',
        `--bandwidth ${JSON.stringify(value)}: write [DIR:]N in bytes/s, e.g. --bandwidth 65536, --bandwidth s2c:64k.`,
      );
    }
    const unit = (m[3] ?? '').toLowerCase();
    const rate = Number(m[2]) * (unit === 'k' ? 1024 : unit === 'm' ? 1024 * 1024 : 1);
    if (!(rate > 0)) throw new UsageError('proxy', '--bandwidth must be more than 0 bytes/s.');
    const way = (m[1] ?? 'both').toLowerCase();
    if (way !== 's2c') out.c2s = rate;
    if (way !== 'c2s') out.s2c = rate;
  }
  return out;
}

function integer(flag: string, text: string): number {
  if (!/^-?\d+$/.test(text))
    throw new UsageError('proxy', `${flag} takes an integer, got ${JSON.stringify(text)}.`);
  return Number(text);
}

const show = (address: Address) =>
  typeof address === 'string' ? address : `${address.host ?? '127.0.0.1'}:${address.port}`;

async function serve(
  options: FrameProxyOptions<Address>,
  json: boolean,
  quietFrames: boolean,
  timeline: boolean,
): Promise<number> {
  const out = (event: Record<string, unknown>, text: string) =>
    process.stdout.write(`${json ? JSON.stringify(event) : text}\n`);
  const proxy = await createFrameProxy(options);
  proxy.ref(); // this process is the proxy: it runs until a signal
  proxy.on('connection', (c: ProxyConnection) =>
    out({ event: 'connection', connection: c.id }, `conn ${c.id} open`),
  );
  if (timeline) {
    // Each frame as a timeline line: its time, start and fault in one (faults get no line of their own).
    proxy.on('record', (r: FrameRecord) =>
      out(
        {
          event: 'record',
          at: Number(r.at.toFixed(3)),
          connection: r.connection,
          direction: r.direction,
          frame: r.frame,
          length: r.length,
          fault: r.fault,
          line: r.line,
        },
        r.line,
      ),
    );
  } else if (!quietFrames) {
    proxy.on('frame', (f: FrameEvent) =>
      out(
        { event: 'frame', ...f },
        `conn ${f.connection} ${f.direction} frame ${f.frame} (${plural(f.length, 'byte')})`,
      ),
    );
  }
  if (!timeline) {
    proxy.on('fault', (f: FaultEvent) =>
      out(
        { event: 'fault', ...f },
        `conn ${f.connection} ${f.direction} frame ${f.frame} FAULT ${f.action}`,
      ),
    );
  }
  proxy.on('error', (error: Error & { code?: string }) =>
    out(
      { event: 'error', code: error.code, name: error.name, message: error.message },
      `error: ${error.message}`,
    ),
  );
  const framing = options.framing ?? 'u32be';
  out(
    {
      event: 'listening',
      address: proxy.address,
      upstream: options.upstream,
      framing,
      faults: options.faults,
    },
    `listening on ${show(proxy.address)} -> upstream ${show(options.upstream)} (framing ${framing}, ${(options.faults as FaultRule[]).length} fault rules)`,
  );
  await new Promise<void>((done) => {
    // SIGHUP too: the terminal it runs in was closed.
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
    const stop = () => {
      for (const signal of signals) process.off(signal, stop);
      done();
    };
    for (const signal of signals) process.on(signal, stop);
  });
  await proxy.close();
  const { c2s, s2c, faults, connections } = proxy.stats();
  const faultText =
    Object.entries(faults)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ') || 'none';
  out(
    { event: 'closed', c2s, s2c, faults, connections: connections.length },
    `closed: c2s ${c2s.frames} frames ${c2s.bytes} bytes, s2c ${s2c.frames} frames ${s2c.bytes} bytes, ${connections.length} connections, faults ${faultText}`,
  );
  return ExitCode.ok;
}

export const { exec, help } = commandModule(proxyCommand);
