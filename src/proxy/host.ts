import type { EventEmitter } from 'node:events';
import type { ConnectionHost } from './connection.js';
import type { Tally } from './counters.js';
import { FrameMalformedError, FrameTooLargeError } from './errors.js';
import { type FaultAction, matchRule, mayHit, type Rule, type Way } from './faults.js';
import type { FaultEvent, FrameEvent } from './proxy-options.js';
import type { Recorder } from './recorder.js';
import type { ProxySettings } from './settings.js';

/**
 * @internal What a connection's host reads from its FrameProxy, when it
 * needs it: the rules and holds change while connections are open.
 */
export interface HostSide {
  readonly settings: ProxySettings;
  readonly total: Tally;
  readonly rules: Rule[];
  readonly holds: Rule[];
  /** Whether anyone listens to `'frame'`. */
  readonly frameListeners: boolean;
  /** The clock's time, as the proxy reads it. */
  now(): number;
  /** When the proxy started, on that time. */
  readonly started: number;
  /** Keep an error, and emit it as `'error'` when someone listens. */
  report(error: Error): void;
  /** That way of that connection can carry nothing more. */
  wayDone(connection: number, way: Way): void;
}

/**
 * @internal The ConnectionHost a FrameProxy hands each connection: its
 * settings, and the callbacks that match rules and report to the proxy
 * (`events` is the proxy, for its `'record'`, `'fault'` and `'frame'` events).
 */
export function connectionHost(events: EventEmitter, proxy: HostSide): ConnectionHost {
  const { clock, framing, maxFrameBytes, seed, queueLimitBytes, bandwidth } = proxy.settings;
  return {
    clock,
    framing,
    maxFrameBytes,
    seed,
    outboxLimit: queueLimitBytes,
    bandwidth,
    total: proxy.total,
    // A hold comes first: a held frame is not faulted.
    match: (connection: number, way: Way, frame: number) =>
      (proxy.holds.length > 0 ? matchRule(proxy.holds, way, connection, frame, seed) : undefined) ??
      matchRule(proxy.rules, way, connection, frame, seed),
    mayHit: (connection: number, way: Way) =>
      mayHit(proxy.rules, way, connection) || mayHit(proxy.holds, way, connection),
    recordBytes: proxy.settings.recorder?.maxBodyBytes ?? 0,
    record: proxy.settings.recorder
      ? (connection, way, frame, body, length, rule, arrived) => {
          const recorder = proxy.settings.recorder as Recorder;
          const at = proxy.now() - proxy.started;
          const record = recorder.add(at, connection, way, frame, body, length, rule, arrived);
          if (events.listenerCount('record') > 0) events.emit('record', record);
        }
      : undefined,
    tooLarge: (
      connection: number,
      way: Way,
      frame: number,
      declaredLength: number,
      atLeast?: boolean,
    ) =>
      proxy.report(
        new FrameTooLargeError({
          connection,
          direction: way,
          frame,
          declaredLength,
          atLeast,
          maxFrameBytes,
        }),
      ),
    malformed: (connection: number, way: Way, frame: number, reason: string) =>
      proxy.report(
        new FrameMalformedError({
          connection,
          direction: way,
          frame,
          framing: framing.name,
          reason,
        }),
      ),
    wayDone: (connection: number, way: Way) => proxy.wayDone(connection, way),
    faulted: (connection: number, way: Way, frame: number, action: FaultAction) => {
      if (events.listenerCount('fault') > 0) {
        events.emit('fault', { connection, direction: way, frame, action } satisfies FaultEvent);
      }
    },
    get onFrame() {
      if (!proxy.frameListeners) return undefined;
      return (connection: number, direction: Way, frame: number, length: number) =>
        events.emit('frame', { connection, direction, frame, length } satisfies FrameEvent);
    },
  };
}
