/** Which env values a call records (`recordEnv`). */
import { REDACTED, SECRET_KEY_PATTERN } from '../queue/secrets.js';

export function pickEnv(
  env: NodeJS.ProcessEnv,
  recordEnv: boolean | string[],
): Record<string, string> | undefined {
  if (recordEnv === false) return undefined;
  const picked: Record<string, string> = {};
  if (recordEnv === true) {
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined) continue;
      picked[key] = SECRET_KEY_PATTERN.test(key) ? REDACTED : value;
    }
  } else {
    for (const key of recordEnv) {
      const value = env[key];
      if (value !== undefined) picked[key] = value;
    }
  }
  return picked;
}
