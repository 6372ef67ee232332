import { DisposedError } from '../internal/errors.js';
import type { Mirror } from './mirror.js';
import type { ServerSettings } from './options.js';
import type { ControlMessage } from './protocol.js';
import type { WireHttpResponse } from './types.js';
import type { Waits } from './waits.js';

/** What a MockServer's parts (expectations, holds, asks, reports) share; not exported from src/index.ts. */
export interface ServerContext {
  /** `mock server http://127.0.0.1:41234`, for messages. */
  readonly name: string;
  readonly settings: ServerSettings;
  readonly mirror: Mirror;
  readonly waits: Waits;
  /** Whether dispose() was called. */
  readonly disposed: boolean;
  /**
   * Apply the worker's events so far; throw a kept worker failure, and with
   * `scripting` a DisposedError after dispose().
   */
  sync(scripting: boolean): void;
  post(message: ControlMessage): void;
  /** A response checked for this server (`toWireResponse`, and no reset — `rst`, `resetBeforeHeaders` — on a Unix socket). */
  checkResponse(value: unknown, where: string): WireHttpResponse;
}

/**
 * Why a wait on `what` (of script generation `gen`) cannot begin: the
 * server was disposed, or `reset()` ended that generation (`byReset` says
 * what became of it). Undefined when it can wait.
 */
export function goneError(
  ctx: ServerContext,
  gen: number,
  what: string,
  byReset: string,
): DisposedError | undefined {
  if (ctx.disposed) return new DisposedError(`${ctx.name}: ${what}`);
  if (gen !== ctx.mirror.gen) return new DisposedError(`${ctx.name}: ${what}`, byReset);
  return undefined;
}
