// manualClock(): the public fake clock for the proxy's `clock` option (SPEC PX-12).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createFrameProxy,
  createFrameReader,
  encodeFrame,
  InvalidOptionError,
  type ManualClock,
  manualClock,
} from '../../src/index.js';
import { frameServer } from '../helpers/frames.js';
import { testDir } from '../helpers/index.js';
import { openClient } from '../helpers/proxy.js';

describe('manualClock', () => {
  it('PX-12 time moves only on advance(); due timers run in due order, ties in the order they were set', () => {
    const clock: ManualClock = manualClock();
    const ran: string[] = [];
    clock.setTimeout(() => ran.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => ran.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => ran.push(`a2@${clock.now()}`), 10);
    const cancelled = clock.setTimeout(() => ran.push('never'), 5);
    clock.clearTimeout(cancelled);
    clock.clearTimeout('not a handle'); // ignored
    expect(clock.now()).toBe(0);
    expect(clock.pending()).toBe(3);

    clock.advance(9);
    expect(ran).toEqual([]);
    expect(clock.now()).toBe(9);
    clock.advance(15);
    expect(ran).toEqual(['a@10', 'a2@10', 'b@20']);
    expect(clock.now()).toBe(24);
    expect(clock.pending()).toBe(0);
  });

  it('PX-12 a timer set by a timer runs in the same advance() if it falls due within it', () => {
    const clock = manualClock({ now: 1000 });
    const ran: number[] = [];
    clock.setTimeout(() => {
      ran.push(clock.now());
      clock.setTimeout(() => ran.push(clock.now()), 5);
      clock.setTimeout(() => ran.push(clock.now()), 50);
    }, 10);
    clock.setTimeout(() => ran.push(clock.now()), -3); // as Node: a negative delay is 0
    clock.advance(20);
    expect(ran).toEqual([1000, 1010, 1015]);
    expect(clock.pending()).toBe(1);
    clock.advance(40);
    expect(ran).toEqual([1000, 1010, 1015, 1060]);
  });

  it('PX-12 manualClock checks what it is given', () => {
    expect(() => manualClock({ now: -1 })).toThrow(
      new InvalidOptionError(
        'Expected the `now` option of manualClock() to be a number of milliseconds >= 0, got -1 (number).',
      ),
    );
    expect(() => manualClock({ start: 5 } as never)).toThrow(
      'Unknown option `start` for manualClock(). Valid options: now.',
    );
    expect(() => manualClock().advance(Number.NaN)).toThrow(
      'Expected the time passed to clock.advance() to be a number of milliseconds >= 0, got NaN (number).',
    );
  });

  it('PX-12 drives a delay fault through a real proxy: nothing moves until advance()', async () => {
    const dir = testDir();
    const server = await frameServer(dir);
    const clock = manualClock();
    await using proxy = await createFrameProxy({
      listen: join(dir, 'proxy.sock'),
      upstream: server.path,
      clock,
      faults: [{ action: 'delay', direction: 's2c', delayMs: 30_000 }],
    });
    const { socket } = await openClient(proxy.address);
    const replies = createFrameReader(socket);
    const up = await server.nextConnection();
    up.socket.write(encodeFrame('late'));
    await expect.poll(() => clock.pending()).toBe(1);
    clock.advance(29_999);
    expect(replies.frames()).toEqual([]);
    clock.advance(1);
    expect((await replies.waitForFrames(1)).map(String)).toEqual(['late']);
    expect(clock.pending()).toBe(0);
  });
});
