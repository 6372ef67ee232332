import { sep } from 'node:path';
import type { ColdHalf } from './cold-half.js';
import type * as Faulted from './faulted.js';
import type * as Routing from './routing.js';

let loaded: ColdHalf | undefined;
let routingLoaded: typeof Routing | undefined;
let faultedLoaded: typeof Faulted | undefined;

/** The runner's cold half (./cold.ts), loaded the first time a call needs it. */
export function cold(): ColdHalf {
  // A computed path, so the bundler keeps it a runtime require of the other file.
  const file = `${__dirname}${sep}runner-cold.cjs`;
  loaded ??= require(file) as ColdHalf;
  return loaded;
}

/** The routed claim (./routing.ts), loaded by calls of a routed generation only. */
export function routing(): typeof Routing {
  const file = `${__dirname}${sep}runner-route.cjs`;
  routingLoaded ??= require(file) as typeof Routing;
  return routingLoaded;
}

/** A passthrough with a frame proxy (./faulted.ts), loaded by the calls that have one. */
export function faultedPassthrough(): typeof Faulted {
  const file = `${__dirname}${sep}runner-proxy.cjs`;
  faultedLoaded ??= require(file) as typeof Faulted;
  return faultedLoaded;
}
