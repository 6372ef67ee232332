/**
 * The routed claim (requirement MB-13), bundled apart (`dist/runner-route.cjs`)
 * and loaded only by calls of a routed generation: smaller than the cold
 * half, which a routed call that is served normally never needs.
 */
export { claimRouted } from '../queue/route-claim.js';
