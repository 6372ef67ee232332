/**
 * The parts of the runner that most calls never need: full validation
 * messages, diagnostics, redaction, raw argv, stdin capture. Bundled apart
 * (`dist/runner-cold.cjs`) and loaded on first use (see ./lazy.ts), so a
 * plain call parses only the small hot file: Node compiles every byte it
 * loads, and at ~25 ms a call that is a measurable share.
 */

export { redactEnv } from '../internal/secrets.js';
export { stateError } from '../queue/errors.js';
export { responseProblem } from '../queue/response-schema.js';
export { closestMiss } from '../queue/route-claim.js';
export { deletedCwd, rawArgv } from './argv.js';
export {
  describeFailure,
  label,
  serveFailure,
  timeoutMessage,
  unmatchedMessage,
  type Waiting,
} from './diagnostics.js';
export { endRecord, recordFailed } from './record-failed.js';
export { render } from './render.js';
export { restOfResponse, resumeClaim } from './resume.js';
export { wait } from './wait.js';
