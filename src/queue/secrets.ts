/**
 * What counts as a secret (SPEC SP-03). Shared by the runner (`recordEnv: true`
 * leaves these values out) and the sandbox diagnostics (they print redacted).
 */

/** Env keys that look like credentials: `*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*AUTH*`, any case. */
export const SECRET_KEY_PATTERN = /KEY|TOKEN|SECRET|PASSWORD|AUTH/i;

/** Shown in place of a redacted value. */
export const REDACTED = '[redacted]';
