import {
  type HeldRequest,
  type MockServer,
  type MockServerResponse,
  type RequestMatch,
  ShimkitError,
} from 'shimkit';
import type { ControlRequest } from './control.js';

/**
 * The holds of a `shimkit serve` (`shimkit hold` / `release`): each
 * HeldRequest by its name (`hold#<n>` unless named), in the order made,
 * forgotten at `shimkit reset` (which ends them, as `api.reset()` does).
 */
export class CliHolds {
  #holds: Array<{ name: string; held: HeldRequest; released: boolean }> = [];

  add(
    api: MockServer,
    match: Record<string, unknown> | undefined,
    options: Record<string, unknown>,
  ): string {
    const { name: given, ...holdOptions } = options;
    const name = typeof given === 'string' ? given : `hold#${this.#holds.length + 1}`;
    if (this.#holds.some((h) => h.name === name)) {
      throw new ShimkitError(
        'ERR_SHIMKIT_HOLD_NAME',
        `this mock server has a hold named ${JSON.stringify(name)} already: give --name another name (or \`shimkit reset\` the server first).`,
      );
    }
    const held = api.hold(match as RequestMatch | undefined, holdOptions);
    this.#holds.push({ name, held, released: false });
    return name;
  }

  async release(
    request: Extract<ControlRequest, { op: 'release' }>,
  ): Promise<Record<string, unknown>> {
    const hold = this.#find(request.hold);
    if (request.wait !== undefined) {
      const options =
        request.timeoutMs === undefined ? undefined : { timeoutMs: request.timeoutMs };
      if (request.wait === 'blocked') await hold.held.waitBlocked(options);
      else await hold.held.waitReceived(options);
    }
    hold.held.release(request.response as MockServerResponse | undefined);
    hold.released = true;
    return { name: hold.name, seq: hold.held.request?.seq ?? null };
  }

  clear(): void {
    this.#holds = [];
  }

  #find(which: string | undefined) {
    const names = () =>
      this.#holds.length === 0
        ? 'it has none (make one with shimkit hold D)'
        : `it has ${this.#holds.map((h) => `${h.name}${h.released ? ' (released)' : ''}`).join(', ')}`;
    if (which === undefined) {
      const next = this.#holds.find((h) => !h.released);
      if (next) return next;
      throw new ShimkitError(
        'ERR_SHIMKIT_NO_HOLD',
        `no hold to release on this mock server: ${names()}.`,
      );
    }
    const name = /^\d+$/.test(which) ? `hold#${which}` : which;
    const found = this.#holds.find((h) => h.name === name);
    if (found) return found;
    throw new ShimkitError(
      'ERR_SHIMKIT_NO_HOLD',
      `no hold named ${JSON.stringify(which)} on this mock server: ${names()}.`,
    );
  }
}
