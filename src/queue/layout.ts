import { join } from 'node:path';

/**
 * Where everything lives in a mock's private state dir (0700). One layout,
 * read by the runner in every call and written by the test process.
 *
 *   <state>/config.json        mock options (timeoutMs, onExhausted, …)
 *   <state>/current            name of the live generation, e.g. "g1"
 *   <state>/g1/queue.jsonl     one scripted response per line, FIFO, 1-based
 *   <state>/g1/lock            the queue lock: the owner's pid
 *   <state>/g1/cursor          hint "<next call> <next response>", only ever read under the lock
 *   <state>/g1/claims/<n>      claim marker of response n, holding the claiming call's number
 *   <state>/g1/calls/<n>.json  record of call n
 *
 * `reset()` builds the next generation beside the live one and switches
 * `current`, so a call still in flight finishes inside the old generation.
 * Names starting with "." are temp files that readers ignore.
 */
export const CONFIG_FILE = 'config.json';
export const CURRENT_FILE = 'current';

export const configPath = (stateDir: string) => join(stateDir, CONFIG_FILE);
export const currentPath = (stateDir: string) => join(stateDir, CURRENT_FILE);
export const queuePath = (genDir: string) => join(genDir, 'queue.jsonl');
export const lockPath = (genDir: string) => join(genDir, 'lock');
export const cursorPath = (genDir: string) => join(genDir, 'cursor');
export const claimsDir = (genDir: string) => join(genDir, 'claims');
export const claimPath = (genDir: string, n: number) => join(genDir, 'claims', String(n));
export const callsDir = (genDir: string) => join(genDir, 'calls');
export const callPath = (genDir: string, n: number) => join(genDir, 'calls', `${n}.json`);

/** A generation dir name is `g` followed by a positive integer. */
export const GENERATION_PATTERN = /^g[1-9][0-9]*$/;
/** A call record file name. */
export const CALL_FILE_PATTERN = /^([1-9][0-9]*)\.json$/;
/** A claim marker file name. */
export const CLAIM_FILE_PATTERN = /^[1-9][0-9]*$/;
